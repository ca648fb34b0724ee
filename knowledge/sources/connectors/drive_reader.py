"""Reading the Drive files a listing found changed: a Google Doc exported as Markdown, a
deck exported as PowerPoint, a stored file downloaded, a spreadsheet's sheets read through
the Sheets API (each sheet an attachment of the spreadsheet, read as CSV: the tables path,
capped per table), each with who may open it (`drive_access.py`). A file that fails is `Skipped` and remembered (`retry` in the state:
the change feed will not list it again); several in a row, or refused credentials, stop.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from knowledge.extraction.formats import PPTX
from knowledge.sources.connectors.base import (
    AttachmentRef,
    BadCredentials,
    ConnectorError,
    ConnectorUnavailable,
    Item,
    NoAccess,
    Skipped,
    State,
)
from knowledge.sources.connectors.drive_access import DriveAccess
from knowledge.sources.connectors.drive_files import FILE_FIELDS, DriveFile, Kind, NotFound, file_path
from knowledge.sources.connectors.drive_listing import DriveLister, Root

if TYPE_CHECKING:
    from knowledge.sources.connectors.drive_api import DriveApi

FAILURES_IN_A_ROW = 5  # then the service is down, not the file: the sync stops and says so
MAX_FILE_BYTES = 50 * 1024 * 1024  # as LORE_MAX_FILE_MB's default: a larger file is not downloaded
SHEET_FIELDS = "properties.title,sheets.properties(sheetId,title,index,sheetType)"


@dataclass(frozen=True)
class Sheet:
    id: int
    title: str


class DriveReader:
    def __init__(
        self, api: DriveApi, lister: DriveLister, access: DriveAccess, *, max_bytes: int = MAX_FILE_BYTES
    ) -> None:
        self._api = api
        self._lister = lister
        self._access = access
        self._max_bytes = max_bytes
        self._sheets: dict[str, list[Sheet] | None] = {}
        """A spreadsheet's grid sheets (None: the Sheets API refused; the first sheet only)."""
        self._values: dict[str, dict[int, bytes]] = {}
        self.state: State | None = None
        """The listing's state, where files that failed are remembered."""

    async def fetch(self, ids: Sequence[str]) -> list[Item | Skipped]:
        found: list[Item | Skipped] = []
        failures = 0
        for file_id in ids:
            try:
                item = await self._item(file_id)
            except (BadCredentials, NotFound) as exc:
                if isinstance(exc, BadCredentials):
                    raise
                continue  # deleted between the listing and now
            except ConnectorError as exc:
                failures = failures + 1 if isinstance(exc, ConnectorUnavailable) else 0
                if failures >= FAILURES_IN_A_ROW:
                    raise
                file = self._lister.files.get(file_id)
                found.append(Skipped(file_id, file.name if file else file_id, str(exc)))
                self._remember_failed(file_id)
                continue
            failures = 0
            found.append(item)
        return found

    def _remember_failed(self, file_id: str) -> None:
        if self.state is not None:
            self.state["retry"] = sorted({*(self.state.get("retry") or ()), file_id})

    async def _file(self, file_id: str) -> DriveFile:
        if file_id not in self._lister.files:
            data = await self._api.get_json(
                file_path(file_id), {"fields": FILE_FIELDS, "supportsAllDrives": True}
            )
            self._lister.files[file_id] = DriveFile.from_json(data)
        return self._lister.files[file_id]

    async def _item(self, file_id: str) -> Item:
        file = await self._file(file_id)
        text, data = "", None
        if file.kind == Kind.DOC:
            text = (await self._export(file, "text/markdown")).decode("utf-8", "replace")
        elif file.kind == Kind.SLIDES:
            data = await self._export(file, PPTX)
        elif file.kind == Kind.SHEET:
            text = await self._sheet_overview(file)
        else:
            data = await self._download(file)
        root = self._lister.roots.get(file_id) or Root("", "folder", "", "", "")
        grants = await self._access.grants(file)
        return Item(
            id=file.id,
            title=file.name,
            url=file.url or f"https://drive.google.com/file/d/{file.id}/view",
            version=file.content_version,
            text=text,
            data=data,
            folder=root.key,
            folder_name=root.name,
            author=file.author,
            modified_by=file.modified_by,
            modified=file.modified,
            path=self._lister.paths.get(file_id, ()),
            key=f"{self._api.base_url}/files/{file.id}",
            mime_type=file.read_as,
            facts=file.facts(grants),
            access=await self._access.file(file),
        )

    async def _export(self, file: DriveFile, mime_type: str) -> bytes:
        url = self._api.url(file_path(file.id, "/export"), {"mimeType": mime_type})
        return (await self._api.get(url, max_bytes=self._max_bytes)).body

    async def _download(self, file: DriveFile) -> bytes:
        if file.size is not None and file.size > self._max_bytes:
            raise ConnectorError(
                f"too large: {file.size // (1024 * 1024)} MB, over {self._max_bytes // (1024 * 1024)} MB"
            )
        url = self._api.url(file_path(file.id), {"alt": "media", "supportsAllDrives": True})
        return (await self._api.get(url, max_bytes=self._max_bytes)).body

    # -- spreadsheets ---------------------------------------------------------------------

    async def sheets(self, file: DriveFile) -> list[Sheet] | None:
        if file.id not in self._sheets:
            url = (
                f"{self._api.sheets_url}/spreadsheets/{quote(file.id, safe='')}?fields={quote(SHEET_FIELDS)}"
            )
            try:
                data = (await self._api.get_json(url)).get("sheets") or []
            except NoAccess as exc:
                await self._api.say(
                    f"{file.name}: the Sheets API refused ({exc}); only its first sheet is read"
                )
                self._sheets[file.id] = None
                return None
            self._sheets[file.id] = [
                Sheet(int(p.get("sheetId") or 0), str(p.get("title") or "Sheet"))
                for p in (s.get("properties") or {} for s in data if isinstance(s, dict))
                if p.get("sheetType", "GRID") == "GRID"
            ]
        return self._sheets[file.id]

    async def _sheet_overview(self, file: DriveFile) -> str:
        sheets = await self.sheets(file)
        if sheets is None:
            return (
                f"# {file.name}\n\nA Google Sheet; only its first sheet is indexed (the Sheets API is off).\n"
            )
        names = "\n".join(f"- {s.title}" for s in sheets)
        return (
            f"# {file.name}\n\nA Google Sheet of {len(sheets)} sheets, each indexed as a table:\n\n{names}\n"
        )

    async def attachments(self, file_id: str) -> list[AttachmentRef]:
        file = self._lister.files.get(file_id)
        if file is None or file.kind != Kind.SHEET:
            return []
        sheets = await self.sheets(file)
        version = int(file.version) if file.version.isdigit() else 0
        shown = [Sheet(-1, "first sheet")] if sheets is None else sheets
        return [
            AttachmentRef(
                id=f"{file.id}:{sheet.id}",
                title=f"{file.name} › {sheet.title}",
                media_type="text/csv",
                version=version,
                download_url=file.id,
                url=f"{file.url}#gid={sheet.id}" if file.url and sheet.id >= 0 else file.url,
            )
            for sheet in shown
        ]

    async def download(self, attachment: AttachmentRef, max_bytes: int) -> bytes:
        file_id, _, sheet = attachment.id.rpartition(":")
        if sheet == "-1":
            return await self._export(await self._file(file_id), "text/csv")
        if file_id not in self._values:
            self._values[file_id] = await self._read_values(await self._file(file_id))
        found = self._values[file_id].get(int(sheet))
        if found is None:
            raise ConnectorError("the sheet is gone")
        if len(found) > max_bytes:
            raise ConnectorError(f"too large: over {max_bytes // (1024 * 1024)} MB")
        return found

    async def _read_values(self, file: DriveFile) -> dict[int, bytes]:
        """Every grid sheet's values in one request, each as CSV."""
        sheets = await self.sheets(file) or []
        if not sheets:
            return {}
        ranges = "&".join(f"ranges={quote(_range(s.title))}" for s in sheets)
        url = (
            f"{self._api.sheets_url}/spreadsheets/{quote(file.id, safe='')}/values:batchGet?{ranges}"
            "&majorDimension=ROWS&valueRenderOption=FORMATTED_VALUE"
        )
        data = await self._api.get_json(url)
        found: dict[int, bytes] = {}
        for sheet, values in zip(sheets, data.get("valueRanges") or [], strict=False):
            found[sheet.id] = _csv(values.get("values") if isinstance(values, dict) else None)
        return found


def _range(title: str) -> str:
    """A whole sheet as an A1 range: its title, quoted."""
    return "'" + title.replace("'", "''") + "'"


def _csv(rows: Any) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out)
    for row in rows or []:
        if isinstance(row, list):
            writer.writerow([str(cell) for cell in row])
    return out.getvalue().encode()
