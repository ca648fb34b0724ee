"""MyST Markdown (Sphinx's Markdown: Click's, Jinja's docs …) read as the reST it stands for.

MyST writes a Sphinx directive as a fenced block whose info string names it in braces,
```` ```{note} ````, ```` ```{code-block} python ````, ```` :::{warning} ````, with its options
(`:caption: hello.py`) first in the block, and reST itself in ```` ```{eval-rst} ````; a
role as `` {func}`confirm` ``; a link target as `(testing)=`; a comment as `% …`. Kept as
they are, a Markdown reader takes every such block for code: a warning, a version note and
a table of contents would be quoted as code, reST examples as code of a language named
`{eval-rst}`. Rewritten as the reST directives and roles they are, the passages are read as
Sphinx shows them (`knowledge.text.quotes`, `knowledge.text.markup`). Plain Markdown is left alone: a
page changes only when it holds a fence whose info string is a name in braces or a role
written as MyST writes it, and then nothing inside its code blocks changes.
"""

from __future__ import annotations

import re

from knowledge.text.syntax import FENCE, OPTION_LINE

_OPENING = re.compile(
    r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,}|:{3,})\{(?P<name>[\w:.-]+)\}[ \t]*(?P<argument>.*?)\s*$"
)
_ROLE = re.compile(r"(?<![^\s(\[\"'])\{(?P<name>[\w:.-]+)\}(?=`[^`\n]+`)")
"""`{func}`confirm``: after a space, an opening bracket or quote, or at the line's start (in
"`/users/{name}` and `x`" the braces are a path's)."""
_TARGET = re.compile(r"^[ \t]*\([\w.:-]+\)=[ \t]*$")
_COMMENT = re.compile(r"^%(?:[ \t]|$)")
_CODE = frozenset(("code-block", "code", "sourcecode", "code-cell"))
MAX_DEPTH = 16
"""Directives nested deeper are left as written (each level is a recursion; a page of a
thousand nested fences must not exhaust the stack)."""
BODY_INDENT = "   "
"""A directive's body, indented under it as reST writes it."""


def as_rest(text: str) -> str:
    """`text` with its MyST directives, roles, targets and comments written as reST (see the
    module docstring); unchanged when it has none."""
    lines = text.split("\n")
    if not any(_OPENING.match(line) or _ROLE.search(line) for line in lines):
        return text  # not MyST: a "% …" line or a "(…)=" one is the page's own text
    return "\n".join(_converted(lines))


def _converted(lines: list[str], depth: int = 0) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if opening := _OPENING.match(line):
            end = _closing(lines, i + 1, opening["fence"])
            out.extend(_directive(opening, lines[i + 1 : end], depth))
            i = end + 1
        elif fence := FENCE.match(line):  # a code block: as written
            end = _closing(lines, i + 1, fence[1])
            out.extend(lines[i : end + 1])
            i = end + 1
        else:
            if not (_TARGET.match(line) or _COMMENT.match(line)):
                out.append(_ROLE.sub(r":\g<name>:", line))
            i += 1
    return out


def _closing(lines: list[str], start: int, fence: str) -> int:
    """The line of the fence closing a block opened by `fence` (as long or longer, of the
    same character, and nothing else), or the last line when the text ends inside it."""
    for j in range(start, len(lines)):
        stripped = lines[j].strip()
        if stripped.startswith(fence) and not stripped.strip(fence[0]):
            return j
    return len(lines)


def _directive(opening: re.Match[str], body: list[str], depth: int) -> list[str]:
    """The reST lines of one MyST directive: its options under it, then its body (itself
    read for MyST, down to `MAX_DEPTH` directives deep), indented; reST given as reST
    (`eval-rst`) as it is."""
    indent, name, argument = opening["indent"], opening["name"], opening["argument"]
    body = _dedented(body, indent)
    if name == "eval-rst":
        return [indent + line if line else line for line in body]
    options, rest = _options(body)
    if name in _CODE:  # code is code: not read for MyST
        name, content = "code-block", rest
    else:
        content = _converted(rest, depth + 1) if depth < MAX_DEPTH else rest
    while content and not content[0].strip():
        content = content[1:]
    while content and not content[-1].strip():
        content = content[:-1]
    head = f"{indent}.. {name}::" + (f" {argument}" if argument else "")
    inner = indent + BODY_INDENT
    return [
        head,
        *(inner + option.strip() for option in options),
        "",
        *(inner + line if line.strip() else "" for line in content),
        "",
    ]


def _options(body: list[str]) -> tuple[list[str], list[str]]:
    """A directive's options (`:caption: app.py` lines, or a `---` block of them) and the
    rest of its body."""
    if body and body[0].strip() == "---":
        end = next((j for j in range(1, len(body)) if body[j].strip() == "---"), None)
        if end is not None:
            return [f":{line.strip()}" for line in body[1:end] if ":" in line], body[end + 1 :]
    j = 0
    while j < len(body) and OPTION_LINE.match(body[j]):
        j += 1
    return body[:j], body[j:]


def _dedented(body: list[str], indent: str) -> list[str]:
    """`body` without the indentation of its directive's fence."""
    return [line[len(indent) :] if line.startswith(indent) else line.lstrip() for line in body]
