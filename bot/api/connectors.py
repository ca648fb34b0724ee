"""Connector routes (Confluence, GitHub, Google Drive, Notion): connect a source with credentials in the body
(checked against the site, then kept encrypted), list the tenant's sources (credentials
masked), list a source's folders (spaces, repositories and owners, Drive folders), attach them to an index
(a job starts), disconnect. A site that
cannot be reached is the caller's mistake when connecting (400: check the url), and the
site's when a stored source is used (502).

Any key of the tenant may list; connecting, attaching and disconnecting decide what indexes
hold (who may read each page is then Confluence's to say), so they take a key acting as its
own service user, or a key created for a workspace admin or for a user in
LORE_CONNECTOR_ADMINS. A source's base URL
passes the fetcher's address checks before Lore calls it.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from datetime import datetime
from typing import Annotated, Literal

from aiohttp import web
from pydantic import AfterValidator, BaseModel, Field, StringConstraints, field_validator, model_validator

from bot.api.auth import caller
from bot.api.bodies import json_body
from bot.api.errors import BadRequest, Forbidden, NotFound
from bot.api.jobs import job_out
from bot.api.routes import MAX_ID, Reply, Route
from bot.api.sources import SCHEDULE_HELP, Attached, ScheduleText, source_out
from bot.api.state import state
from bot.chat import messages
from bot.chat.render import plain
from knowledge import ConnectorUnavailable, Credentials, FolderSpec, NotConnected, Schedule, connector_kind
from storage.access import Action, allowed
from storage.records import ConnectionRef
from storage.records import NotFound as RowNotFound

TAG = "connectors"
SPACE_KEY = re.compile(r"^~?[A-Za-z0-9_.-]{1,255}$")
REPOSITORY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]{0,38}(?:/[A-Za-z0-9._-]{1,100})?$")


def _space_keys(keys: list[str]) -> list[str]:
    for key in keys:
        if not SPACE_KEY.match(key):
            raise ValueError(f"“{key[:40]}” is not a space key")
    return keys


SpaceKeys = Annotated[list[str], AfterValidator(_space_keys)]


def _repositories(names: list[str]) -> list[str]:
    for name in names:
        if not REPOSITORY.match(name) or name.endswith(("/.", "/..")):
            raise ValueError(f"“{name[:60]}” is not a repository (owner/name) or an owner")
    return names


Repositories = Annotated[list[str], AfterValidator(_repositories)]
DriveFolders = list[Annotated[str, Field(min_length=1, max_length=300)]]


class GitHubOptions(BaseModel):
    """What of a GitHub repository to index (all of it by default)."""

    parts: list[Literal["docs", "issues", "pulls", "discussions"]] | None = Field(
        None,
        min_length=1,
        max_length=4,
        description="Some of docs, issues, pulls, discussions (default: all).",
    )
    include: list[Annotated[str, Field(min_length=1, max_length=200)]] | None = Field(
        None,
        max_length=50,
        description="Files to index, gitignore-style (default: the README and doc files).",
    )
    exclude: list[Annotated[str, Field(min_length=1, max_length=200)]] | None = Field(
        None,
        max_length=50,
        description="Files to leave out, gitignore-style (default: vendored folders, .github).",
    )
    closed: bool | None = Field(None, description="Index closed issues and pull requests (default: true).")

    def selection(self) -> dict[str, object]:
        return self.model_dump(exclude_none=True)


class NewConnector(BaseModel):
    kind: Literal["confluence", "github", "google-drive", "notion"] = Field(
        "confluence", description="What to connect."
    )
    url: str | None = Field(
        None,
        min_length=1,
        max_length=2048,
        description="The site's address: https://acme.atlassian.net/wiki (Confluence Cloud; required for "
        "Confluence); GitHub: https://api.github.com by default, https://HOST/api/v3 for Enterprise Server; "
        "Notion: https://api.notion.com by default.",
    )
    email: str | None = Field(
        None,
        min_length=3,
        max_length=255,
        description="Confluence Cloud: the account's email. Leave out for a Data Center token.",
    )
    token: str | None = Field(
        None,
        min_length=1,
        max_length=4096,
        description="Confluence Cloud: an API token (with `email`); Confluence Data Center: a personal access "
        "token; GitHub: a fine-grained personal access token; Notion: an internal integration's secret. Stored "
        "encrypted, never shown back.",
    )
    app_id: str | None = Field(None, pattern=r"^\d{1,20}$", description="GitHub App: the app's id.")
    installation_id: str | None = Field(
        None, pattern=r"^\d{1,20}$", description="GitHub App: the id of its installation."
    )
    private_key: str | None = Field(
        None,
        min_length=1,
        max_length=16384,
        description="GitHub App: its private key (PEM). Stored encrypted, never shown back.",
    )
    key: str | None = Field(
        None,
        min_length=2,
        max_length=16384,
        description="Google Drive, service account: its JSON key as the Google Cloud console downloaded it "
        "(with `email`: the Workspace user it acts as). Stored encrypted, never shown back.",
    )
    client_id: str | None = Field(
        None, min_length=1, max_length=255, description="Google Drive, OAuth: the client's id."
    )
    client_secret: str | None = Field(
        None, min_length=1, max_length=255, description="Google Drive, OAuth: the client's secret."
    )
    refresh_token: str | None = Field(
        None,
        min_length=1,
        max_length=2048,
        description="Google Drive, OAuth: the user's refresh token (scope drive.readonly). Stored encrypted.",
    )
    token_uri: str | None = Field(
        None,
        min_length=8,
        max_length=2048,
        description="Google Drive, OAuth: the token endpoint (default: Google's; another one only on the "
        "API's own origin, for a proxy).",
    )
    name: str | None = Field(
        None, min_length=1, max_length=120, description="What to call it (default: the host)."
    )

    @field_validator("email")
    @classmethod
    def _an_email(cls, value: str | None) -> str | None:
        if value is not None and "@" not in value:
            raise ValueError("an email address has an @")
        return value

    @field_validator("token")
    @classmethod
    def _visible(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("the token is empty")
        return value.strip() if value is not None else None

    @model_validator(mode="after")
    def _one_way_in(self) -> NewConnector:
        if self.token_uri is not None and (self.kind != "google-drive" or self.key is not None):
            raise ValueError("token_uri goes with a Google Drive OAuth client")
        if self.kind == "google-drive":
            self._google_drive_way_in()
        else:
            self._token_way_in()
        return self

    def _google_drive_way_in(self) -> None:
        """A service account's key (acting as a user), or one user's OAuth client."""
        oauth = (self.client_id, self.client_secret, self.refresh_token)
        if self.token is not None or any((self.app_id, self.installation_id, self.private_key)):
            raise ValueError(
                "Google Drive takes a service account's key, or an OAuth client: no token or app"
            )
        if (self.key is None) == (not all(oauth)) or (self.key is not None and any(oauth)):
            raise ValueError(
                "Google Drive takes a service account's key (with email: the user it acts as), or an "
                "OAuth client's client_id, client_secret and refresh_token"
            )
        if self.key is not None and self.email is None:
            raise ValueError("a service account acts as a Workspace user: give their email")

    def _token_way_in(self) -> None:
        """Confluence's, GitHub's or Notion's token, or a GitHub App's key."""
        app = (self.app_id, self.installation_id, self.private_key)
        if self.key is not None or any((self.client_id, self.client_secret, self.refresh_token)):
            raise ValueError("key, client_id, client_secret and refresh_token are for Google Drive")
        if self.kind == "confluence" and (any(app) or self.url is None or self.token is None):
            raise ValueError("Confluence takes a url and a token (with an email for Cloud), no GitHub App")
        if self.kind == "github" and self.email is not None:
            raise ValueError("GitHub takes no email")
        if self.kind == "notion" and (any(app) or self.email is not None or self.token is None):
            raise ValueError(
                "Notion takes an internal integration's token (and a url), no email or GitHub App"
            )
        if self.kind == "github" and (self.token is None) == (not all(app)):
            raise ValueError(
                "GitHub takes a token, or a GitHub App's app_id, installation_id and private_key"
            )

    def credentials(self) -> Credentials:
        """ValueError when a Google key is not one (its message says why)."""
        if (read := connector_kind(self.kind).read_credentials) is not None:
            given = {
                "key": self.key,
                "act_as": self.email,
                "client_id": self.client_id,
                "client_secret": self.client_secret,
                "refresh_token": self.refresh_token,
                "token_uri": self.token_uri,
            }
            return read({name: value for name, value in given.items() if value is not None})
        if self.token is None:
            return Credentials(
                self.private_key or "", app_id=self.app_id, installation_id=self.installation_id
            )
        return Credentials(self.token, self.email)


class AttachmentOut(BaseModel):
    source_id: int = Field(description="The attachment, as listed under the index's sources.")
    index: str
    folders: list[str] = Field(description="Space keys, or SPACE/page id for a page tree.")
    schedule: str
    last_sync_at: datetime | None
    last_full_sync_at: datetime | None


class ConnectorOut(BaseModel):
    id: int
    kind: str
    name: str
    base_url: str
    credentials: str = Field(description="Masked: the account, and the token's last 4 characters at most.")
    created_at: datetime
    attachments: list[AttachmentOut] = Field(description="The indexes it fills that this key may see.")


class Connected(ConnectorOut):
    account: str = Field(description="Who the site says the credentials belong to.")


class ConnectorList(BaseModel):
    connectors: list[ConnectorOut]


class SpaceOut(BaseModel):
    key: str
    name: str
    type: str
    url: str | None


class SpaceList(BaseModel):
    spaces: list[SpaceOut]


NotionFolder = Annotated[str, StringConstraints(min_length=1, max_length=2048, strip_whitespace=True)]


class AttachSpaces(BaseModel):
    index: str = Field(
        min_length=1, max_length=80, description="The index to fill; a shared one is created if new."
    )
    spaces: SpaceKeys | None = Field(
        None, min_length=1, max_length=50, description="Confluence: space keys, e.g. ENG."
    )
    page: str | None = Field(
        None,
        pattern=r"^\d{1,20}$",
        description="Confluence: only this page and its descendants (with exactly one space).",
    )
    repositories: Repositories | None = Field(
        None,
        min_length=1,
        max_length=50,
        description="GitHub: repositories (owner/name), or owners for every repository of theirs.",
    )
    options: GitHubOptions | None = Field(None, description="GitHub: what of the repositories to index.")
    drive_folders: DriveFolders | None = Field(
        None,
        min_length=1,
        max_length=50,
        description="Google Drive: folders (a link, an id or a name), shared drives' ids, my-drive, shared-with-me.",
    )
    link_sharing: Literal["domain", "public"] | None = Field(
        None,
        description="Google Drive: who may read a file shared with anyone who has its link: the account's "
        "domain (the default) or whoever may read the index.",
    )
    notion: list[NotionFolder] | None = Field(
        None,
        min_length=1,
        max_length=50,
        description="Notion: `workspace` (everything shared with the integration), or pages (each with the "
        "pages under it) and databases (their rows), by link or id.",
    )
    schedule: ScheduleText = Field("daily", description="How often to sync: " + SCHEDULE_HELP)

    def folders(self, kind: str) -> list[FolderSpec]:
        if (self.drive_folders is not None or self.link_sharing is not None) != (kind == "google-drive"):
            raise BadRequest("Invalid request: drive_folders: a Google Drive connector takes drive_folders.")
        if kind == "notion":
            return self._notion_folders()
        if self.notion is not None:
            raise BadRequest("Invalid request: notion: only a Notion connector takes `notion`.")
        if kind == "google-drive":
            return self._drive_folders()
        if kind == "github":
            return self._repositories()
        return self._spaces()

    def _notion_folders(self) -> list[FolderSpec]:
        given = (self.spaces, self.page, self.repositories, self.options)
        if any(g is not None for g in given) or not self.notion:
            raise BadRequest("Invalid request: notion: a Notion connector takes `notion` (pages, databases).")
        try:
            return [connector_kind("notion").parse_folder(text) for text in self.notion]
        except ValueError as exc:
            raise BadRequest(f"Invalid request: notion: {exc}") from None

    def _drive_folders(self) -> list[FolderSpec]:
        if self.spaces is not None or self.page is not None or self.repositories or self.options:
            raise BadRequest("Invalid request: drive_folders: a Google Drive connector takes drive_folders.")
        try:
            return [connector_kind("google-drive").parse_folder(name) for name in self.drive_folders or []]
        except ValueError as exc:
            raise BadRequest(f"Invalid request: drive_folders: {exc}") from None

    def _repositories(self) -> list[FolderSpec]:
        if self.spaces is not None or self.page is not None or not self.repositories:
            raise BadRequest("Invalid request: repositories: a GitHub connector takes repositories.")
        return [connector_kind("github").parse_folder(name) for name in self.repositories]

    def _spaces(self) -> list[FolderSpec]:
        if self.repositories is not None or self.options is not None or not self.spaces:
            raise BadRequest("Invalid request: spaces: a Confluence connector takes spaces (and a page).")
        if self.page is not None and len(self.spaces) != 1:
            raise BadRequest("Invalid request: page: a page tree goes with exactly one space.")
        return [FolderSpec(key, self.page) for key in self.spaces]


class Disconnected(BaseModel):
    documents_removed: int


def _may_connect(request: web.Request) -> None:
    """403 unless the key is a service key, or acts for an admin or an allowlisted user."""
    if not state(request).services.actions.connectors.allowed(caller(request).place):
        raise Forbidden(
            "Only workspace admins (or users in LORE_CONNECTOR_ADMINS) may connect sources or choose "
            "what they index; use a service key or an admin's key."
        )


async def _find(request: web.Request) -> ConnectionRef:
    connector_id = int(request.match_info["connector_id"])
    tenant = caller(request).key.tenant_id
    if connector_id <= MAX_ID:
        with contextlib.suppress(NotConnected):
            return await state(request).services.connections.get(tenant, connector_id)
    raise NotFound(f"There is no connector {connector_id}.")


async def _out(request: web.Request, connection: ConnectionRef) -> ConnectorOut:
    services, place = state(request).services, caller(request).place
    attachments = []
    for attached in await asyncio.to_thread(services.connections.repository.attachments, connection.id):
        with contextlib.suppress(RowNotFound):
            index = await asyncio.to_thread(services.indexes.get, attached.index_id)
            if allowed(Action.LIST, index.facts, place):
                attachments.append(
                    AttachmentOut(
                        source_id=attached.id,
                        index=index.name,
                        folders=attached.folders,
                        schedule=attached.schedule,
                        last_sync_at=attached.sync_cursor,
                        last_full_sync_at=attached.last_full_sync_at,
                    )
                )
    return ConnectorOut(
        id=connection.id,
        kind=connection.kind,
        name=connection.name,
        base_url=connection.base_url,
        credentials=connection.credentials_hint,
        created_at=connection.created_at,
        attachments=attachments,
    )


async def create_connector(request: web.Request) -> web.Response:
    _may_connect(request)
    body = await json_body(request, NewConnector)
    connectors = state(request).services.actions.connectors
    try:
        connected = await connectors.connect(
            caller(request).place, body.url or "", body.credentials(), kind=body.kind, name=body.name
        )
    except ValueError as exc:  # a private key that is no PEM: the caller's mistake
        raise BadRequest(f"Invalid request: {exc}.") from None
    except ConnectorUnavailable as exc:  # the address the caller gave leads nowhere
        raise BadRequest(f"{plain(messages.failed_file(str(exc)))} Check the url.") from None
    out = await _out(request, connected.connection)
    return web.json_response(
        Connected(**out.model_dump(), account=connected.account).model_dump(mode="json"), status=201
    )


async def list_connectors(request: web.Request) -> web.Response:
    connections = await state(request).services.connections.for_tenant(caller(request).key.tenant_id)
    listing = ConnectorList(connectors=[await _out(request, c) for c in connections])
    return web.json_response(listing.model_dump(mode="json"))


async def list_spaces(request: web.Request) -> web.Response:
    connection = await _find(request)
    folders = await state(request).services.connections.folders(connection)
    spaces = SpaceList(spaces=[SpaceOut(key=f.key, name=f.name, type=f.kind, url=f.url) for f in folders])
    return web.json_response(spaces.model_dump(mode="json"))


async def attach_spaces(request: web.Request) -> web.Response:
    _may_connect(request)
    connection = await _find(request)
    body = await json_body(request, AttachSpaces)
    done = await state(request).services.actions.connectors.attach(
        caller(request).place,
        connection,
        body.index,
        body.folders(connection.kind),
        schedule=Schedule.parse(body.schedule),
        selection=(
            body.options.selection()
            if body.options is not None
            else {"link_sharing": body.link_sharing}
            if body.link_sharing is not None
            else None
        ),
    )
    attached = Attached(source=await source_out(request, done.source), job=job_out(done.job, done.index))
    return web.json_response(attached.model_dump(mode="json"), status=202)


async def delete_connector(request: web.Request) -> web.Response:
    """Detach it from every index (its documents go) and forget its credentials."""
    _may_connect(request)
    removed = await state(request).services.actions.connectors.disconnect(
        caller(request).place, await _find(request)
    )
    return web.json_response(Disconnected(documents_removed=removed).model_dump(mode="json"))


CONNECTORS = "/v1/connectors"
CONNECTOR = CONNECTORS + r"/{connector_id:\d+}"

ROUTES = [
    Route(
        "POST",
        CONNECTORS,
        create_connector,
        "Connect Confluence, GitHub or Notion: the credentials are checked against it, then stored encrypted "
        "(connecting the same URL again replaces them).",
        TAG,
        {201: Reply("Connected.", Connected)},
        body=NewConnector,
    ),
    Route(
        "GET",
        CONNECTORS,
        list_connectors,
        "The tenant's connected sources, credentials masked.",
        TAG,
        {200: Reply("The connectors.", ConnectorList)},
    ),
    Route(
        "GET",
        CONNECTOR + "/spaces",
        list_spaces,
        "What the connected account can read: Confluence spaces, GitHub repositories and owners, Notion pages and databases.",
        TAG,
        {200: Reply("The spaces.", SpaceList)},
    ),
    Route(
        "POST",
        CONNECTOR + "/attach",
        attach_spaces,
        "Attach Confluence spaces (or one page tree), GitHub repositories (or owners) or Notion pages and databases to an index and start "
        "syncing them; returns the job.",
        TAG,
        {202: Reply("Attached; the sync is queued or under way.", Attached)},
        body=AttachSpaces,
    ),
    Route(
        "DELETE",
        CONNECTOR,
        delete_connector,
        "Disconnect: detach it from every index (removing its documents) and forget its credentials.",
        TAG,
        {200: Reply("Disconnected.", Disconnected)},
    ),
]
