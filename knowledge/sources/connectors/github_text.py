"""What of a GitHub repository is indexed, and how its issues, pull requests and discussions
read as documents.

- `Selection`: an attachment's options: which parts (documentation files, issues, pull
  requests, discussions), which files (gitignore-style patterns, `pathspec`), whether closed
  issues and pull requests are kept.
- `thread_text`: an issue, a pull request or a discussion as Markdown: a line of facts
  (number, state, labels, who opened it and when), its body, then each comment under a
  heading of its own (who, when) whose link is the comment's, so that a passage quoted from
  a comment is cited with the comment's address.
- `notebook_markdown`: a Jupyter notebook's Markdown cells (code and outputs left out).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import pathspec

from knowledge.extraction.formats import MARKDOWN, TEXT, type_from_name

PARTS = ("docs", "issues", "pulls", "discussions")
DEFAULT_INCLUDE = (
    "README*",
    "*.md",
    "*.markdown",
    "*.rst",
    "*.adoc",
    "*.asciidoc",
    "*.ipynb",
    "docs/**/*.txt",
    "doc/**/*.txt",
)
"""The README, `docs/` and every other documentation file (Markdown, reST, AsciiDoc,
notebooks; plain text only under docs folders, where it is prose, not `requirements.txt`)."""
DEFAULT_EXCLUDE = ("node_modules/", "vendor/", "third_party/", ".github/", "LICENSE*")
"""Other people's documentation, issue templates and licences."""
NOTEBOOK = "ipynb"
MAX_PATTERNS = 50  # include/exclude patterns a source may set: bounds matching every path


@dataclass(frozen=True)
class Selection:
    parts: tuple[str, ...] = PARTS
    include: tuple[str, ...] = DEFAULT_INCLUDE
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    closed: bool = True
    """Closed issues and pull requests are indexed too (a decision argued there still holds)."""
    _included: pathspec.GitIgnoreSpec = field(init=False, repr=False, compare=False)
    _excluded: pathspec.GitIgnoreSpec = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_included", pathspec.GitIgnoreSpec.from_lines(self.include))
        object.__setattr__(self, "_excluded", pathspec.GitIgnoreSpec.from_lines(self.exclude))

    def wants(self, path: str) -> bool:
        """Whether the file at `path` (from the repository's root) is indexed: a documentation
        file that an include pattern matches and no exclude pattern does."""
        return bool(type_of(path)) and self._included.match_file(path) and not self._excluded.match_file(path)

    def skips_folder(self, path: str) -> bool:
        """Whether nothing under the folder at `path` can be indexed (it is excluded)."""
        return self._excluded.match_file(path.rstrip("/") + "/")

    def as_mapping(self) -> dict[str, Any]:
        return {
            "parts": list(self.parts),
            "include": list(self.include),
            "exclude": list(self.exclude),
            "closed": self.closed,
        }

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> Selection:
        """Validated options (defaults for what is left out); ValueError saying what is wrong."""
        unknown = set(values) - {"parts", "include", "exclude", "closed"}
        if unknown:
            raise ValueError(f"unknown GitHub options: {', '.join(sorted(unknown))}")
        parts = _strings(values.get("parts", PARTS), "parts")
        wrong = [p for p in parts if p not in PARTS]
        if wrong or not parts:
            raise ValueError(f"parts are some of {', '.join(PARTS)} (not {', '.join(wrong) or 'none'})")
        closed = values.get("closed", True)
        if not isinstance(closed, bool):
            raise ValueError("closed is true or false")
        try:
            return cls(
                tuple(dict.fromkeys(parts)),
                _strings(values.get("include", DEFAULT_INCLUDE), "include"),
                _strings(values.get("exclude", DEFAULT_EXCLUDE), "exclude"),
                closed,
            )
        except (ValueError, TypeError) as exc:  # pathspec: a pattern it cannot read
            raise ValueError(f"a file pattern is not valid: {exc}") from exc


def _strings(value: object, name: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [v for v in value.split(",")]
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{name} is a list of strings")
    found = tuple(v.strip() for v in value if v.strip())
    if len(found) > MAX_PATTERNS or any(len(v) > 200 or "\n" in v for v in found):
        raise ValueError(f"{name}: at most {MAX_PATTERNS} patterns of 200 characters")
    return found


def check_options(values: Mapping[str, Any]) -> dict[str, Any]:
    return Selection.from_mapping(values).as_mapping()


def type_of(path: str) -> str | None:
    """The MIME type Lore reads a documentation file as, None for anything else."""
    lower = path.lower()
    if lower.endswith("." + NOTEBOOK):
        return MARKDOWN
    if lower.endswith(".asciidoc"):
        return TEXT
    found = type_from_name(path)
    if found in (MARKDOWN, TEXT):
        return found
    name = path.rsplit("/", 1)[-1].lower()
    return TEXT if name.startswith("readme") and "." not in name else None


def notebook_markdown(data: bytes) -> str:
    """The Markdown cells of a notebook, in order; ValueError when it is not a notebook."""
    notebook = json.loads(data)
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list):
        raise ValueError("not a Jupyter notebook (no cells)")
    parts = []
    for cell in cells:
        if isinstance(cell, dict) and cell.get("cell_type") == "markdown":
            source = cell.get("source")
            parts.append("".join(source) if isinstance(source, list) else str(source or ""))
    return "\n\n".join(p.strip() for p in parts if p.strip())


@dataclass(frozen=True)
class Post:
    """A comment (or a thread's opening post) as it reads."""

    author: str
    at: datetime | None
    body: str
    url: str
    label: str = "Comment"
    """What the heading calls it: "Comment", "Answer", "Reply"."""
    replies: tuple[Post, ...] = ()


def heading(post: Post) -> str:
    """ "Comment by grace" (a second one of hers: "Comment by grace (2)")."""
    return f"{post.label} by {post.author}"


def thread_text(facts_line: str, body: str, posts: Sequence[Post]) -> tuple[str, dict[str, str]]:
    """The thread as Markdown, and the link of each comment by its heading."""
    lines = [facts_line, "", body.strip() or "(no description)"]
    anchors: dict[str, str] = {}
    for post in posts:
        lines += _post(post, "##", anchors)
    return "\n".join(lines).strip() + "\n", anchors


def _post(post: Post, level: str, anchors: dict[str, str]) -> list[str]:
    title = _unique(heading(post), anchors)
    anchors[title] = post.url
    when = f" on {post.at:%Y-%m-%d %H:%M}" if post.at else ""
    said = f"{post.author} {_VERBS.get(post.label, 'wrote')}{when}:"  # who said it, in the passage too
    lines = ["", f"{level} {title}", "", said, "", post.body.strip() or "(empty)"]
    for reply in post.replies:
        lines += _post(reply, level + "#", anchors)
    return lines


_VERBS = {"Comment": "commented", "Answer": "answered", "Reply": "replied"}


def _unique(title: str, taken: Mapping[str, str]) -> str:
    if title not in taken:
        return title
    n = 2
    while f"{title} ({n})" in taken:
        n += 1
    return f"{title} ({n})"


def facts_line(what: str, number: int, repository: str, details: Iterable[str]) -> str:
    """`Issue #12 in acme/payments · closed · labels: bug · opened by ada on 2024-05-01`."""
    return " · ".join([f"{what} #{number} in {repository}", *(d for d in details if d)])
