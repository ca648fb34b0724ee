"""A Drive file as the connector keeps it (from Drive v3's `File` resource): what kind of
file it is and how Lore reads it, its version, where it links, who wrote it, and who may
open it (its `permissions`, as grantees).

How each kind is read:

- **Google Docs**: exported as Markdown (`text/markdown`: headings, lists, tables kept);
- **Google Slides**: exported as PowerPoint, which Lore's extractor reads a slide at a time;
- **Google Sheets**: every sheet through the Sheets API, each as a table (a CSV export
  holds only the first sheet, Drive's documented limit), so each sheet goes through the
  tables path with its own cap;
- **stored files** (PDF, Word, PowerPoint, text, Markdown, HTML, CSV …): downloaded
  (`alt=media`) and read by Lore's extractors;
- folders are walked; shortcuts, forms, drawings, pictures, audio and video are left out.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import quote

from knowledge.extraction.formats import PPTX, type_from_mime, type_from_name
from knowledge.sources.connectors.base import ConnectorError, parse_time

FOLDER = "application/vnd.google-apps.folder"
DOCUMENT = "application/vnd.google-apps.document"
SPREADSHEET = "application/vnd.google-apps.spreadsheet"
PRESENTATION = "application/vnd.google-apps.presentation"
GOOGLE_APPS = "application/vnd.google-apps."
MEDIA_PREFIXES = ("image/", "video/", "audio/")
PERMISSION_FIELDS = "id,type,role,emailAddress,domain,allowFileDiscovery,deleted,pendingOwner"
FILE_FIELDS = (
    "id,name,mimeType,parents,driveId,version,md5Checksum,size,modifiedTime,trashed,webViewLink,"
    f"owners(displayName,emailAddress),lastModifyingUser(displayName,emailAddress),permissions({PERMISSION_FIELDS})"
)
"""What the connector asks of every file: no more (Drive answers only the fields asked for)."""


class NotFound(ConnectorError):
    """Google answered 404: no such file, or not for this account."""


def file_path(file_id: str, then: str = "") -> str:
    """`/files/{id}{then}`, the id percent-encoded: an id read from an answer (or a folder a
    user named) never reaches another path or adds a parameter."""
    return f"/files/{quote(file_id, safe='')}{then}"


class Kind(enum.StrEnum):
    FOLDER = "folder"
    DOC = "document"
    SHEET = "spreadsheet"
    SLIDES = "presentation"
    STORED = "file"
    OTHER = "other"
    """Not read: shortcuts, forms, drawings, pictures, recordings, types Lore can't read."""


def kind_of(mime_type: str, name: str) -> Kind:
    known = {FOLDER: Kind.FOLDER, DOCUMENT: Kind.DOC, SPREADSHEET: Kind.SHEET, PRESENTATION: Kind.SLIDES}
    if mime_type in known:
        return known[mime_type]
    if mime_type.startswith(GOOGLE_APPS) or mime_type.startswith(MEDIA_PREFIXES):
        return Kind.OTHER
    return Kind.STORED if type_from_mime(mime_type) or type_from_name(name) else Kind.OTHER


@dataclass(frozen=True)
class Grant:
    """One of a file's permissions: who (`type` user, group, domain or anyone; the email or
    domain), with which role; `discoverable` for a domain or anyone that may find it by
    search (else: whoever has the link)."""

    type: str
    role: str
    email: str = ""
    domain: str = ""
    discoverable: bool = False

    @classmethod
    def from_json(cls, data: Any) -> Grant | None:
        """A permission as Drive gives it; None for one that grants nothing (deleted: its
        account is gone; a pending owner's, until they accept)."""
        if not isinstance(data, dict) or data.get("deleted") or data.get("pendingOwner"):
            return None
        if not data.get("type"):
            return None
        return cls(
            type=str(data["type"]),
            role=str(data.get("role") or ""),
            email=str(data.get("emailAddress") or "").strip().lower(),
            domain=str(data.get("domain") or "").strip().lower(),
            discoverable=bool(data.get("allowFileDiscovery")),
        )

    def text(self) -> str:
        """How a document's facts spell it: `user:ada@acme.com`, `domain:acme.com`, `anyone`."""
        who = self.email if self.type in ("user", "group") else self.domain if self.type == "domain" else ""
        link = "" if self.type not in ("domain", "anyone") or self.discoverable else " (with the link)"
        return f"{self.type}:{who}{link}" if who else f"{self.type}{link}"


def _person(data: Any) -> str | None:
    if not isinstance(data, dict):
        return None
    found = data.get("displayName") or data.get("emailAddress")
    return str(found) if found else None


@dataclass(frozen=True)
class DriveFile:
    id: str
    name: str
    mime_type: str
    parents: tuple[str, ...] = ()
    drive_id: str | None = None
    version: str = ""
    md5: str | None = None
    size: int | None = None
    modified: datetime | None = None
    trashed: bool = False
    url: str = ""
    author: str | None = None
    modified_by: str | None = None
    grants: tuple[Grant, ...] | None = None
    """Its permissions; None when the listing did not give them (a shared drive's files)."""

    @classmethod
    def from_json(cls, data: Any) -> DriveFile:
        owners = data.get("owners") or []
        grants = data.get("permissions")
        size = data.get("size")
        return cls(
            id=str(data.get("id") or ""),
            name=str(data.get("name") or "untitled"),
            mime_type=str(data.get("mimeType") or ""),
            parents=tuple(str(p) for p in data.get("parents") or ()),
            drive_id=str(data["driveId"]) if data.get("driveId") else None,
            version=str(data.get("version") or ""),
            md5=str(data["md5Checksum"]) if data.get("md5Checksum") else None,
            size=int(size) if isinstance(size, str | int) and str(size).isdigit() else None,
            modified=parse_time(data.get("modifiedTime")),
            trashed=bool(data.get("trashed")),
            url=str(data.get("webViewLink") or ""),
            author=_person(owners[0]) if owners else _person(data.get("lastModifyingUser")),
            modified_by=_person(data.get("lastModifyingUser")),
            grants=(
                tuple(g for g in map(Grant.from_json, grants) if g is not None)
                if isinstance(grants, list)
                else None
            ),
        )

    @property
    def kind(self) -> Kind:
        return kind_of(self.mime_type, self.name)

    @property
    def content_version(self) -> str:
        """What changes when its text may have: a stored file's checksum (its bytes), a
        Google file's version (any edit; an export that did not change is not embedded again)."""
        return f"md5:{self.md5}" if self.kind == Kind.STORED and self.md5 else f"v{self.version}"

    @property
    def read_as(self) -> str:
        """The type Lore reads it as."""
        if self.kind == Kind.DOC:
            return "text/markdown"
        if self.kind == Kind.SLIDES:
            return PPTX
        if self.kind == Kind.SHEET:
            return "text/csv"
        return type_from_mime(self.mime_type) or type_from_name(self.name) or self.mime_type

    def facts(self, grants: tuple[Grant, ...] | None) -> dict[str, str | int | bool]:
        """What its document carries besides: its Drive id and kind, and who may open it (for
        the permission sync; `unknown` when Drive did not say)."""
        found: dict[str, str | int | bool] = {"drive_file_id": self.id, "drive_kind": self.kind.value}
        if self.drive_id:
            found["shared_drive_id"] = self.drive_id
        found["drive_access"] = (
            "; ".join(sorted({g.text() for g in grants})) if grants is not None else "unknown"
        )
        return found
