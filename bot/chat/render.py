"""Rendering of answers, index listings, documents and feedback: plain text for the CLI and
the shell, Slack mrkdwn (`*_md`) with every name and link escaped (`bot.chat.mrkdwn`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from bot.app.actions.access import AccountMapping, Explanation, SourceStatus
from bot.app.actions.feedback import IndexReview
from bot.app.actions.restrictions import Restricted
from bot.chat import messages
from bot.chat.messages import notice as worded
from bot.chat.messages import plural
from bot.chat.mrkdwn import escape, link, source, unescape
from knowledge import CONNECTORS, Answer, IndexListing, distinct_names, document_names
from storage.records import ConnectionRef, DocumentRef, IndexRef, ReviewItem, VerifiedRef

if TYPE_CHECKING:
    from bot.app.actions.access import Refreshed

_LINK = re.compile(r"<((?:https?|mailto):[^|>]+)\|([^>]+)>")
_EMPHASIS = re.compile(r"(?<![\w*_])([*_])(?=\S)([^*_\n]+?)(?<=\S)\1(?![\w*_])")


_MENTION = re.compile(r"<(?:@|!subteam\^)([^>|]+)(?:\|[^>]*)?>")


def plain(mrkdwn: str) -> str:
    """Slack mrkdwn as terminal text: `<url|name>` → `name <url>`, `<@bob>` → `@bob`,
    `*bold*` and `_it_` unmarked, `&lt;` `&gt;` `&amp;` shown as the characters they stand for."""
    text = _MENTION.sub(r"@\1", _LINK.sub(r"\2 <\1>", mrkdwn))
    return unescape(_EMPHASIS.sub(r"\2", text))


def age(when: datetime, now: datetime | None = None) -> str:
    """`3 days ago`, `just now` …"""
    seconds = ((now or datetime.now(UTC)) - when).total_seconds()
    for unit, size in (
        ("year", 31_536_000),
        ("month", 2_592_000),
        ("day", 86_400),
        ("hour", 3_600),
        ("minute", 60),
    ):
        if seconds >= size:
            count = int(seconds // size)
            return f"{count} {unit}{'s' if count > 1 else ''} ago"
    return "just now"


def render_answer(answer: Answer) -> str:
    """The whole answer, as the shell and the command line show it: a verified answer it
    matched first, then the notices, the answer and its sources."""
    lines = []
    if (found := answer.verified) is not None:
        mark = messages.verified_mark(found.question, found.verified_by, found.verified_at, None)
        lines += [found.answer, mark + (f" <{found.link}>" if found.link else ""), ""]
    lines += [f"_{worded(said)}_" for said in answer.notices]
    lines.append(answer.text)
    if answer.citations:
        lines.append("")
        lines.append("Sources:")
        for c, name in zip(answer.citations, distinct_names(answer.citations), strict=True):
            under = f" › {c.section}" if c.section else ""
            by = f", {c.author}" if c.author else ""
            where = f" <{c.url}>" if c.url else ""
            lines.append(f"  [{c.n}] {name}{under}{where}{by}, added {age(c.time_added)} ({c.index_name})")
    return "\n".join(lines)


def render_listing(rows: Sequence[IndexListing]) -> str:
    if not rows:
        return "No indexes yet. Add a document to create one."
    lines = []
    for row in rows:
        marks = " (default)" if row.default else (" (enabled)" if row.enabled else "")
        lines.append(
            f"{'*' if row.enabled else ' '} {row.index.name} [{row.index.scope}]{marks}: "
            f"{row.stats.documents} documents, {row.stats.chunks} chunks"
        )
    return "\n".join(lines)


def render_documents(index: IndexRef, documents: Sequence[DocumentRef]) -> str:
    if not documents:
        return f"The {index.name} index is empty."
    lines = [f"{len(documents)} documents in {index.name}:"]
    for d, name in zip(documents, document_names(documents), strict=True):
        by = f" by {d.author}" if d.author else ""
        where = f" <{d.url}>" if d.url else ""
        lines.append(
            f"  {d.id:>5}  {name}{where}{by} ({d.mime_type}, {d.chunk_count} chunks, added {age(d.time_added)})"
        )
    return "\n".join(lines)


def render_listing_md(rows: Sequence[IndexListing]) -> str:
    """`list indexes` in Slack mrkdwn (the shell prints it as is)."""
    if not rows:
        return "There are no indexes you can use here yet. Add a document to create one."
    lines = ["Indexes you can use here (✅ enabled, ⭐ default for new documents):"]
    for row in rows:
        mark = "⭐" if row.default else ("✅" if row.enabled else "▫️")
        lines.append(
            f"{mark} *{escape(row.index.name)}* ({row.index.scope}) — "
            f"{plural(row.stats.documents, 'document')}, {plural(row.stats.chunks, 'passage')}"
        )
    return "\n".join(lines)


def render_documents_md(index: IndexRef, documents: Sequence[DocumentRef]) -> str:
    if not documents:
        return (
            f"The *{escape(index.name)}* index is empty. Attach a file and say “add this doc to your memory”."
        )
    lines = [f"Documents in the *{escape(index.name)}* index:"]
    for d, shown in zip(documents, document_names(documents), strict=True):
        name = link(d.url, shown) if d.url else escape(shown)
        by = f" by {escape(d.author)}" if d.author else ""
        lines.append(f"• {name}{by} — {escape(d.mime_type)}, added {age(d.time_added)}")
    return "\n".join(lines)


QUESTION_LIMIT = 200


def render_review_md(reviews: Sequence[IndexReview]) -> str:
    """`show feedback`: per index, its unhelpful answers (with what was wrong, the comments
    and the sources cited) and the questions it could not answer."""
    if not reviews:
        return messages.NO_FEEDBACK
    lines = [messages.REVIEW_LEAD]
    for review in reviews:
        counts = [
            plural(review.total_unhelpful, "unhelpful answer"),
            plural(review.total_unanswered, "unanswered question"),
            plural(len(review.escalated), "question asked of the experts", "questions asked of the experts"),
            plural(len(review.verified), "verified answer"),
        ]
        lines.append(f"*{escape(review.index.name)}* — {', '.join(counts)}")
        lines.extend(f"• 👎 {_reviewed(item)}" for item in review.unhelpful)
        lines.extend(f"• ❓ {_reviewed(item)}" for item in review.unanswered)
        lines.extend(
            f"• 🙋 {messages.escalated_line(a.question, age(a.escalated_at or a.created_at))}"
            for a in review.escalated
        )
        lines.extend(
            f"• ✅ {messages.verified_review_line(v.question, v.verified_by_name, age(v.verified_at), v.flagged)}"
            for v in review.verified
        )
        withheld = review.withheld_unhelpful + review.withheld_unanswered
        if withheld:
            lines.append(f"• 🔒 {messages.feedback_withheld(withheld)}")
    return "\n".join(lines)


def render_verified_md(kept: Sequence[VerifiedRef]) -> str:
    """`list verified answers`: each question, its answer (cut), who verified it; those
    awaiting review say so."""
    if not kept:
        return messages.NO_VERIFIED
    lines = [messages.verified_line(v.question, v.answer, v.verified_by_name, v.flagged) for v in kept]
    return "\n\n".join(lines)


def _reviewed(item: ReviewItem) -> str:
    answer = item.answer
    question = (
        answer.question if len(answer.question) <= QUESTION_LIMIT else answer.question[:QUESTION_LIMIT] + "…"
    )
    parts = [f"“{escape(question)}”, {age(answer.created_at)}"]
    cited = {str(c.get("name")): c.get("url") for c in answer.cited if c.get("name")}
    if cited:
        shown = [source(name, url if isinstance(url, str) else None) for name, url in sorted(cited.items())]
        parts.append("cited " + ", ".join(shown))
    for verdict in item.feedback:
        if verdict.helpful:
            continue
        said = escape(verdict.reason or "unhelpful")
        parts.append(f"{said}: “{escape(verdict.comment)}”" if verdict.comment else said)
    return " — ".join(parts)


def render_principal(principal: str) -> str:
    """`group finance`, `user 5b10ac8d…` (without the source's id)."""
    _, _, rest = principal.partition(":")
    kind, _, value = rest.partition(":")
    return f"{kind} {value}" if value else principal


def source_label(connection: ConnectionRef) -> str:
    """`GitHub (github.com)`: a connection as mappings name it."""
    kind = CONNECTORS.get(connection.kind)
    return f"{kind.label if kind else connection.kind} ({connection.name})"


def render_mapped(mapping: AccountMapping, *, changed: bool) -> str:
    return messages.mapped(
        mapping.user.external_id, source_label(mapping.connection), mapping.account, changed=changed
    )


def render_unmapped(user: str, removed: Sequence[AccountMapping]) -> str:
    return messages.unmapped(user, [(source_label(m.connection), m.account) for m in removed])


def render_mappings(found: Sequence[AccountMapping]) -> str:
    return messages.mappings([(m.user.external_id, source_label(m.connection), m.account) for m in found])


def render_restricted(done: Restricted) -> str:
    kind = CONNECTORS.get(done.source.kind)
    source = f"{kind.label if kind else done.source.kind} {', '.join(done.source.folders)}".strip()
    failed = [
        (name, state.error or "") for name, state in zip(done.names, done.groups, strict=True) if state.error
    ]
    return messages.restricted(source, done.index.name, done.names, failed, done.changed)


def render_explanation(explanation: Explanation) -> str:
    """Why someone may or may not read a document, for an admin (never its text)."""
    x = explanation
    lines = [messages.access_verdict(x.user.external_id, x.document.name, x.readable)]
    where = f"document {x.document.id}, in the *{escape(x.index.name)}* index"
    lines.append(
        f"• {where}: they {'may' if x.may_search_index else 'may not'} search that index from a private place."
    )
    if x.access.unknown:
        lines.append("• Its source's last permission sync failed (or never said), so no one may read it.")
    elif not x.access.clauses:
        lines.append("• Its source lets anyone read it (or it was added in Slack, by the CLI or the API).")
    else:
        clauses = " *and* ".join(
            "(" + " or ".join(escape(render_principal(p)) for p in sorted(c)) + ")" for c in x.access.clauses
        )
        lines.append(f"• Its source lets read it whoever is {clauses}.")
        held = ", ".join(escape(render_principal(p)) for p in sorted(x.principals)) or "nothing"
        email = escape(x.user.email) if x.user.email else "no confirmed email"
        lines.append(f"• They ({email}) are, in the connected sources: {held}.")
        for clause in x.unmet:
            lines.append(
                "• They are none of: " + ", ".join(escape(render_principal(p)) for p in sorted(clause)) + "."
            )
    return "\n".join(lines)


def render_access_status(statuses: Sequence[SourceStatus]) -> str:
    """Each connector attachment's permission and group syncs, one line each."""
    if not statuses:
        return messages.NO_CONNECTED_SOURCES
    lines = []
    for status in statuses:
        permissions, groups = status.permissions, status.groups
        line = messages.permissions_line(
            status.restricted,
            age(permissions.synced_at) if permissions.synced_at else None,
            permissions.error,
            age(groups.synced_at) if groups.synced_at else None,
            groups.error,
        )
        names = [str(n) for n in status.source.options.get("restricted_names") or ()]
        if names and status.source.options.get("restricted_to"):
            line += f"; restricted to the members of {escape(', '.join(names))}"
        lines.append(
            f"• {escape(status.source.kind.capitalize())} {escape(', '.join(status.source.folders))}: {line}"
        )
    return "\n".join(lines)


def permissions_refreshed(refreshed: Refreshed) -> str:
    """What `refresh permissions` did."""
    from knowledge import PermissionReport

    reports, slack = refreshed.reports, refreshed.slack_groups
    permissions = [r for r in reports if isinstance(r, PermissionReport)]
    groups = [r for r in reports if not isinstance(r, PermissionReport)]
    if not reports and not slack:
        return messages.NO_CONNECTED_SOURCES
    failures = (
        [
            f"{r.source.kind.capitalize()} {', '.join(r.source.folders)}: {r.error}"
            for r in permissions
            if r.error
        ]
        + [f"groups of {r.connection.name}: {r.error}" for r in groups if r.error]
        + [s.error for s in slack if s.error]
    )
    return messages.permissions_refreshed(
        sum(r.documents for r in permissions),
        sum(r.restricted for r in permissions if not r.error),
        sum(r.changed for r in permissions),
        sum(r.groups for r in groups) + len(slack),
        failures,
    )
