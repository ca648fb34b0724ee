"""A fake Google on loopback, editable by tests: the OAuth token endpoint, Drive v3, the
Sheets v4 reads Lore makes, and the Admin SDK Directory's members and users.

    async with FakeGoogle() as google:
        seeded = seed(google)                     # acme.com: a Handbook folder, a shared drive …
        google.drive_url                          # http://127.0.0.1:PORT/drive/v3
        key = google.service_account_key()        # its token_uri is the fake's /token
        google.edit(seeded.doc, "…")             # a new version, a change in the feed

- **Tokens** (`POST /token`): the JWT-bearer grant of a service account (the assertion's
  RS256 signature checked with the account's public key; `aud` Google's token endpoint, as Google documents; `sub`
  a user of the domain; every scope allowed by domain-wide delegation, else
  `unauthorized_client`), and the refresh-token grant of an OAuth client (`invalid_grant`
  for an unknown or revoked token). Access tokens last `token_lifetime` seconds.
- **Drive v3** under `/drive/v3`: `about`, `files` (Drive's `q`, `corpora`, `driveId`,
  `includeItemsFromAllDrives`, `supportsAllDrives`, `pageSize`, `pageToken`), `files/{id}`
  (and `alt=media`), `files/{id}/export` (Docs as Markdown or text, Sheets as CSV of the
  first sheet only, Slides as PowerPoint), `files/{id}/permissions` (inherited ones with
  `permissionDetails`), `changes/startPageToken` and `changes` (a log per user and per shared
  drive, each file's last change, `removed` when deleted or no longer visible, `file.trashed`
  when trashed), `drives`. Every answer honours the `fields` mask; without one, a file is
  `kind,id,name,mimeType`, as Drive answers. A shared drive's files are hidden without
  `supportsAllDrives` (404) and left out of listings without `includeItemsFromAllDrives`;
  `permissions` is not given for them in `files` answers, as Drive does.
- **Sheets v4** `/v4/spreadsheets/{id}` and `/values:batchGet`; `sheets_api = False` answers
  403 `SERVICE_DISABLED`, as a Cloud project without the API enabled does.
- **Directory** `/admin/directory/v1/groups/{key}/members` (a nested group listed as a member
  of `type: GROUP`, or expanded with `includeDerivedMembership`; `maxResults` up to 200,
  `nextPageToken`; 404 for an unknown group) and `/users?domain=`: for a token with the
  directory scopes of a user who is an admin, else 403 as Google answers.

Sharing: `share(file, Permission(…))` and `unshare(file, email)` change a file's permissions
and log a change in the feed, as Drive does; `permissions.list` (403
`insufficientFilePermissions` for a My Drive file the caller may not share) pages (`pageSize` 1–100)
with each entry's `permissionDetails` (`inheritedFrom` for a shared drive's items only), and
`deleted` / `pendingOwner` entries as Drive shows them.

Scripts: `rate_limit(n, status=403, reason=…, after=k)` answers the n requests after the next
k with Drive's quota error; `fail(path, n)` answers a path 500.
"""

from __future__ import annotations

import base64
import hashlib
import io
import itertools
import json
import secrets
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import parse_qs

import jwt
from aiohttp import web
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from .api_fake import ApiFake, ApiRequest
from .google_query import Fields, QueryError, apply_fields, drive_query, parse_fields

Json = dict[str, Any]
USER = web.RequestKey("user", str)
SCOPES = web.RequestKey("scopes", frozenset)
DRIVE = "/drive/v3"
SHEETS = "/v4"
DIRECTORY = "/admin/directory/v1"
DOMAIN = "acme.com"
FOLDER = "application/vnd.google-apps.folder"
DOCUMENT = "application/vnd.google-apps.document"
SPREADSHEET = "application/vnd.google-apps.spreadsheet"
PRESENTATION = "application/vnd.google-apps.presentation"
PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
DRIVE_SCOPE = "https://www.googleapis.com/auth/drive.readonly"
DIRECTORY_SCOPES = (
    "https://www.googleapis.com/auth/admin.directory.group.member.readonly",
    "https://www.googleapis.com/auth/admin.directory.user.readonly",
)
CLIENT_ID = "123456789012-lore.apps.googleusercontent.com"
CLIENT_SECRET = "GOCSPX-fake-client-secret-0123"
REFRESH_TOKEN = "1//0fake-refresh-token-for-ada-wxyz"
GOOGLE_TOKEN_AUDIENCE = "https://oauth2.googleapis.com/token"
SERVICE_EMAIL = "lore-reader@acme-lore.iam.gserviceaccount.com"
SEEDED_AT = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)
EXPORT_LIMIT = 10 * 1024 * 1024
DEFAULT_FILE_FIELDS: Fields = {"kind": None, "id": None, "name": None, "mimeType": None}
LINKS = {
    DOCUMENT: "https://docs.google.com/document/d/{}/edit?usp=drivesdk",
    SPREADSHEET: "https://docs.google.com/spreadsheets/d/{}/edit?usp=drivesdk",
    PRESENTATION: "https://docs.google.com/presentation/d/{}/edit?usp=drivesdk",
    FOLDER: "https://drive.google.com/drive/folders/{}",
}


def iso(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")


@dataclass
class Permission:
    type: str
    role: str = "reader"
    email: str = ""
    domain: str = ""
    discoverable: bool = False
    id: str = field(default_factory=lambda: str(secrets.randbelow(10**20)))
    deleted: bool = False
    """Its account was deleted (Drive keeps the entry, `deleted: true`)."""
    pending_owner: bool = False
    """Offered the file's ownership, not accepted yet (`pendingOwner: true`)."""

    def as_json(self) -> Json:
        found: Json = {"kind": "drive#permission", "id": self.id, "type": self.type, "role": self.role}
        if self.email:
            found["emailAddress"] = self.email
            found["displayName"] = self.email.split("@")[0].title()
        if self.type in ("user", "group"):  # Drive: `deleted` pertains to users and groups only
            found["deleted"] = self.deleted
        if self.pending_owner:
            found["pendingOwner"] = True
        if self.domain:
            found["domain"] = self.domain
        if self.type in ("domain", "anyone"):
            found["allowFileDiscovery"] = self.discoverable
        return found


@dataclass
class FakeFile:
    id: str
    name: str
    mime_type: str
    parent: str | None
    owner: str
    drive_id: str | None = None
    content: bytes = b""
    """A stored file's bytes, or a Google Doc's Markdown."""
    sheets: list[tuple[int, str, list[list[str]]]] = field(default_factory=list)
    slides: list[tuple[str, str]] = field(default_factory=list)
    version: int = 1
    modified: datetime = SEEDED_AT
    modified_by: str = ""
    trashed: bool = False
    permissions: list[Permission] = field(default_factory=list)
    shared_with_me_at: dict[str, datetime] = field(default_factory=dict)

    @property
    def native(self) -> bool:
        return self.mime_type.startswith("application/vnd.google-apps.")


@dataclass
class FakeDrive:
    id: str
    name: str
    members: dict[str, str]
    """Email (a user's or a group's) → role."""


@dataclass
class Change:
    number: int
    log: str
    file_id: str | None = None
    drive_id: str | None = None
    gone: bool = False


def google_error(status: int, message: str, reason: str, *, location: str | None = None) -> web.Response:
    """Drive's error body: `{"error": {"code", "message", "errors": [{"reason", …}]}}`."""
    error: Json = {
        "domain": "usageLimits" if "RateLimit" in reason else "global",
        "reason": reason,
        "message": message,
    }
    if location:
        error.update(location=location, locationType="parameter")
    body = {"error": {"code": status, "message": message, "errors": [error]}}
    return web.json_response(body, status=status)


def status_error(status: int, message: str, state: str, reason: str | None = None) -> web.Response:
    """The newer shape (Sheets, Directory): `status` and an `ErrorInfo` detail."""
    error: Json = {"code": status, "message": message, "status": state}
    if reason:
        error["details"] = [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason}]
    return web.json_response({"error": error}, status=status)


class FakeGoogle(ApiFake[tuple[int, str]]):
    def __init__(self, *, token_lifetime: int = 3600) -> None:
        super().__init__()
        self.token_lifetime = token_lifetime
        self.users: dict[str, str] = {}
        self.admins: set[str] = set()
        self.groups: dict[str, list[str]] = {}
        self.drives: dict[str, FakeDrive] = {}
        self.files: dict[str, FakeFile] = {}
        self.service_keys: dict[str, Any] = {}
        """A service account's public key, by its email."""
        self.delegated: dict[str, set[str]] = {}
        """The scopes domain-wide delegation allows each service account's client id."""
        self.refresh_tokens: dict[str, str] = {}
        """A refresh token → the user it acts for (of the one OAuth client)."""
        self.access_tokens: dict[str, tuple[str, frozenset[str], float]] = {}
        self.sheets_api = True
        self.suspended: set[str] = set()
        """Users suspended in the Directory (members listed with `status: SUSPENDED`)."""
        self.exports: list[str] = []
        """Ids of the files exported or downloaded, in order."""
        self.changes: list[Change] = []
        self._numbers = itertools.count(100)
        self._ids = itertools.count(1)
        self.redirects: dict[str, str] = {}
        """Paths answered 302 to another address (what a compromised proxy might do)."""

    # -- what tests use ------------------------------------------------------------------

    @property
    def drive_url(self) -> str:
        return f"{self.base_url}{DRIVE}"

    @property
    def token_uri(self) -> str:
        return f"{self.base_url}/token"

    def new_id(self, prefix: str = "1") -> str:
        digest = hashlib.sha256(str(next(self._ids)).encode()).digest()
        return prefix + base64.urlsafe_b64encode(digest).decode().rstrip("=")[:32]

    def add_user(self, email: str, name: str, *, admin: bool = False) -> None:
        self.users[email] = name
        if admin:
            self.admins.add(email)

    def service_account_key(self, *, token_uri: str | None = None, scopes: Iterable[str] = ()) -> str:
        """A new service account's JSON key, allowed `scopes` by domain-wide delegation
        (Drive's read-only scope and the directory's by default)."""
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        email = (
            SERVICE_EMAIL
            if SERVICE_EMAIL not in self.service_keys
            else f"lore-{len(self.service_keys)}@x.iam.gserviceaccount.com"
        )
        self.service_keys[email] = key.public_key()
        self.delegated[email] = set(scopes) or {DRIVE_SCOPE, *DIRECTORY_SCOPES}
        pem = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        ).decode()
        return json.dumps(
            {
                "type": "service_account",
                "project_id": "acme-lore",
                "private_key_id": secrets.token_hex(20),
                "private_key": pem,
                "client_email": email,
                "client_id": "10" + str(secrets.randbelow(10**19)),
                "auth_uri": "https://accounts.google.com/o/oauth2/auth",
                "token_uri": token_uri or self.token_uri,
                "universe_domain": "googleapis.com",
            }
        )

    def oauth_refresh_token(self, user: str, token: str = REFRESH_TOKEN) -> str:
        self.refresh_tokens[token] = user
        return token

    def revoke_access_tokens(self) -> None:
        self.access_tokens.clear()

    def add_drive(self, name: str, members: Mapping[str, str]) -> FakeDrive:
        drive = FakeDrive(self.new_id("0A"), name, dict(members))
        self.drives[drive.id] = drive
        self._log(drive=drive.id)
        return drive

    def add(
        self,
        name: str,
        mime_type: str,
        parent: str | None,
        *,
        owner: str = f"ada@{DOMAIN}",
        content: bytes | str = b"",
        sheets: Iterable[tuple[str, list[list[str]]]] = (),
        slides: Iterable[tuple[str, str]] = (),
        shared: Iterable[Permission] = (),
    ) -> FakeFile:
        """A file in `parent` (a folder's id, a shared drive's id, or None: My Drive's root)."""
        drive = self._drive_of(parent)
        file = FakeFile(
            self.new_id(),
            name,
            mime_type,
            parent or self.root_id(owner),
            owner,
            drive_id=drive,
            content=content.encode() if isinstance(content, str) else content,
            sheets=[(index * 1000 + 7 * index, title, rows) for index, (title, rows) in enumerate(sheets)],
            slides=list(slides),
            modified_by=owner,
            permissions=[Permission("user", "owner", owner)] if drive is None else [],
        )
        for permission in shared:
            file.permissions.append(permission)
        self.files[file.id] = file
        self._log(file)
        return file

    def folder(self, name: str, parent: str | None, **kwargs: Any) -> FakeFile:
        return self.add(name, FOLDER, parent, **kwargs)

    def root_id(self, owner: str) -> str:
        """The id of `owner`'s My Drive root folder (made on first use)."""
        root = f"0ARoot{hashlib.sha256(owner.encode()).hexdigest()[:20]}"
        if root not in self.files:
            self.files[root] = FakeFile(
                root, "My Drive", FOLDER, None, owner, permissions=[Permission("user", "owner", owner)]
            )
        return root

    def edit(
        self, file_id: str, content: bytes | str | None = None, *, name: str | None = None, **kwargs: Any
    ) -> None:
        file = self.files[file_id]
        if content is not None:
            file.content = content.encode() if isinstance(content, str) else content
        if name is not None:
            file.name = name
        for key, value in kwargs.items():
            setattr(file, key, value)
        self._touch(file)

    def touch(self, file_id: str) -> None:
        """A new version whose exported text is the same (someone fixed a typo back)."""
        self._touch(self.files[file_id])

    def trash(self, file_id: str) -> None:
        self.files[file_id].trashed = True
        self._touch(self.files[file_id])

    def delete(self, file_id: str) -> None:
        file = self.files.pop(file_id)
        self._log(file, gone=True)

    def move(self, file_id: str, parent: str) -> None:
        file = self.files[file_id]
        file.parent, file.drive_id = parent, self._drive_of(parent)
        self._touch(file)

    def share(self, file_id: str, permission: Permission) -> None:
        file = self.files[file_id]
        file.permissions.append(permission)
        if permission.type == "user":
            file.shared_with_me_at[permission.email] = datetime.now(UTC)
        self._touch(file)

    def unshare(self, file_id: str, email: str) -> None:
        """Take back what `email` (a user's or a group's) was given on the file: a change in
        the feed, as Drive logs a permission removed."""
        file = self.files[file_id]
        file.permissions = [p for p in file.permissions if p.email != email]
        file.shared_with_me_at.pop(email, None)
        self._touch(file)

    def rate_limit(
        self, times: int = 1, *, status: int = 403, reason: str = "userRateLimitExceeded", after: int = 0
    ) -> None:
        """The `times` Drive requests after the next `after` ones answer Drive's quota error."""
        self.script((status, reason), times, after=after)

    def api_requests(self) -> list[ApiRequest]:
        return [r for r in self.requests.snapshot() if r.path != "/token"]

    def token_requests(self) -> list[ApiRequest]:
        return [r for r in self.requests.snapshot() if r.path == "/token"]

    # -- the model -----------------------------------------------------------------------

    def _drive_of(self, parent: str | None) -> str | None:
        if parent is None:
            return None
        if parent in self.drives:
            return parent
        found = self.files.get(parent)
        return found.drive_id if found else None

    def _touch(self, file: FakeFile) -> None:
        file.version += 1
        file.modified = max(file.modified + timedelta(minutes=1), datetime.now(UTC))
        self._log(file)

    def _log(self, file: FakeFile | None = None, *, drive: str | None = None, gone: bool = False) -> None:
        if file is not None:
            log = f"drive:{file.drive_id}" if file.drive_id else "user"
            self.changes.append(Change(next(self._numbers), log, file.id, file.drive_id, gone))
        else:
            self.changes.append(Change(next(self._numbers), f"drive:{drive}", drive_id=drive))

    def members_of(self, group: str, seen: frozenset[str] = frozenset()) -> set[str]:
        """Everyone in a group, nested groups expanded."""
        found: set[str] = set()
        for member in self.groups.get(group, []):
            if member in self.groups and member not in seen:
                found |= self.members_of(member, seen | {group})
            else:
                found.add(member)
        return found

    def _ancestors(self, file: FakeFile) -> list[FakeFile]:
        found, parent = [], file.parent
        while parent is not None and parent in self.files and len(found) < 100:
            found.append(self.files[parent])
            parent = self.files[parent].parent
        return found

    def effective(self, file: FakeFile) -> list[tuple[Permission, str | None]]:
        """Its permissions and those it inherits (with where from), a shared drive's members too."""
        found: list[tuple[Permission, str | None]] = [(p, None) for p in file.permissions]
        for folder in self._ancestors(file):
            found += [(p, folder.id) for p in folder.permissions if p.role != "owner" or folder.drive_id]
        if file.drive_id is not None:
            drive = self.drives[file.drive_id]
            found += [
                (
                    Permission("group" if email in self.groups else "user", role, email, id=f"m-{email}"),
                    drive.id,
                )
                for email, role in drive.members.items()
            ]
        return found

    def can_read(self, user: str, file: FakeFile) -> bool:
        if file.owner == user and file.drive_id is None:
            return True
        domain = user.rpartition("@")[2]
        for permission, _ in self.effective(file):
            if permission.type == "anyone" or (permission.type == "domain" and permission.domain == domain):
                return True
            if permission.type == "user" and permission.email == user:
                return True
            if permission.type == "group" and user in self.members_of(permission.email):
                return True
        return False

    def can_share(self, user: str, file: FakeFile) -> bool:
        return file.owner == user or any(
            p.email == user and p.role in ("writer", "owner") for p, _ in self.effective(file)
        )

    def file_json(self, file: FakeFile, user: str) -> Json:
        found: Json = {
            "kind": "drive#file",
            "id": file.id,
            "name": file.name,
            "mimeType": file.mime_type,
            "parents": [file.parent] if file.parent else [],
            "version": str(file.version),
            "modifiedTime": iso(file.modified),
            "createdTime": iso(SEEDED_AT),
            "trashed": file.trashed,
            "webViewLink": LINKS.get(
                file.mime_type, "https://drive.google.com/file/d/{}/view?usp=drivesdk"
            ).format(file.id),
            "lastModifyingUser": self._person(file.modified_by),
        }
        if file.drive_id:
            found["driveId"] = file.drive_id
        else:
            found["owners"] = [self._person(file.owner)]
            if self.can_share(user, file):
                found["permissions"] = [p.as_json() for p, _ in self.effective(file)]
        if not file.native:
            found["md5Checksum"] = hashlib.md5(file.content, usedforsecurity=False).hexdigest()
            found["size"] = str(len(file.content))
        if user in file.shared_with_me_at:
            found["sharedWithMeTime"] = iso(file.shared_with_me_at[user])
        return found

    def _person(self, email: str) -> Json:
        return {"kind": "drive#user", "displayName": self.users.get(email, email), "emailAddress": email}

    # -- the app -------------------------------------------------------------------------

    def build_app(self) -> web.Application:
        app = web.Application(middlewares=[self._record])
        app.router.add_post("/token", self._token)
        get = app.router.add_get
        get(f"{DRIVE}/about", self._about)
        get(f"{DRIVE}/files", self._list_files)
        get(DRIVE + r"/files/{id}", self._get_file)
        get(DRIVE + r"/files/{id}/export", self._export)
        get(DRIVE + r"/files/{id}/permissions", self._permissions)
        get(f"{DRIVE}/changes/startPageToken", self._start_token)
        get(f"{DRIVE}/changes", self._changes)
        get(f"{DRIVE}/drives", self._drives)
        get(SHEETS + r"/spreadsheets/{id}", self._spreadsheet)
        get(SHEETS + r"/spreadsheets/{id}/values:batchGet", self._values)
        get(DIRECTORY + r"/groups/{key}/members", self._members)
        get(f"{DIRECTORY}/users", self._users)
        return app

    async def _guarded(self, request: web.Request, handler: Any) -> web.StreamResponse:
        if request.path == "/token":
            return await handler(request)  # type: ignore[no-any-return]
        script = self.scripted()
        if script is not None:
            status, reason = script
            if status == 429:
                return google_error(429, "Too many requests", "rateLimitExceeded")
            return google_error(
                status,
                "User Rate Limit Exceeded" if reason.startswith("user") else "Rate Limit Exceeded",
                reason,
            )
        if request.path in self.redirects:
            raise web.HTTPFound(self.redirects[request.path])
        if self.failing(request.path):
            return google_error(500, "Internal Error", "internalError")
        user = self._caller(request)
        if user is None:
            return google_error(401, "Request had invalid authentication credentials.", "authError")
        request[USER], request[SCOPES] = user
        try:
            response: web.StreamResponse = await handler(request)
        except QueryError as exc:
            return google_error(400, str(exc), "invalid", location="q")
        return response

    def _caller(self, request: web.Request) -> tuple[str, frozenset[str]] | None:
        header = request.headers.get("Authorization", "")
        found = (
            self.access_tokens.get(header.removeprefix("Bearer ")) if header.startswith("Bearer ") else None
        )
        if found is None or found[2] < time.time():
            return None
        return found[0], found[1]

    # -- tokens --------------------------------------------------------------------------

    async def _token(self, request: web.Request) -> web.Response:
        form = {k: v[0] for k, v in parse_qs(await request.text()).items()}
        grant = form.get("grant_type")
        if grant == "urn:ietf:params:oauth:grant-type:jwt-bearer":
            return self._jwt_grant(form.get("assertion", ""))
        if grant == "refresh_token":
            if (form.get("client_id"), form.get("client_secret")) != (CLIENT_ID, CLIENT_SECRET):
                return web.json_response(
                    {"error": "invalid_client", "error_description": "Unauthorized"}, status=401
                )
            user = self.refresh_tokens.get(form.get("refresh_token", ""))
            if user is None:
                return web.json_response(
                    {"error": "invalid_grant", "error_description": "Token has been expired or revoked."},
                    status=400,
                )
            return self._issue(user, {DRIVE_SCOPE, *(DIRECTORY_SCOPES if user in self.admins else ())})
        return web.json_response(
            {"error": "unsupported_grant_type", "error_description": "Invalid grant_type"}, status=400
        )

    def _jwt_grant(self, assertion: str) -> web.Response:
        try:
            unverified = jwt.decode(assertion, options={"verify_signature": False})
            key = self.service_keys[str(unverified.get("iss"))]
            # Google's documented audience, whatever the key's token_uri (google-auth sends it)
            claims = jwt.decode(assertion, key, algorithms=["RS256"], audience=GOOGLE_TOKEN_AUDIENCE)
        except (jwt.PyJWTError, KeyError):
            return web.json_response(
                {"error": "invalid_grant", "error_description": "Invalid JWT Signature."}, status=400
            )
        scopes = set(str(claims.get("scope") or "").split())
        subject = str(claims.get("sub") or "")
        if subject not in self.users:
            return web.json_response(
                {"error": "invalid_grant", "error_description": "Invalid email or User ID"}, status=400
            )
        if not scopes or not scopes <= self.delegated[str(claims["iss"])]:
            description = (
                "Client is unauthorized to retrieve access tokens using this method, or client not "
                "authorized for any of the scopes requested."
            )
            return web.json_response(
                {"error": "unauthorized_client", "error_description": description}, status=401
            )
        return self._issue(subject, scopes)

    def _issue(self, user: str, scopes: Iterable[str]) -> web.Response:
        token = "ya29.fake-" + secrets.token_urlsafe(24)
        self.access_tokens[token] = (user, frozenset(scopes), time.time() + self.token_lifetime)
        return web.json_response(
            {"access_token": token, "expires_in": self.token_lifetime, "token_type": "Bearer"}
        )

    # -- Drive ---------------------------------------------------------------------------

    def _fields(self, request: web.Request, default: Fields | None = None) -> Fields | None:
        text = request.query.get("fields")
        return parse_fields(text) if text else default

    def _visible(self, request: web.Request, *, all_drives: bool) -> Iterator[FakeFile]:
        user = request[USER]
        for file in self.files.values():
            if file.drive_id is not None and not all_drives:
                continue
            if file.parent is None:  # a My Drive root
                continue
            if self.can_read(user, file):
                yield file

    async def _about(self, request: web.Request) -> web.Response:
        about = {"kind": "drive#about", "user": self._person(request[USER]) | {"me": True}}
        return web.json_response(apply_fields(about, self._fields(request, {"kind": None})))

    async def _list_files(self, request: web.Request) -> web.Response:
        query = request.query
        user = request[USER]
        all_drives = query.get("includeItemsFromAllDrives") == "true"
        if all_drives and query.get("supportsAllDrives") != "true":
            return google_error(
                403,
                "The includeItemsFromAllDrives parameter requires supportsAllDrives.",
                "teamDrivesParameterNotSupported",
            )
        corpora = query.get("corpora", "user")
        drive_id = query.get("driveId")
        if corpora == "drive" and (not drive_id or not all_drives):
            return google_error(
                400,
                "The driveId parameter must be specified with corpora=drive and includeItemsFromAllDrives.",
                "invalid",
                location="driveId",
            )
        test = drive_query(query.get("q", "trashed = false or trashed = true"))
        size = min(int(query.get("pageSize", "100")), 1000)
        matching = []
        for file in self._visible(request, all_drives=all_drives):
            if corpora == "drive" and file.drive_id != drive_id:
                continue
            facts = {
                "name": file.name,
                "mimeType": file.mime_type,
                "trashed": file.trashed,
                "parents": [file.parent],
                "owners": [file.owner],
                "sharedWithMe": user in file.shared_with_me_at,
                "modifiedTime": iso(file.modified),
            }
            if test(facts):
                matching.append(file)
        start = int(query.get("pageToken", "0") or 0)
        page = matching[start : start + size]
        body: Json = {
            "kind": "drive#fileList",
            "incompleteSearch": False,
            "files": [self.file_json(f, user) for f in page],
        }
        if start + size < len(matching):
            body["nextPageToken"] = str(start + size)
        mask = self._fields(request)
        if mask is None:
            body = {**body, "files": [apply_fields(f, DEFAULT_FILE_FIELDS) for f in body["files"]]}
        return web.json_response(apply_fields(body, mask))

    def _file(self, request: web.Request, *, any_drive: bool = False) -> FakeFile | web.Response:
        """The file a path names, as this user may see it (else Drive's 404). A shared drive's
        file needs `supportsAllDrives`, except for `export`, which has no such parameter."""
        user, file_id = request[USER], request.match_info["id"]
        supports = any_drive or request.query.get("supportsAllDrives") == "true"
        if file_id == "root":
            return self.files[self.root_id(user)]
        drive = self.drives.get(file_id)
        if drive is not None and supports and self.is_member(user, drive):
            return FakeFile(drive.id, drive.name, FOLDER, None, "", drive_id=drive.id)
        found = self.files.get(file_id)
        if found is None or (found.drive_id and not supports) or not self.can_read(user, found):
            return google_error(404, f"File not found: {file_id}.", "notFound", location="fileId")
        return found

    def is_member(self, user: str, drive: FakeDrive) -> bool:
        return user in drive.members or any(user in self.members_of(m) for m in drive.members)

    async def _get_file(self, request: web.Request) -> web.StreamResponse:
        file = self._file(request)
        if isinstance(file, web.Response):
            return file
        if request.query.get("alt") == "media":
            if file.native:
                return google_error(
                    403,
                    "Only files with binary content can be downloaded. Use Export with Docs Editors files.",
                    "fileNotDownloadable",
                    location="alt",
                )
            self.exports.append(file.id)
            return web.Response(body=file.content, content_type=file.mime_type)
        found = self.file_json(file, request[USER])
        return web.json_response(apply_fields(found, self._fields(request, DEFAULT_FILE_FIELDS)))

    async def _export(self, request: web.Request) -> web.StreamResponse:
        file = self._file(request, any_drive=True)
        if isinstance(file, web.Response):
            return file
        wanted = request.query.get("mimeType", "")
        if not file.native:
            return google_error(403, "Export only supports Docs Editors files.", "fileNotExportable")
        if file.mime_type == DOCUMENT and wanted in ("text/markdown", "text/plain"):
            body = file.content
        elif file.mime_type == SPREADSHEET and wanted == "text/csv":
            body = _csv(file.sheets[0][2] if file.sheets else [])  # Drive: the first sheet only
        elif file.mime_type == PRESENTATION and wanted == PPTX:
            body = _deck(file.slides)
        else:
            return google_error(
                400, f"The requested conversion is not supported: {wanted}", "badRequest", location="mimeType"
            )
        if len(body) > EXPORT_LIMIT:
            return google_error(403, "This file is too large to be exported.", "exportSizeLimitExceeded")
        self.exports.append(file.id)
        return web.Response(body=body, content_type=wanted)

    async def _permissions(self, request: web.Request) -> web.Response:
        file = self._file(request)
        if isinstance(file, web.Response):
            return file
        if file.drive_id is None and not self.can_share(request[USER], file):
            return google_error(
                403,
                f"The user does not have sufficient permissions for file {file.id}.",
                "insufficientFilePermissions",
            )
        listed = []
        for permission, inherited_from in self.effective(file):
            data = permission.as_json()
            detail: Json = {
                "permissionType": "member" if file.drive_id else "file",
                "role": permission.role,
                "inherited": inherited_from is not None,
            }
            if inherited_from and file.drive_id:  # Drive: populated for shared drives' items only
                detail["inheritedFrom"] = inherited_from
            data["permissionDetails"] = [detail]
            listed.append(data)
        start = int(request.query.get("pageToken", "0") or 0)
        size = int(request.query.get("pageSize", "100"))
        if not 1 <= size <= 100:
            return google_error(
                400, f"Invalid value '{size}'. Values must be within the range: [1, 100]", "invalid",
                location="pageSize",
            )  # fmt: skip
        body: Json = {"kind": "drive#permissionList", "permissions": listed[start : start + size]}
        if start + size < len(listed):
            body["nextPageToken"] = str(start + size)
        return web.json_response(apply_fields(body, self._fields(request)))

    async def _start_token(self, request: web.Request) -> web.Response:
        drive = request.query.get("driveId")
        if drive is not None and drive not in self.drives:
            return google_error(404, f"Shared drive not found: {drive}", "notFound", location="driveId")
        body = {"kind": "drive#startPageToken", "startPageToken": str(self._next_number())}
        return web.json_response(apply_fields(body, self._fields(request)))

    def _next_number(self) -> int:
        return (self.changes[-1].number + 1) if self.changes else 100

    async def _changes(self, request: web.Request) -> web.Response:
        query = request.query
        token = query.get("pageToken", "")
        if not token.isdigit():
            return google_error(400, "Invalid Value", "invalid", location="pageToken")
        drive = query.get("driveId")
        if drive is not None and (
            query.get("supportsAllDrives") != "true" or query.get("includeItemsFromAllDrives") != "true"
        ):
            return google_error(
                403,
                "driveId requires supportsAllDrives and includeItemsFromAllDrives.",
                "teamDrivesParameterNotSupported",
            )
        log = f"drive:{drive}" if drive else "user"
        size = min(int(query.get("pageSize", "100")), 1000)
        latest: dict[str, Change] = {}
        for change in self.changes:
            if change.number >= int(token) and change.log == log:
                key = change.file_id or f"drive:{change.drive_id}"
                latest.pop(key, None)
                latest[key] = change
        entries = sorted(latest.values(), key=lambda c: c.number)
        page, rest = entries[:size], entries[size:]
        body: Json = {
            "kind": "drive#changeList",
            "changes": [self._change_json(c, request[USER]) for c in page],
        }
        if rest:
            body["nextPageToken"] = str(rest[0].number)
        else:
            body["newStartPageToken"] = str(self._next_number())
        return web.json_response(apply_fields(body, self._fields(request)))

    def _change_json(self, change: Change, user: str) -> Json:
        at = iso(datetime.now(UTC))
        if change.file_id is None:
            drive = self.drives.get(change.drive_id or "")
            found: Json = {
                "kind": "drive#change",
                "changeType": "drive",
                "type": "drive",
                "time": at,
                "driveId": change.drive_id,
                "removed": drive is None,
            }
            if drive is not None:
                found["drive"] = {"kind": "drive#drive", "id": drive.id, "name": drive.name}
            return found
        found = {
            "kind": "drive#change",
            "changeType": "file",
            "type": "file",
            "time": at,
            "fileId": change.file_id,
        }
        if change.drive_id:
            found["driveId"] = change.drive_id
        file = self.files.get(change.file_id)
        if file is None or not self.can_read(user, file):
            found["removed"] = True
            return found
        found["removed"] = False
        found["file"] = self.file_json(file, user)
        return found

    async def _drives(self, request: web.Request) -> web.Response:
        user = request[USER]
        mine = [
            {"kind": "drive#drive", "id": d.id, "name": d.name}
            for d in self.drives.values()
            if self.is_member(user, d)
        ]
        start = int(request.query.get("pageToken", "0") or 0)
        size = min(int(request.query.get("pageSize", "10")), 100)
        body: Json = {"kind": "drive#driveList", "drives": mine[start : start + size]}
        if start + size < len(mine):
            body["nextPageToken"] = str(start + size)
        return web.json_response(apply_fields(body, self._fields(request)))

    # -- Sheets --------------------------------------------------------------------------

    def _sheet_file(self, request: web.Request) -> FakeFile | web.Response:
        if not self.sheets_api:
            return status_error(
                403,
                "Google Sheets API has not been used in project 1234 before or it is disabled. Enable it by visiting "
                "https://console.developers.google.com/apis/api/sheets.googleapis.com/overview?project=1234 then retry.",
                "PERMISSION_DENIED",
                "SERVICE_DISABLED",
            )
        file = self.files.get(request.match_info["id"])
        if file is None or file.mime_type != SPREADSHEET or not self.can_read(request[USER], file):
            return status_error(404, "Requested entity was not found.", "NOT_FOUND")
        return file

    async def _spreadsheet(self, request: web.Request) -> web.Response:
        file = self._sheet_file(request)
        if isinstance(file, web.Response):
            return file
        sheets = [
            {
                "properties": {
                    "sheetId": sheet_id,
                    "title": title,
                    "index": index,
                    "sheetType": "GRID",
                    "gridProperties": {"rowCount": max(1000, len(rows)), "columnCount": 26},
                }
            }
            for index, (sheet_id, title, rows) in enumerate(file.sheets)
        ]
        body = {
            "spreadsheetId": file.id,
            "properties": {"title": file.name, "locale": "en_US"},
            "sheets": sheets,
        }
        return web.json_response(apply_fields(body, self._fields(request)))

    async def _values(self, request: web.Request) -> web.Response:
        file = self._sheet_file(request)
        if isinstance(file, web.Response):
            return file
        by_title = {title: rows for _, title, rows in file.sheets}
        ranges = []
        for wanted in request.query.getall("ranges", []):
            title = (
                wanted[1:-1].replace("''", "'") if wanted.startswith("'") and wanted.endswith("'") else wanted
            )
            if title not in by_title:
                return status_error(400, f"Unable to parse range: {wanted}", "INVALID_ARGUMENT")
            rows = by_title[title]
            width = max((len(r) for r in rows), default=1)
            found: Json = {
                "range": f"'{title}'!A1:{chr(64 + min(width, 26))}{max(len(rows), 1)}",
                "majorDimension": "ROWS",
            }
            if rows:
                found["values"] = rows
            ranges.append(found)
        self.exports.append(file.id)
        body = {"spreadsheetId": file.id, "valueRanges": ranges}
        return web.json_response(apply_fields(body, self._fields(request)))

    # -- Directory ----------------------------------------------------------------------

    def _directory_refusal(self, request: web.Request) -> web.Response | None:
        if not set(DIRECTORY_SCOPES) & request[SCOPES]:
            return status_error(
                403,
                "Request had insufficient authentication scopes.",
                "PERMISSION_DENIED",
                "ACCESS_TOKEN_SCOPE_INSUFFICIENT",
            )
        if request[USER] not in self.admins:
            return google_error(403, "Not Authorized to access this resource/api", "forbidden")
        return None

    async def _members(self, request: web.Request) -> web.Response:
        refused = self._directory_refusal(request)
        if refused is not None:
            return refused
        key = request.match_info["key"]
        if key not in self.groups:
            return google_error(404, "Resource Not Found: groupKey", "notFound")
        derived = request.query.get("includeDerivedMembership") == "true"
        emails = sorted(self.members_of(key)) if derived else self.groups[key]
        members = [
            {
                "kind": "admin#directory#member",
                "etag": f'"{hashlib.sha256(e.encode()).hexdigest()[:16]}"',
                "id": hashlib.sha256(e.encode()).hexdigest()[:21],
                "email": e,
                "role": "MEMBER",
                "type": "GROUP" if e in self.groups else "USER",
                "status": "SUSPENDED" if e in self.suspended else "ACTIVE",
            }
            for e in emails
        ]
        start = int(request.query.get("pageToken", "0") or 0)
        size = min(int(request.query.get("maxResults", "200")), 200)
        body: Json = {
            "kind": "admin#directory#members",
            "etag": f'"{hashlib.sha256(key.encode()).hexdigest()[:16]}"',
            "members": members[start : start + size],
        }
        if start + size < len(members):
            body["nextPageToken"] = str(start + size)
        return web.json_response(apply_fields(body, self._fields(request)))

    async def _users(self, request: web.Request) -> web.Response:
        refused = self._directory_refusal(request)
        if refused is not None:
            return refused
        domain = request.query.get("domain", "")
        users = [
            {
                "kind": "admin#directory#user",
                "id": hashlib.sha256(e.encode()).hexdigest()[:21],
                "primaryEmail": e,
                "name": {"fullName": n},
            }
            for e, n in sorted(self.users.items())
            if e.endswith("@" + domain)
        ]
        start = int(request.query.get("pageToken", "0") or 0)
        size = min(int(request.query.get("maxResults", "100")), 500)
        body: Json = {"kind": "admin#directory#users", "users": users[start : start + size]}
        if start + size < len(users):
            body["nextPageToken"] = str(start + size)
        return web.json_response(apply_fields(body, self._fields(request)))


def _csv(rows: list[list[str]]) -> bytes:
    import csv

    out = io.StringIO()
    csv.writer(out).writerows(rows)
    return out.getvalue().encode()


def _deck(slides: list[tuple[str, str]]) -> bytes:
    """A PowerPoint deck of (title, body) slides, as Drive exports Slides."""
    import pptx

    deck = pptx.Presentation()
    for title, body in slides:
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text = body
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


@dataclass(frozen=True)
class Seeded:
    handbook: str
    hr: str
    doc: str
    sheet: str
    slides: str
    pdf: str
    private_doc: str
    archive: str
    drive: str
    drive_doc: str
    image: str


def pdf_bytes(text: str) -> bytes:
    """A one-page PDF saying `text` (fpdf2)."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("helvetica", size=12)
    pdf.multi_cell(0, 8, text)
    return bytes(pdf.output())


def seed(google: FakeGoogle) -> Seeded:
    """acme.com: Ada (an admin), Bob, Cy; a Handbook folder in Ada's My Drive with a Doc, a
    two-sheet Sheet, a deck and a PDF (an HR subfolder too); an Archive folder beside it; a
    shared drive “Engineering” with a Doc; the group eng@ (Bob, and the group leads@ with Cy)."""
    ada, bob, cy = f"ada@{DOMAIN}", f"bob@{DOMAIN}", f"cy@{DOMAIN}"
    google.add_user(ada, "Ada Lovelace", admin=True)
    google.add_user(bob, "Bob Marley")
    google.add_user(cy, "Cy Twombly")
    google.groups[f"eng@{DOMAIN}"] = [bob, f"leads@{DOMAIN}"]
    google.groups[f"leads@{DOMAIN}"] = [cy]
    handbook = google.folder("Handbook", None)
    hr = google.folder("HR", handbook.id)
    archive = google.folder("Archive", None)
    doc = google.add(
        "Expenses policy",
        DOCUMENT,
        handbook.id,
        content=(
            "# Expenses\n\n## Travel\n\n"
            "- Book trains over flights for trips under **four hours**.\n"
            "- Hotel nights are reimbursed up to 180 euros in Paris.\n\n"
            "## Meals\n\nTeam dinners need a manager's approval beforehand.\n"
        ),
        shared=[Permission("domain", "reader", domain=DOMAIN)],
    )
    sheet = google.add(
        "Office directory",
        SPREADSHEET,
        handbook.id,
        sheets=[
            ("Desks", [["Name", "Desk"], ["Ada", "4.12"], ["Bob", "2.03"]]),
            ("Rooms", [["Room", "Floor", "Seats"], ["Lovelace room", "5", "12"], ["Babbage room", "3", "6"]]),
        ],
        shared=[Permission("group", "reader", f"eng@{DOMAIN}")],
    )
    slides = google.add(
        "Onboarding deck",
        PRESENTATION,
        hr.id,
        slides=[
            ("Welcome", "Your first week at Acme."),
            ("Laptops", "Laptops are collected from the IT desk on floor 2."),
        ],
        shared=[Permission("anyone", "reader")],
    )
    pdf = google.add(
        "Security policy.pdf",
        "application/pdf",
        hr.id,
        content=pdf_bytes("Security policy. Badges must be worn visibly at all times inside the office."),
    )
    private_doc = google.add(
        "Salary bands",
        DOCUMENT,
        handbook.id,
        content="# Salary bands\n\nSenior engineers are paid in band E5.\n",
        shared=[Permission("user", "reader", bob)],
    )
    image = google.add("Office map.png", "image/png", handbook.id, content=b"\x89PNG\r\n\x1a\nfake")
    drive = google.add_drive("Engineering", {ada: "organizer", f"eng@{DOMAIN}": "reader"})
    drive_doc = google.add(
        "Deploy runbook", DOCUMENT, drive.id, content="# Deploys\n\nProduction deploys go out on Tuesdays.\n"
    )
    return Seeded(
        handbook.id,
        hr.id,
        doc.id,
        sheet.id,
        slides.id,
        pdf.id,
        private_doc.id,
        archive.id,
        drive.id,
        drive_doc.id,
        image.id,
    )
