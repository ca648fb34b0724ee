"""The Google Drive connector: Google Docs, Sheets, Slides and stored files of a folder (and
everything under it), a shared drive, My Drive, or the files shared with the account; kept
fresh by Drive's change feed (`drive_listing.py`), read as `drive_files.py` says.

Two ways in (`google_keys.py`): a **service account** with domain-wide delegation, acting as
a Workspace user (a Workspace admin's choice; the same key reads group members from the
Directory), or **one user's OAuth client** and refresh token (no admin rights needed).
Scopes: `drive.readonly` (and the Directory's read-only group and user scopes).

Who may open each file is Drive's sharing (`drive_access.py`): a permission sync and a
group sync (the Directory's members) keep it, and the change feed brings sharing changes
at the next content sync.

Folders are written as a Drive folder's id or link (`https://drive.google.com/drive/folders/
ID`), a shared drive's id, `my-drive`, `shared-with-me`, or a folder's name (looked up among
the folders the account sees). Items are Drive file ids; each document carries the file's
Drive id, its kind, its shared drive, and who may open it (`drive_access`: its permissions
as grantees), what a permission sync needs.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from yarl import URL

from knowledge.sources.connectors.base import (
    ApiOptions,
    AttachmentRef,
    BadCredentials,
    ConnectorError,
    ConnectorKind,
    Folder,
    FolderSpec,
    Item,
    ItemRef,
    Listed,
    Skipped,
    State,
)
from knowledge.sources.connectors.credentials import Credentials
from knowledge.sources.connectors.drive_access import DriveAccess
from knowledge.sources.connectors.drive_files import FOLDER
from knowledge.sources.connectors.drive_listing import MY_DRIVE, SHARED_WITH_ME, DriveLister
from knowledge.sources.connectors.drive_reader import DriveReader
from knowledge.sources.connectors.google_keys import from_fields, read_key, token_origin_allowed
from knowledge.sources.connectors.permissions import SourceAccess, SourceUser

if TYPE_CHECKING:
    from knowledge.sources.connectors.drive_api import DriveApi
    from knowledge.sources.fetch import FetchSession

KIND = "google-drive"
DEFAULT_URL = "https://www.googleapis.com/drive/v3"
FETCH_BATCH = 20  # changed files handed to one fetch (`Connector.fetch`): bounds what is held at once
LINK_SHARING = ("domain", "public")
_FOLDER_LINK = re.compile(
    r"^(?:https?://)?drive\.google\.com/drive/(?:u/\d+/)?(?:folders/(?P<id>[\w-]{10,})|(?P<place>my-drive|shared-with-me))"
)
_WORDS = {
    "my drive": MY_DRIVE,
    "my-drive": MY_DRIVE,
    "shared with me": SHARED_WITH_ME,
    "shared-with-me": SHARED_WITH_ME,
    "files shared with me": SHARED_WITH_ME,
}


def parse_folder(text: str) -> FolderSpec:
    """A folder's link or id, a shared drive's id, `my-drive`, `shared-with-me`, or a name."""
    cleaned = " ".join(text.split()).strip().strip("\"'“”‘’`")
    if (link := _FOLDER_LINK.match(cleaned)) is not None:
        return FolderSpec(link["id"] or link["place"])
    if cleaned.lower() in _WORDS:
        return FolderSpec(_WORDS[cleaned.lower()])
    if not cleaned or len(cleaned) > 200 or any(ord(c) < 32 for c in cleaned):
        raise ValueError(f"“{text[:60]}” is not a Drive folder (its link, its id or its name)")
    return FolderSpec(cleaned)


def check_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """`link_sharing`: what a file shared with “anyone with the link” means for who may read
    it in Lore: `domain` (the default: everyone in the account's Workspace domain, not the
    world) or `public` (whoever may read the index)."""
    unknown = set(options) - {"link_sharing"}
    if unknown:
        raise ValueError(f"Google Drive takes no {', '.join(sorted(unknown))}")
    sharing = str(options.get("link_sharing") or "domain").lower()
    if sharing not in LINK_SHARING:
        raise ValueError("link_sharing is domain (the default) or public")
    return {"link_sharing": sharing}


class DriveConnector:
    """A `Connector` and an `AccessReader` (`drive_access.py`: a file is read by whom Drive
    lets open it)."""

    def __init__(self, api: DriveApi, *, subject: str | None = None, directory: bool = False) -> None:
        self._api = api
        self._lister = DriveLister(api)
        self._access = DriveAccess(api, subject=subject, directory=directory)
        self._reader = DriveReader(api, self._lister, self._access)

    @property
    def base_url(self) -> str:
        return self._api.base_url

    @property
    def requests(self) -> int:
        """Requests sent so far (tokens aside): what a sync cost."""
        return self._api.requests

    async def account(self) -> str:
        about = await self._api.get_json("/about", {"fields": "user(displayName,emailAddress)"})
        user = about.get("user") or {}
        email, name = str(user.get("emailAddress") or ""), str(user.get("displayName") or "")
        return f"{name} ({email})" if name and email else name or email or "the account"

    async def folders(self) -> list[Folder]:
        found = [
            Folder(MY_DRIVE, "My Drive", "my drive", "https://drive.google.com/drive/my-drive"),
            Folder(SHARED_WITH_ME, "Files shared with the account", "shared with me"),
        ]
        async for page in self._api.pages(
            "/drives", {"pageSize": 100, "fields": "nextPageToken,drives(id,name)"}
        ):
            found += [
                Folder(str(d["id"]), str(d.get("name") or d["id"]), "shared drive", _folder_url(str(d["id"])))
                for d in page.get("drives") or []
                if isinstance(d, dict) and d.get("id")
            ]
        params: dict[str, str | int | bool] = {
            "q": f"mimeType = '{FOLDER}' and trashed = false",
            "fields": "nextPageToken,files(id,name)",
            "pageSize": 1000,
            "corpora": "allDrives",
            "supportsAllDrives": True,
            "includeItemsFromAllDrives": True,
        }
        async for page in self._api.pages("/files", params):
            found += [
                Folder(str(f["id"]), str(f.get("name") or f["id"]), "folder", _folder_url(str(f["id"])))
                for f in page.get("files") or []
                if isinstance(f, dict) and f.get("id")
            ]
        return found

    def changed_since(
        self,
        folders: Sequence[FolderSpec],
        since: datetime | None,
        *,
        options: Mapping[str, Any] | None = None,
        state: State | None = None,
    ) -> AsyncIterator[Listed]:
        state = state if state is not None else {}
        self._reader.state = state
        self._access.link_sharing = str((options or {}).get("link_sharing") or "domain")
        return self._with_access(self._lister.listing(folders, since, state))

    async def _with_access(self, listing: AsyncIterator[Listed]) -> AsyncIterator[Listed]:
        """Each listed file with who may open it now, where that costs nothing (the listing
        gave its permissions) or where the change feed listed it (it may be its sharing that
        changed: a shared drive's file is then asked `permissions.list`). When Drive fails to
        say, nobody, until a later sync can tell (fail closed; the rest of the listing goes on)."""
        async for listed in listing:
            file = self._lister.files.get(listed.id) if isinstance(listed, ItemRef) else None
            known = file is not None and (file.grants is not None or self._lister.incremental)
            if isinstance(listed, ItemRef) and file is not None and known:
                try:
                    access = await self._access.file(file)
                except BadCredentials:
                    raise
                except ConnectorError as exc:
                    await self._api.say(f"{file.name}: who may open it is unknown for now ({exc})")
                    access = SourceAccess.nobody()
                listed = replace(listed, access=access)
            yield listed

    async def fetch(self, ids: Sequence[str]) -> list[Item | Skipped]:
        return await self._reader.fetch(ids)

    def item_access(
        self, folders: Sequence[FolderSpec], options: Mapping[str, Any] | None = None
    ) -> AsyncIterator[tuple[str, SourceAccess]]:
        return self._access.item_access(folders, options)

    async def group_members(self, name: str) -> list[SourceUser]:
        return await self._access.group_members(name)

    async def people(self, account_ids: Sequence[str]) -> list[SourceUser]:
        return await self._access.people(account_ids)

    async def attachments(self, item_id: str) -> list[AttachmentRef]:
        """A spreadsheet's sheets (each read as a table); other files have none."""
        return await self._reader.attachments(item_id)

    async def download(self, attachment: AttachmentRef, max_bytes: int) -> bytes:
        return await self._reader.download(attachment, max_bytes)


def folder_names(options: Mapping[str, Any]) -> dict[str, str]:
    """The attached folders' names as the last sync found them (`Handbook` for its id)."""
    state = options.get("state")
    roots = state.get("roots") if isinstance(state, Mapping) else None
    return {str(r[0]): str(r[3]) for r in roots or [] if isinstance(r, list) and len(r) == 5}


def _folder_url(folder_id: str) -> str:
    return f"https://drive.google.com/drive/folders/{folder_id}"


def open_drive(
    session: FetchSession, base_url: str, credentials: Credentials, options: ApiOptions
) -> DriveConnector:
    # Imported here: the registry lists this kind for the command grammar and every surface,
    # and google-auth (with its crypto) is only needed for a connection's work.
    from knowledge.sources.connectors.drive_api import DriveApi
    from knowledge.sources.connectors.google_auth import DIRECTORY_SCOPES, DRIVE_SCOPES, GoogleTokens

    try:
        key = read_key(credentials)
    except ValueError as exc:
        raise BadCredentials(str(exc)) from exc
    origin = str(URL(base_url).origin())
    if not token_origin_allowed(key.token_uri, origin):
        raise BadCredentials(
            f"the key sends its token requests to {URL(key.token_uri).host}, which is not Google's; "
            "give a key downloaded from the Google Cloud console"
        )

    def allowed(url: str) -> bool:
        return token_origin_allowed(url, origin)

    tokens = GoogleTokens(key, DRIVE_SCOPES, session, allowed)
    directory = (
        GoogleTokens(key, DIRECTORY_SCOPES, session, allowed, what="the Directory")
        if key.is_service_account
        else tokens
    )
    api = DriveApi(
        session,
        base_url,
        tokens,
        directory,
        retries=options.retries,
        max_wait=options.max_wait,
        sleep=options.sleep,
        note=options.note,
    )
    return DriveConnector(api, subject=key.subject, directory=key.is_service_account)


GOOGLE_DRIVE = ConnectorKind(
    kind=KIND,
    label="Google Drive",
    fetch_batch=FETCH_BATCH,
    open=open_drive,
    parse_folder=parse_folder,
    folder_noun="folder",
    folders_noun="folders and shared drives",
    default_url=DEFAULT_URL,
    check_options=check_options,
    aliases=("google drive", "gdrive", "drive", "google docs"),
    folder_names=folder_names,
    read_credentials=from_fields,
    syncs_permissions=True,
    account_key=str.lower,  # people are their emails, whose case Google ignores
)
