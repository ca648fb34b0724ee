"""Notion blocks and rich text → Markdown, and a database row's properties → `name: value`
lines. Pure functions over Notion's JSON: reading the blocks (children, synced blocks' sources)
is `notion_pages.py`'s; here each block arrives with its children under `CHILDREN`.

Blocks: headings (`#` to `####`), paragraphs, bulleted, numbered and to-do lists nested by
indentation, toggles (the summary, then what they hold), callouts and quotes as `>` quotes
(a callout with its icon), code blocks fenced with their language, tables as Markdown tables,
equations as their LaTeX text, dividers, bookmarks and embeds as their captions or links, files
and images as their captions or names (their addresses are signed and expire: never kept),
columns and tabs in reading order, child pages and databases as a line naming them (child
pages are documents of their own). Rich text keeps bold, italic, strikethrough and inline code;
links and mentions are their text (a mention's text is its page's title or its person's name).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

Json = dict[str, Any]
CHILDREN = "lore_children"
"""Where `notion_pages.py` puts a block's children (read from Notion) in the block's JSON."""
LISTS = {"bulleted_list_item", "numbered_list_item", "to_do"}
QUOTES = {"quote", "callout"}
MEDIA = {"image", "video", "audio", "pdf", "file"}
SILENT = {"breadcrumb", "table_of_contents", "unsupported", "button"}


def rich_text(items: object, *, marks: bool = True) -> str:
    """The text of a rich-text array; with `marks`, bold, italic, strikethrough and code kept."""
    if not isinstance(items, list):
        return ""
    return "".join(_span(item, marks) for item in items if isinstance(item, dict))


def _span(item: Json, marks: bool) -> str:
    text = str(item.get("plain_text") or "")
    if item.get("type") == "equation":
        text = str((item.get("equation") or {}).get("expression") or text)
    if not marks or not text.strip():
        return text
    notes = item.get("annotations") or {}
    for key, mark in (("code", "`"), ("bold", "**"), ("italic", "_"), ("strikethrough", "~~")):
        if notes.get(key):
            text = _wrap(text, mark)
    return text


def _wrap(text: str, mark: str) -> str:
    """`mark`s around the text, outside its leading and trailing spaces (Markdown needs it)."""
    core = text.strip()
    start = text[: len(text) - len(text.lstrip())]
    end = text[len(text.rstrip()) :]
    return f"{start}{mark}{core}{mark}{end}"


def content(block: Json) -> Json:
    """A block's own part: `block[block["type"]]`."""
    value = block.get(str(block.get("type") or ""))
    return value if isinstance(value, dict) else {}


def children(block: Json) -> list[Json]:
    found = block.get(CHILDREN)
    return [b for b in found if isinstance(b, dict)] if isinstance(found, list) else []


class Renderer:
    """Renders a page's blocks. `link` gives a child page's address from its id (None: none)."""

    def __init__(self, link: Callable[[str], str | None] = lambda page_id: None) -> None:
        self._link = link

    def markdown(self, blocks: Sequence[Json]) -> str:
        return self._joined(blocks).strip() + "\n"

    def _joined(self, blocks: Sequence[Json]) -> str:
        """The blocks' Markdown: a blank line between blocks, none between items of one list."""
        out: list[str] = []
        number, previous = 0, ""
        for block in blocks:
            kind = str(block.get("type") or "")
            number = number + 1 if kind == "numbered_list_item" else 0
            part = self._block(block, kind, number)
            if not part.strip():
                continue
            if out:
                out.append("\n" if _same_list(kind, previous) else "\n\n")
            out.append(part)
            previous = kind
        return "".join(out)

    def _block(self, block: Json, kind: str, number: int) -> str:
        own = content(block)
        text = rich_text(own.get("rich_text"))
        inner = "" if kind in LISTS or kind == "table" else self._joined(children(block))
        if kind.startswith("heading_") and kind[-1:].isdigit():
            return "\n\n".join(p for p in ("#" * int(kind[-1]) + " " + text, inner) if p.strip())
        if kind in LISTS:
            return self._item(kind, own, text, number, block)
        if kind in QUOTES:
            icon = (own.get("icon") or {}).get("emoji") if kind == "callout" else None
            lead = f"{icon} {text}" if isinstance(icon, str) and text else text
            return _quoted("\n\n".join(p for p in (lead, inner) if p.strip()))
        if kind == "code":
            return self._code(own)
        if kind == "equation":
            return f"$$\n{own.get('expression') or ''}\n$$"
        if kind == "table":
            return self._table(block, own)
        if kind == "divider":
            return "---"
        if kind in ("child_page", "child_database"):
            return self._child(block, kind, own)
        if kind in ("bookmark", "embed", "link_preview"):
            caption = rich_text(own.get("caption"))
            return caption or str(own.get("url") or "")
        if kind in MEDIA:
            return rich_text(own.get("caption")) or str(own.get("name") or "")
        if kind in ("meeting_notes", "transcription", "template"):
            return "\n\n".join(p for p in (rich_text(own.get("title") or own.get("rich_text")), inner) if p)
        if kind in SILENT:
            return ""
        return "\n\n".join(p for p in (text, inner) if p.strip())  # paragraphs, toggles, columns …

    def _item(self, kind: str, own: Json, text: str, number: int, block: Json) -> str:
        if kind == "to_do":
            marker = "- [x] " if own.get("checked") else "- [ ] "
        elif kind == "numbered_list_item":
            marker = f"{number}. "
        else:
            marker = "- "
        inner = self._joined(children(block))
        line = marker + text.replace("\n", "\n" + " " * len(marker))
        if not inner:
            return line
        pad = " " * len(marker)
        nested = "\n".join(pad + row if row.strip() else row for row in inner.split("\n"))
        return f"{line}\n{nested}"

    def _code(self, own: Json) -> str:
        language = str(own.get("language") or "")
        language = "" if language == "plain text" else language.replace(" ", "-")
        code = rich_text(own.get("rich_text"), marks=False).rstrip("\n")
        fence = "````" if "```" in code else "```"
        caption = rich_text(own.get("caption"))
        body = f"{fence}{language}\n{code}\n{fence}"
        return f"{body}\n\n{caption}" if caption else body

    def _table(self, block: Json, own: Json) -> str:
        rows = [
            [_cell(cell) for cell in content(row).get("cells") or []]
            for row in children(block)
            if row.get("type") == "table_row"
        ]
        if not rows:
            return ""
        width = max(int(own.get("table_width") or 0), *(len(r) for r in rows))
        rows = [r + [""] * (width - len(r)) for r in rows]
        header = rows[0] if own.get("has_column_header") else [""] * width
        body = rows[1:] if own.get("has_column_header") else rows
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * width]
        lines += ["| " + " | ".join(r) + " |" for r in body]
        return "\n".join(lines)

    def _child(self, block: Json, kind: str, own: Json) -> str:
        title = str(own.get("title") or "Untitled")
        if kind == "child_database":
            return f"Database: {title}"
        address = self._link(str(block.get("id") or ""))
        return f"Page: [{title}]({address})" if address else f"Page: {title}"


def _same_list(kind: str, previous: str) -> bool:
    bullets = {"bulleted_list_item", "to_do"}
    return kind in LISTS and (kind == previous or {kind, previous} <= bullets)


def _cell(cell: object) -> str:
    return " ".join(rich_text(cell).split()).replace("|", "\\|")


def _quoted(text: str) -> str:
    return "\n".join("> " + line if line else ">" for line in text.split("\n"))


# -- a database row's properties --------------------------------------------------------------

Names = Callable[[str], str | None]
"""A person's or a page's name from their id (None: unknown)."""


def title_of(properties: object) -> str:
    """A page's title: the text of its one `title` property."""
    if isinstance(properties, Mapping):
        for value in properties.values():
            if isinstance(value, dict) and value.get("type") == "title":
                return rich_text(value.get("title"), marks=False).strip()
    return ""


def property_lines(properties: Mapping[str, Any], people: Names, pages: Names) -> list[str]:
    """`name: value` for each property with a value, the title left out (it is the name)."""
    lines = []
    for name, value in properties.items():
        if not isinstance(value, dict) or value.get("type") == "title":
            continue
        shown = property_text(value, people, pages)
        if shown:
            lines.append(f"{name}: {shown}")
    return lines


def property_text(value: Json, people: Names, pages: Names) -> str:
    """One property value as text: names for people and relations, dates as dates, lists
    joined with commas; '' for an empty one."""
    kind = str(value.get("type") or "")
    data = value.get(kind)
    if kind in ("rich_text", "title"):
        return " ".join(rich_text(data, marks=False).split())
    if kind in ("select", "status"):
        return str(data.get("name") or "") if isinstance(data, dict) else ""
    if kind == "multi_select":
        return _joined(str(o.get("name") or "") for o in _dicts(data))
    if kind in ("people", "created_by", "last_edited_by"):
        return _joined(_person(p, people) for p in (_dicts(data) if kind == "people" else _dicts([data])))
    if kind == "relation":
        return _joined(pages(str(r.get("id") or "")) or "" for r in _dicts(data))
    if kind == "date":
        return _date(data)
    if kind in ("created_time", "last_edited_time"):
        return str(data or "")[:10]
    if kind == "checkbox":
        return "yes" if data else "no"
    if kind in ("number", "url", "email", "phone_number"):
        return _number(data) if kind == "number" else str(data or "")
    if kind == "files":
        return _joined(str(f.get("name") or "") for f in _dicts(data))
    if kind == "formula" and isinstance(data, dict):
        return property_text(data, people, pages) if data.get("type") != "date" else _date(data.get("date"))
    if kind in ("string", "boolean"):
        return ("yes" if data else "no") if kind == "boolean" and data is not None else str(data or "")
    if kind == "rollup" and isinstance(data, dict):
        return _rollup(data, people, pages)
    if kind == "unique_id" and isinstance(data, dict) and data.get("number") is not None:
        return f"{data.get('prefix')}-{data['number']}" if data.get("prefix") else str(data["number"])
    if kind == "verification" and isinstance(data, dict):
        return str(data.get("state") or "")
    if kind == "place" and isinstance(data, dict):
        return str(data.get("name") or data.get("address") or "")
    return ""


def _rollup(data: Json, people: Names, pages: Names) -> str:
    kind = str(data.get("type") or "")
    if kind == "array":
        return _joined(property_text(v, people, pages) for v in _dicts(data.get("array")))
    if kind == "date":
        return _date(data.get("date"))
    if kind == "number":
        return _number(data.get("number"))
    return ""


def _person(user: Json, people: Names) -> str:
    name = user.get("name")
    return str(name) if name else people(str(user.get("id") or "")) or ""


def _date(data: object) -> str:
    if not isinstance(data, dict) or not data.get("start"):
        return ""
    start, end = str(data["start"]), data.get("end")
    return f"{start} → {end}" if end else start


def _number(value: object) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return ""
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _dicts(value: object) -> list[Json]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _joined(values: Iterable[str]) -> str:
    return ", ".join(v for v in values if v)
