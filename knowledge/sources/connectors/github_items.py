"""Reading GitHub items the listing found changed: a file's blob (base64; a notebook's
Markdown cells), an issue or pull request with its comments, discussions with their answers,
comments and replies (GraphQL, ten at a time), each as an `Item` with its links and facts.
One item that fails is `Skipped`; several in a row, or refused credentials, stop the sync."""

from __future__ import annotations

import base64
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from knowledge.sources.connectors.base import (
    ConnectorError,
    Item,
    Skipped,
    parse_time,
)
from knowledge.sources.connectors.failures import FailureStreak
from knowledge.sources.connectors.github_listing import PAGE_SIZE, Lister, Thread, Validators
from knowledge.sources.connectors.github_repos import Json, NotFound, dig, login
from knowledge.sources.connectors.github_text import (
    NOTEBOOK,
    Post,
    facts_line,
    notebook_markdown,
    thread_text,
    type_of,
)

if TYPE_CHECKING:
    from knowledge.sources.connectors.github_api import GitHubApi

DISCUSSION_BATCH = 10  # discussions per GraphQL query, with their comments: keeps a query's cost low
MAX_BLOB_BYTES = 5 * 1024 * 1024  # a larger file in a repository is data, not documentation


class Reader:
    """Reads the items a `Lister` listed."""

    def __init__(self, api: GitHubApi, listed: Lister) -> None:
        self._api = api
        self._listed = listed
        self._failures = FailureStreak("items")

    async def fetch(self, ids: Sequence[str]) -> list[Item | Skipped]:
        found: list[Item | Skipped] = []
        discussions = []
        for item_id in ids:
            if item_id in self._listed.discussions:
                discussions.append(self._listed.discussions[item_id])
                continue
            title = self._title(item_id)
            if title is None:
                continue
            found += await self._one(
                item_id, title, self._file if item_id in self._listed.files else self._issue
            )
        for start in range(0, len(discussions), DISCUSSION_BATCH):
            batch = discussions[start : start + DISCUSSION_BATCH]
            try:
                found += await self._discussions_of(batch)
                self._failures.succeeded()
            except ConnectorError as exc:
                self._failures.failed(exc)
                found += [
                    Skipped(f"{t.repo.full_name}:discussion:{t.number}", f"discussion #{t.number}", str(exc))
                    for t in batch
                ]
        return found

    def _title(self, item_id: str) -> str | None:
        if item_id in self._listed.files:
            return self._listed.files[item_id].path
        thread = self._listed.issues.get(item_id)
        return f"{thread.repo.full_name}#{thread.number}" if thread else None

    async def _one(
        self, item_id: str, title: str, read: Callable[[str], Awaitable[Item | Skipped]]
    ) -> list[Item | Skipped]:
        try:
            item: Item | Skipped = await read(item_id)
        except NotFound:
            return []  # gone since the listing
        except ConnectorError as exc:
            self._failures.failed(exc)
            return [Skipped(item_id, title, str(exc))]
        self._failures.succeeded()
        return [item]

    async def _file(self, item_id: str) -> Item | Skipped:
        file = self._listed.files[item_id]
        if file.size > MAX_BLOB_BYTES:
            return Skipped(item_id, file.path, f"over {MAX_BLOB_BYTES // (1024 * 1024)} MB")
        blob = await self._api.get_json(f"/repos/{file.repo.full_name}/git/blobs/{file.sha}")
        try:
            text = _text(file.path, blob)
        except ValueError as exc:
            return Skipped(item_id, file.path, str(exc))
        repo = file.repo
        return Item(
            id=item_id,
            title=file.path,
            url=f"{repo.html_url}/blob/{quote(repo.default_branch)}/{quote(file.path)}",
            version=file.sha,
            text=text,
            folder=repo.full_name,
            folder_name=repo.full_name,
            path=(repo.full_name,),
            key=f"{self._api.base_url}/repos/{repo.full_name}/contents/{quote(file.path)}",
            mime_type=type_of(file.path) or "text/plain",
            facts=repo.facts("file", file_path=file.path),
        )

    async def _issue(self, item_id: str) -> Item:
        thread = self._listed.issues[item_id]
        repo, number = thread.repo, thread.number
        raw = thread.raw or await self._api.get_json(f"/repos/{repo.full_name}/issues/{number}")
        comments: list[Json] = []
        if raw.get("comments"):
            url = self._api.url(f"/repos/{repo.full_name}/issues/{number}/comments", {"per_page": PAGE_SIZE})
            async for page, _ in self._listed.pages(url, Validators({}, fresh=True), lambda data: data):
                comments += [c for c in page if isinstance(c, dict)]
        posts = [
            Post(
                login(c.get("user")),
                parse_time(c.get("created_at")),
                str(c.get("body") or ""),
                str(c.get("html_url") or ""),
            )
            for c in comments
        ]
        pull = "pull_request" in raw
        state = "merged" if dig(raw, "pull_request", "merged_at") else str(raw.get("state") or "")
        labels = tuple(str(label.get("name")) for label in raw.get("labels") or [] if isinstance(label, dict))
        opened = parse_time(raw.get("created_at"))
        details = [
            state,
            f"labels: {', '.join(labels)}" if labels else "",
            f"opened by {login(raw.get('user'))}" + (f" on {opened:%Y-%m-%d}" if opened else ""),
        ]
        what = "Pull request" if pull else "Issue"
        text, anchors = thread_text(
            facts_line(what, number, repo.full_name, details), str(raw.get("body") or ""), posts
        )
        return Item(
            id=item_id,
            title=f"{raw.get('title') or what} (#{number})",
            url=str(raw.get("html_url") or f"{repo.html_url}/issues/{number}"),
            version=thread.version,
            text=text,
            folder=repo.full_name,
            folder_name=repo.full_name,
            author=login(raw.get("user")),
            modified=parse_time(raw.get("updated_at")),
            labels=labels,
            path=(repo.full_name, "Pull requests" if pull else "Issues"),
            key=f"{self._api.base_url}/repos/{repo.full_name}/issues/{number}",
            facts=repo.facts("pull_request" if pull else "issue", number=number, state=state),
            anchors=anchors,
        )

    async def _discussions_of(self, threads: Sequence[Thread]) -> list[Item | Skipped]:
        repo = threads[0].repo
        if any(t.repo != repo for t in threads):
            return [
                *await self._discussions_of([t for t in threads if t.repo == repo]),
                *await self._discussions_of([t for t in threads if t.repo != repo]),
            ]
        owner, name = repo.full_name.split("/", 1)
        fields = "\n".join(f"d{t.number}: discussion(number: {t.number}) {{ ...Full }}" for t in threads)
        query = f"query($owner: String!, $name: String!) {{ repository(owner: $owner, name: $name) {{ {fields} }} }}\n{DISCUSSION}"
        data = await self._api.graphql(query, {"owner": owner, "name": name})
        found: list[Item | Skipped] = []
        for thread in threads:
            node = dig(data, "repository", f"d{thread.number}")
            if isinstance(node, dict):
                found.append(self._discussion(thread, node))
        return found

    def _discussion(self, thread: Thread, node: Json) -> Item:
        repo, number = thread.repo, thread.number
        comments = [c for c in dig(node, "comments", "nodes") or [] if isinstance(c, dict)]
        comments.sort(key=lambda c: not c.get("isAnswer"))  # the accepted answer first
        posts = [_post(c, "Answer" if c.get("isAnswer") else "Comment") for c in comments]
        category = str(dig(node, "category", "name") or "")
        opened = parse_time(node.get("createdAt"))
        labels = tuple(str(n.get("name")) for n in dig(node, "labels", "nodes") or [] if isinstance(n, dict))
        details = [
            f"category: {category}" if category else "",
            "answered" if node.get("answer") else "",
            f"labels: {', '.join(labels)}" if labels else "",
            f"opened by {login(node.get('author'))}" + (f" on {opened:%Y-%m-%d}" if opened else ""),
        ]
        text, anchors = thread_text(
            facts_line("Discussion", number, repo.full_name, details), str(node.get("body") or ""), posts
        )
        return Item(
            id=f"{repo.full_name}:discussion:{number}",
            title=f"{node.get('title') or 'Discussion'} (#{number})",
            url=str(node.get("url") or f"{repo.html_url}/discussions/{number}"),
            version=thread.version,
            text=text,
            folder=repo.full_name,
            folder_name=repo.full_name,
            author=login(node.get("author")),
            modified=parse_time(node.get("updatedAt")),
            labels=labels,
            path=(repo.full_name, "Discussions", *((category,) if category else ())),
            key=f"{self._api.base_url}/repos/{repo.full_name}/discussions/{number}",
            facts=repo.facts("discussion", number=number, answered=bool(node.get("answer"))),
            anchors=anchors,
        )


DISCUSSION = """
fragment Full on Discussion {
  number title body url createdAt updatedAt
  author { login }
  category { name }
  labels(first: 20) { nodes { name } }
  answer { id }
  comments(first: 100) {
    nodes {
      url body createdAt isAnswer author { login }
      replies(first: 50) { nodes { url body createdAt author { login } } }
    }
  }
}
"""


def _post(comment: Json, label: str) -> Post:
    replies = [r for r in dig(comment, "replies", "nodes") or [] if isinstance(r, dict)]
    return Post(
        login(comment.get("author")),
        parse_time(comment.get("createdAt")),
        str(comment.get("body") or ""),
        str(comment.get("url") or ""),
        label,
        tuple(_post(r, "Reply") for r in replies),
    )


def _text(path: str, blob: Any) -> str:
    """A blob's text; ValueError when it is not text Lore can read."""
    content = str(dig(blob, "content") or "")
    try:
        data = base64.b64decode(content) if dig(blob, "encoding") == "base64" else content.encode()
    except ValueError as exc:
        raise ValueError("GitHub sent a blob that is not base64") from exc
    if path.lower().endswith("." + NOTEBOOK):
        return notebook_markdown(data)
    if b"\x00" in data[:8192]:
        raise ValueError("not text (a binary file)")
    return data.decode("utf-8", errors="replace")
