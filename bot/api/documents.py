"""Document routes: upload a file (multipart) or text (JSON), list with a cursor and a
metadata filter, get, delete.

Uploads must describe the document: `context_type`, `content_domain` and
`document_category` are mandatory and non-empty (a 400 names the missing one);
`relevance_tags` and `description` are optional, and each one left out is reported as a
warning in the response.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError
from multidict import MultiDictProxy
from pydantic import BaseModel, Field, field_validator
from yarl import URL

from bot.api.auth import caller
from bot.api.bodies import json_body, loads, query_params
from bot.api.errors import BadRequest, NotFound
from bot.api.indexes import find_index
from bot.api.routes import Reply, Route, find_row
from bot.api.state import state
from knowledge import (
    CONTEXT_LIST_FIELDS,
    DocumentContext,
    DocumentFacts,
    FilterError,
    IngestResult,
    Source,
    document_fields,
    matches,
    normalise_labels,
)
from storage.access import Action
from storage.records import DocumentRef, IndexRef
from storage.values import DocumentStatus, SourceKind

TAG = "documents"
MANDATORY_CONTEXT = ("context_type", "content_domain", "document_category")
Labels = list[str] | str | None
Scalar = str | int | float | bool
NOT_A_WEB_URL = "url must be a web address (http:// or https://), as people will open it from Slack"


def web_url(value: str | None) -> str | None:
    """`value` if it is an `http(s)` address with a host (None stays None); ValueError
    otherwise: a document's link is shown to people, so nothing else may pose as one."""
    if value is None:
        return None
    try:
        parsed = URL(value.strip())
    except (ValueError, TypeError):
        raise ValueError(NOT_A_WEB_URL) from None
    if parsed.scheme.lower() not in ("http", "https") or not parsed.host:
        raise ValueError(NOT_A_WEB_URL)
    return value.strip()


SCAN_PAGE = 200


class ContextFields(BaseModel):
    """The document-context fields; a list, or one string of comma-separated values."""

    context_type: Labels = Field(None, description="Mandatory: e.g. technical, api_docs.")
    content_domain: Labels = Field(None, description="Mandatory: e.g. api_documentation.")
    document_category: Labels = Field(None, description="Mandatory: e.g. user_guide, reference.")
    relevance_tags: Labels = Field(None, description="Optional: topics covered.")
    description: str | None = Field(None, max_length=2000, description="Optional: a short description.")


class TextUpload(ContextFields):
    text: str = Field(min_length=1, description="The document's text (Markdown or plain).")
    name: str | None = Field(
        None, min_length=1, max_length=255, description="Its name; uploading the same name again replaces it."
    )
    title: str | None = Field(None, max_length=512)
    author: str | None = Field(None, max_length=255)
    url: str | None = Field(None, max_length=2048, description="Its web address (http or https).")
    metadata: dict[str, Scalar] = Field(default_factory=dict, description="More metadata to filter on.")

    _web_url = field_validator("url")(web_url)


class FileUpload(BaseModel):
    """The multipart form of a file upload (documented; parsed from the form)."""

    file: bytes = Field(description="The file.", json_schema_extra={"format": "binary"})
    context_type: str = Field(description="Mandatory, comma-separated values.")
    content_domain: str = Field(description="Mandatory, comma-separated values.")
    document_category: str = Field(description="Mandatory, comma-separated values.")
    relevance_tags: str | None = Field(None, description="Optional, comma-separated values.")
    description: str | None = None
    name: str | None = Field(None, description="Overrides the file's own name.")
    title: str | None = None
    author: str | None = None
    url: str | None = None
    metadata: str | None = Field(None, description="A JSON object of more metadata to filter on.")


class DocumentOut(BaseModel):
    id: int
    index: str
    name: str
    url: str | None
    source_kind: str
    mime_type: str
    size: int
    characters: int
    chunks: int
    author: str | None
    time_added: datetime
    doc_timestamp: datetime | None
    metadata: dict[str, Any]
    text: str | None = Field(None, description="The opening text, truncated to `text_chars`.")
    text_truncated: bool = False


class UploadOut(BaseModel):
    document: DocumentOut
    outcome: str = Field(description="added, updated (replaced a document of that name) or unchanged")
    chunks: int
    warnings: list[str]


class ListQuery(BaseModel):
    limit: int = Field(20, ge=1, le=100)
    cursor: str | None = Field(None, max_length=32, description="`next_cursor` of the previous page.")
    filter: str | None = Field(
        None, max_length=400, description='A JSON metadata filter, e.g. {"author": "ada"}.'
    )
    text_chars: int = Field(200, ge=0, le=1000, description="How much of each document's text to show.")


class GetQuery(BaseModel):
    text_chars: int = Field(1000, ge=0, le=1000)


class DocumentPage(BaseModel):
    documents: list[DocumentOut]
    next_cursor: str | None


def document_context(values: Mapping[str, Labels]) -> tuple[DocumentContext, list[str]]:
    """The context, or a 400 naming the first missing mandatory field; plus warnings for
    the optional fields left out."""
    for name in MANDATORY_CONTEXT:
        if not normalise_labels(values.get(name)):
            raise BadRequest(
                f"{name} is mandatory for uploads: give at least one non-empty value "
                "(a list, or comma-separated)."
            )
    warnings = []
    if not normalise_labels(values.get("relevance_tags")):
        warnings.append("relevance_tags was not given, so the document has none.")
    if not str(values.get("description") or "").strip():
        warnings.append("description was not given, so the document has none.")
    return DocumentContext.from_mapping(values), warnings


def checked_metadata(metadata: Mapping[str, Any]) -> dict[str, Scalar]:
    for key, value in metadata.items():
        if key in CONTEXT_LIST_FIELDS or key == "description":
            raise BadRequest(f"metadata.{key}: give {key} as its own field, not in metadata.")
        if not isinstance(value, str | int | float | bool) or len(key) > 64:
            raise BadRequest(
                f"metadata.{key}: keys up to 64 characters, values strings, numbers or booleans."
            )
    return dict(metadata)


def document_out(index: IndexRef, doc: DocumentRef, text: str | None = None, limit: int = 0) -> DocumentOut:
    shown = text[:limit] if text is not None else None
    return DocumentOut(
        id=doc.id,
        index=index.name,
        name=doc.name,
        url=doc.url,
        source_kind=str(doc.source_kind),
        mime_type=doc.mime_type,
        size=doc.size,
        characters=doc.characters,
        chunks=doc.chunk_count,
        author=doc.author,
        time_added=doc.time_added,
        doc_timestamp=doc.doc_timestamp,
        metadata=doc.meta,
        text=shown,
        text_truncated=text is not None and len(text) > limit,
    )


async def _ingest(request: web.Request, index: IndexRef, source: Source, warnings: list[str]) -> web.Response:
    api = state(request)
    result: IngestResult = await api.services.actions.documents.add_one(caller(request).place, index, source)
    api.metrics.ingested.inc(outcome=result.outcome.value)
    body = UploadOut(
        document=document_out(index, result.document),
        outcome=result.outcome.value,
        chunks=result.chunks,
        warnings=warnings,
    )
    return web.json_response(
        body.model_dump(mode="json"), status=200 if result.outcome == "unchanged" else 201
    )


async def upload_file(request: web.Request) -> web.Response:
    index = await find_index(request, Action.ADD)
    if not request.content_type.startswith("multipart/"):
        raise BadRequest("Upload the file as multipart/form-data with a `file` part.")
    try:
        form = await request.post()
    except (ValueError, HttpProcessingError) as exc:
        raise BadRequest(f"The multipart body could not be read: {_first_line(exc)}") from None
    upload = form.get("file")
    if upload is None:
        raise BadRequest("file is missing: send the document as the multipart part named `file`.")
    if isinstance(upload, web.FileField):
        data = await asyncio.to_thread(upload.file.read)
        name, mime = upload.filename or "upload", upload.content_type
    else:
        data, name, mime = (upload.encode() if isinstance(upload, str) else bytes(upload)), "upload.txt", None
    fields = _form_fields(form)
    context, warnings = document_context(fields)
    facts = DocumentFacts(
        title=_text(form, "title"),
        author=_text(form, "author"),
        url=_form_url(form),
        context=context,
        extra=checked_metadata(_json_object(_text(form, "metadata"))),
    )
    generic = mime in (None, "application/octet-stream")
    source = Source(
        name=_text(form, "name") or name, data=data, mime_type=None if generic else mime, facts=facts
    )
    return await _ingest(request, index, source, warnings)


async def upload_text(request: web.Request) -> web.Response:
    index = await find_index(request, Action.ADD)
    body = await json_body(request, TextUpload)
    context, warnings = document_context(body.model_dump())
    name = body.name or f"text-{hashlib.sha256(body.text.encode()).hexdigest()[:12]}.md"
    facts = DocumentFacts(
        title=body.title,
        author=body.author,
        url=body.url,
        context=context,
        extra=checked_metadata(body.metadata),
    )
    mime = "text/plain" if name.lower().endswith(".txt") else "text/markdown"
    source = Source(name=name, data=body.text.encode(), kind=SourceKind.TEXT, mime_type=mime, facts=facts)
    return await _ingest(request, index, source, warnings)


async def list_documents(request: web.Request) -> web.Response:
    index = await find_index(request, Action.SEARCH)
    query = query_params(request, ListQuery)
    where = _json_object(query.filter, field="filter")
    after = _cursor(query.cursor)
    services = state(request).services
    repo = services.documents
    access = await services.actions.access.for_place(caller(request).place)
    chosen: list[DocumentRef] = []
    exhausted = False
    while len(chosen) < query.limit and not exhausted:
        page = await asyncio.to_thread(
            repo.list_ready, index.id, after_id=after, limit=SCAN_PAGE, access=access
        )
        exhausted = len(page) < SCAN_PAGE
        for doc in page:
            after = doc.id
            if _matches(doc, where):
                chosen.append(doc)
                if len(chosen) == query.limit:
                    break
    texts = await asyncio.to_thread(repo.opening_text, [d.id for d in chosen]) if query.text_chars else {}
    out = DocumentPage(
        documents=[document_out(index, d, texts.get(d.id), query.text_chars) for d in chosen],
        next_cursor=str(after) if len(chosen) == query.limit else None,
    )
    return web.json_response(out.model_dump(mode="json"))


async def get_document(request: web.Request) -> web.Response:
    index = await find_index(request, Action.SEARCH)
    query = query_params(request, GetQuery)
    doc = await _document(request, index)
    texts = await asyncio.to_thread(state(request).services.documents.opening_text, [doc.id])
    return web.json_response(
        document_out(index, doc, texts.get(doc.id), query.text_chars).model_dump(mode="json")
    )


async def delete_document(request: web.Request) -> web.Response:
    index = await find_index(request, Action.LIST)
    doc = await _document(request, index)
    await state(request).services.actions.documents.remove(caller(request).place, index, [doc])
    return web.Response(status=204)


async def _document(request: web.Request, index: IndexRef) -> DocumentRef:
    """The document, if the caller may read it (one its source restricts from them is as
    unknown as one that does not exist)."""
    document_id = int(request.match_info["document_id"])
    services = state(request).services
    doc = await find_row(document_id, services.documents.get)
    readable = doc is not None and await services.actions.access.readable(caller(request).place, [doc.id])
    if doc is None or not readable or doc.index_id != index.id or doc.status != DocumentStatus.READY:
        raise NotFound(f"There is no document {document_id} in the {index.name} index.")
    return doc


def _matches(doc: DocumentRef, where: Mapping[str, Any]) -> bool:
    try:
        return not where or matches(document_fields(doc), where)
    except FilterError as exc:
        raise BadRequest(f"filter: {exc}.") from None


def _cursor(cursor: str | None) -> int | None:
    if cursor is None or cursor == "":
        return None
    if not cursor.isdigit() or len(cursor) > 18:
        raise BadRequest("cursor: pass the next_cursor of the previous page, unchanged.")
    return int(cursor)


def _json_object(text: str | None, *, field: str = "metadata") -> dict[str, Any]:
    if text is None or not text.strip():
        return {}
    value = loads(text, what=field)
    if not isinstance(value, dict):
        raise BadRequest(f"{field} must be a JSON object.")
    return value


def _form_fields(form: MultiDictProxy[Any]) -> dict[str, Labels]:
    """The context fields of a form; a field sent several times keeps all its values."""
    fields: dict[str, Labels] = {}
    for name in (*CONTEXT_LIST_FIELDS, "description"):
        values = [v for v in form.getall(name, []) if isinstance(v, str)]
        fields[name] = ",".join(values) if values else None
    return fields


def _first_line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:200]


def _form_url(form: MultiDictProxy[Any]) -> str | None:
    try:
        return web_url(_text(form, "url"))
    except ValueError as exc:
        raise BadRequest(str(exc)) from None


def _text(form: MultiDictProxy[Any], name: str) -> str | None:
    value = form.get(name)
    return value.strip() or None if isinstance(value, str) else None


INDEX_DOCS = "/v1/indexes/{index}/documents"

ROUTES = [
    Route(
        "POST",
        INDEX_DOCS,
        upload_file,
        "Upload a file (multipart), with its document context and metadata.",
        TAG,
        {
            201: Reply("Added or updated.", UploadOut),
            200: Reply("Already in the index, unchanged.", UploadOut),
        },
        form=FileUpload,
        upload=True,
    ),
    Route(
        "POST",
        INDEX_DOCS + "/text",
        upload_text,
        "Upload text, with its document context and metadata.",
        TAG,
        {
            201: Reply("Added or updated.", UploadOut),
            200: Reply("Already in the index, unchanged.", UploadOut),
        },
        body=TextUpload,
    ),
    Route(
        "GET",
        INDEX_DOCS,
        list_documents,
        "List documents, oldest first, a page at a time, optionally filtered by metadata.",
        TAG,
        {200: Reply("A page of documents.", DocumentPage)},
        query=ListQuery,
    ),
    Route(
        "GET",
        INDEX_DOCS + r"/{document_id:\d+}",
        get_document,
        "A document's metadata and opening text.",
        TAG,
        {200: Reply("The document.", DocumentOut)},
        query=GetQuery,
    ),
    Route(
        "DELETE",
        INDEX_DOCS + r"/{document_id:\d+}",
        delete_document,
        "Remove a document from the index.",
        TAG,
        {204: Reply("Removed.")},
    ),
]
