"""Confluence's storage format (XHTML with `ac:` macros and `ri:` resource identifiers) as
the Markdown-flavoured text the chunker reads: headings as `#` lines, lists as `-` and `1.`
items, tables as pipe rows, code macros as fenced blocks, panels kept, navigation dropped.

Bodies are fragments, not documents: they use the `ac:`/`ri:` prefixes without declaring
them and HTML entities XML does not know (`&nbsp;`), so they are wrapped in a root that
declares the prefixes, entities become character references, and lxml's XML parser reads
them with recovery on and entities, DTDs and the network off (no XXE, no billion laughs).
A body lxml cannot read at all falls back to its text without tags.
"""

from __future__ import annotations

import html.entities
import re
from collections.abc import Iterable

import lxml.etree  # type: ignore[import-untyped, unused-ignore]

AC = "http://atlassian.com/content"
RI = "http://atlassian.com/resource/identifier"
AT = "http://atlassian.com/template"
_ROOT_OPEN = f'<lore-root xmlns:ac="{AC}" xmlns:ri="{RI}" xmlns:at="{AT}">'
_PREFIXES = {AC: "ac", RI: "ri", AT: "at"}
_XML_ENTITIES = frozenset({"amp", "lt", "gt", "quot", "apos"})
_ENTITY = re.compile(r"&([A-Za-z][A-Za-z0-9]*);")
_TAG = re.compile(r"<[^>]*>")
_SPACE = re.compile(r"[ \t\r\n\f\v\u00a0]+")
_BLANKS_AROUND_BREAK = re.compile(r" *\n *")
_BACKTICKS = re.compile(r"`+")

HEADINGS = {f"h{n}": n for n in range(1, 7)}
CONTAINERS = frozenset(
    {
        "div",
        "section",
        "article",
        "main",
        "center",
        "body",
        "ac:layout",
        "ac:layout-section",
        "ac:layout-cell",
    }
)
BLOCKS = frozenset(
    {*HEADINGS, *CONTAINERS, "p", "ul", "ol", "table", "pre", "blockquote", "hr", "ac:task-list"}
    | {"ac:rich-text-body", "ac:structured-macro", "ac:macro", "dl"}
)
CODE_MACROS = frozenset({"code", "noformat", "code-block"})
NOTICE_MACROS = {"info": "Info", "note": "Note", "warning": "Warning", "tip": "Tip"}
INLINE_MACROS = frozenset({"status", "jira", "anchor", "emoji", "mention"})
DROPPED_MACROS = frozenset(
    {
        "toc", "children", "pagetree", "pagetreesearch", "recently-updated", "contributors",
        "attachments", "livesearch", "create-from-template", "gallery", "viewfile", "view-file",
        "profile-picture", "roadmap", "blog-posts", "content-by-label", "anchor", "include",
        "excerpt-include", "toc-zone", "space-details", "multimedia", "widget",
    }
)  # fmt: skip
EMPHASIS = {"strong": "**", "b": "**", "em": "_", "i": "_", "del": "~~", "s": "~~"}


def storage_to_markdown(body: str) -> str:
    """The page body as Markdown-flavoured text ('' for an empty body)."""
    if not body.strip():
        return ""
    root = _parse(body)
    if root is None:
        return _plain(body)
    return _joined(_Writer().blocks(root))


def _parse(body: str) -> lxml.etree._Element | None:
    text = _ENTITY.sub(_character_reference, body)
    parser = lxml.etree.XMLParser(
        recover=True,
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        remove_comments=True,
        remove_pis=True,
        huge_tree=False,
    )
    try:
        return lxml.etree.fromstring(f"{_ROOT_OPEN}{text}</lore-root>".encode(), parser)
    except lxml.etree.XMLSyntaxError:
        return None


def _character_reference(match: re.Match[str]) -> str:
    name = match.group(1)
    if name in _XML_ENTITIES:
        return match.group(0)
    codepoint = html.entities.name2codepoint.get(name)
    return f"&#{codepoint};" if codepoint is not None else match.group(0).replace("&", "&amp;")


def _plain(body: str) -> str:
    return " ".join(_TAG.sub(" ", html.unescape(body)).split())


def _joined(blocks: Iterable[str]) -> str:
    kept = [block for block in blocks if block.strip()]
    return "\n\n".join(kept) + "\n" if kept else ""


def name_of(element: lxml.etree._Element) -> str:
    """`ac:structured-macro`, `ri:page`, `p`: the element's name with Confluence's prefixes."""
    tag = element.tag
    if not isinstance(tag, str):
        return ""  # a comment or processing instruction the parser kept
    if tag.startswith("{"):
        namespace, _, local = tag[1:].partition("}")
        prefix = _PREFIXES.get(namespace)
        return f"{prefix}:{local}" if prefix else local
    return tag.lower()


def _attribute(element: lxml.etree._Element, prefix: str, name: str) -> str:
    namespace = {"ac": AC, "ri": RI}[prefix]
    return str(element.get(f"{{{namespace}}}{name}") or "")


def _child(element: lxml.etree._Element, name: str) -> lxml.etree._Element | None:
    return next((c for c in element if name_of(c) == name), None)


def _macro_name(element: lxml.etree._Element) -> str:
    return _attribute(element, "ac", "name").lower()


def _parameter(macro: lxml.etree._Element, name: str) -> str:
    for child in macro:
        if name_of(child) == "ac:parameter" and _attribute(child, "ac", "name") == name:
            return "".join(child.itertext()).strip()
    return ""


def _fence(code: str, language: str = "") -> str:
    longest = max((len(run) for run in _BACKTICKS.findall(code)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{code.strip(chr(10))}\n{fence}"


def _one_line(text: str) -> str:
    return " ".join(text.split())


class _Writer:
    """Walks the tree: `blocks` for flow content, `inline` for phrasing content."""

    def blocks(self, element: lxml.etree._Element) -> list[str]:
        out: list[str] = []
        words: list[str] = []

        def flush() -> None:
            paragraph = _BLANKS_AROUND_BREAK.sub("\n", "".join(words)).strip()
            if paragraph:
                out.append(paragraph)
            words.clear()

        words.append(_SPACE.sub(" ", element.text or ""))
        for child in element:
            if self._is_block(child):
                flush()
                out.extend(self.block(child))
            else:
                words.append(self.inline(child))
            words.append(_SPACE.sub(" ", child.tail or ""))
        flush()
        return out

    def _is_block(self, element: lxml.etree._Element) -> bool:
        name = name_of(element)
        if name in ("ac:structured-macro", "ac:macro"):
            return _macro_name(element) not in INLINE_MACROS
        return name in BLOCKS

    def block(self, element: lxml.etree._Element) -> list[str]:
        name = name_of(element)
        if name in HEADINGS:
            text = _one_line(self.inline_children(element))
            return [f"{'#' * HEADINGS[name]} {text}"] if text else []
        if name in ("ul", "ol"):
            return [self.list(element, ordered=name == "ol")]
        if name == "table":
            return [self.table(element)]
        if name == "pre":
            return [_fence("".join(element.itertext()))]
        if name == "blockquote":
            return ["\n".join(f"> {line}".rstrip() for line in _joined(self.blocks(element)).splitlines())]
        if name == "hr":
            return ["---"]
        if name == "ac:task-list":
            return [self.tasks(element)]
        if name in ("ac:structured-macro", "ac:macro"):
            return self.macro(element)
        if name == "dl":
            return [self.definitions(element)]
        return self.blocks(element)  # p, containers, layouts, rich-text bodies

    def macro(self, element: lxml.etree._Element) -> list[str]:
        name = _macro_name(element)
        if name in CODE_MACROS:
            body = _child(element, "ac:plain-text-body")
            code = "".join(body.itertext()) if body is not None else ""
            return [_fence(code, _parameter(element, "language"))] if code.strip() else []
        if name in DROPPED_MACROS:
            return []
        rich = _child(element, "ac:rich-text-body")
        plain = _child(element, "ac:plain-text-body")
        found = self.blocks(rich) if rich is not None else []
        if not found and plain is not None:
            found = [_one_line("".join(plain.itertext()))]
        title = _parameter(element, "title")
        if name in NOTICE_MACROS and found:
            found[0] = f"**{title or NOTICE_MACROS[name]}:** {found[0]}"
        elif title and found:
            found.insert(0, f"**{title}**")
        return found

    def list(self, element: lxml.etree._Element, *, ordered: bool) -> str:
        lines: list[str] = []
        number = 0
        for item in element:
            if name_of(item) != "li":
                continue
            number += 1
            marker = f"{number}. " if ordered else "- "
            parts = self.blocks(item) or [""]
            indent = " " * len(marker)
            lines.append(marker + parts[0].replace("\n", "\n" + indent))
            lines.extend(indent + part.replace("\n", "\n" + indent) for part in parts[1:])
        return "\n".join(lines)

    def tasks(self, element: lxml.etree._Element) -> str:
        lines = []
        for task in element:
            if name_of(task) != "ac:task":
                continue
            status = _child(task, "ac:task-status")
            done = status is not None and "".join(status.itertext()).strip() == "complete"
            body = _child(task, "ac:task-body")
            text = _one_line(self.inline_children(body)) if body is not None else ""
            lines.append(f"- [{'x' if done else ' '}] {text}")
        return "\n".join(lines)

    def definitions(self, element: lxml.etree._Element) -> str:
        lines = []
        for child in element:
            text = _one_line(self.inline_children(child))
            if text:
                lines.append(f"**{text}**" if name_of(child) == "dt" else f"- {text}")
        return "\n".join(lines)

    def table(self, element: lxml.etree._Element) -> str:
        rows = [row for row in element.iter() if name_of(row) == "tr"]
        cells = [[self.cell(c) for c in row if name_of(c) in ("th", "td")] for row in rows]
        cells = [row for row in cells if row]
        if not cells:
            return ""
        width = max(len(row) for row in cells)
        lines = ["| " + " | ".join(row + [""] * (width - len(row))) + " |" for row in cells]
        lines.insert(1, "|" + " --- |" * width)
        return "\n".join(lines)

    def cell(self, element: lxml.etree._Element) -> str:
        text = " ".join(self.blocks(element)).replace("\n", " ")
        return _one_line(text).replace("|", "\\|")

    def inline_children(self, element: lxml.etree._Element) -> str:
        parts = [_SPACE.sub(" ", element.text or "")]
        for child in element:
            parts.append(
                self.inline(child) if not self._is_block(child) else " " + " ".join(self.block(child))
            )
            parts.append(_SPACE.sub(" ", child.tail or ""))
        return "".join(parts)

    def inline(self, element: lxml.etree._Element) -> str:
        name = name_of(element)
        if name == "br":
            return "\n"
        if name in EMPHASIS:
            text = self.inline_children(element)
            mark = EMPHASIS[name]
            return f"{mark}{text.strip()}{mark}" if text.strip() else text
        if name == "code":
            text = _one_line("".join(element.itertext()))
            return f"`{text}`" if text else ""
        if name == "a":
            text = _one_line(self.inline_children(element))
            href = str(element.get("href") or "")
            return f"[{text}]({href})" if text and href.startswith(("http://", "https://")) else text
        if name == "ac:link":
            return self.link(element)
        if name in ("ac:structured-macro", "ac:macro"):
            return self.inline_macro(element)
        if name == "ac:emoticon":
            return _attribute(element, "ac", "emoji-fallback")
        if name == "time":
            return str(element.get("datetime") or "".join(element.itertext()))
        if name in ("ac:image", "ac:parameter", "ac:placeholder") or name.startswith("ri:"):
            return ""
        return self.inline_children(element)  # span, u, sub, sup, inline comment markers …

    def link(self, element: lxml.etree._Element) -> str:
        for body in ("ac:link-body", "ac:plain-text-link-body"):
            found = _child(element, body)
            if found is not None and "".join(found.itertext()).strip():
                return _one_line(
                    self.inline_children(found) if body == "ac:link-body" else "".join(found.itertext())
                )
        for target in element:
            title = _attribute(target, "ri", "content-title") or _attribute(target, "ri", "filename")
            if title:
                return title
        return _attribute(element, "ac", "anchor")

    def inline_macro(self, element: lxml.etree._Element) -> str:
        name = _macro_name(element)
        if name == "status":
            title = _parameter(element, "title")
            return f"[{title}]" if title else ""
        if name == "jira":
            return _parameter(element, "key")
        return ""
