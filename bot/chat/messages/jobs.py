"""Indexing jobs: crawling sites, refreshing sources, reading a channel's history."""

from __future__ import annotations

from collections.abc import Mapping

from bot.app.actions.threads import CAPPED, HELD
from bot.chat.messages._words import duration, plural
from bot.chat.mrkdwn import escape as e
from knowledge import Count, JobCounters

__all__ = [
    "NOT_LEARNED",
    "folder_forgotten",
    "held_note",
    "history_forgotten",
    "history_summary",
    "indexing",
    "job_already_running",
    "job_line",
    "job_queued",
    "job_summary",
    "learning",
    "no_jobs",
    "no_site",
    "nothing_running",
    "reading_history",
    "schedule_set",
    "site_forgotten",
    "source_line",
    "stop_requested",
]


def learning(label: str, index: str) -> str:
    return (
        f"Reading *{label}* into the *{index}* index. I'll show progress here, then keep it up to date "
        "as people write, edit and delete messages."
    )


def reading_history(label: str, done: int, found: int) -> str:
    return f"Reading {label}… {done}/{found} threads and hours of chat" if found else f"Reading {label}…"


def history_summary(
    label: str, state: str, counters: Mapping[str, int], seconds: float, error: str | None
) -> str:
    c = JobCounters(counters)
    read = c.pages_indexed
    if state == "succeeded":
        return (
            f"Done reading *{label}* in {duration(seconds)}: {plural(read, 'thread or hour of chat', 'threads and hours of chat')} "
            f"({c[Count.DOCUMENTS_ADDED]} new, {c[Count.DOCUMENTS_UPDATED]} updated, "
            f"{c[Count.DOCUMENTS_UNCHANGED]} unchanged), {plural(c[Count.CHUNKS], 'new passage')}. "
            + (
                f"I stopped at the newest {counters[CAPPED]:,} messages (LORE_LEARN_MAX_MESSAGES); older ones "
                "weren't read. "
                if counters.get(CAPPED)
                else ""
            )
            + (held_note(counters[HELD]) + " " if counters.get(HELD) else "")
            + "Ask me about what was said here."
        )
    if state == "cancelled":
        return f"Stopped reading *{label}* after {plural(read, 'thread or hour of chat', 'threads and hours of chat')}; what was read stays."
    return f"Reading *{label}* failed after {plural(read, 'thread or hour of chat', 'threads and hours of chat')}: {error or 'an unexpected error'}."


def held_note(limit: int) -> str:
    return (
        f"This channel reached my limit (LORE_LEARN_MAX_MESSAGES): I keep the newest {limit:,} messages "
        "of it, so as new ones arrive, the oldest are forgotten."
    )


def history_forgotten(label: str, documents: int) -> str:
    return (
        f"Forgot *{label}*: removed {plural(documents, 'document')} and stopped learning from this channel."
    )


NOT_LEARNED = "I haven't learned this channel's history; say “learn this channel” if you'd like me to."


def no_jobs() -> str:
    return "Nothing has been indexed here yet. Say “add these docs to your memory: <link>” to crawl a site."


def indexing(site: str, done: int, found: int) -> str:
    return f"Indexing {e(site)}… {done}/{found} pages" if found else f"Indexing {e(site)}…"


def job_queued(site: str, index: str) -> str:
    return f"Crawling *{e(site)}* into the *{e(index)}* index. I'll show progress here."


def job_already_running(site: str) -> str:
    return f"I'm already indexing *{e(site)}*; progress is shown where it started. Say “status” to see it."


def job_summary(site: str, state: str, counters: Mapping[str, int], seconds: float, error: str | None) -> str:
    c = JobCounters(counters)
    pages = c.pages_indexed
    site, error = e(site), e(error) if error else None
    lines = []
    if state == "succeeded":
        lines.append(
            f"Done indexing *{site}* in {duration(seconds)}: {plural(pages, 'page')} indexed "
            f"({c[Count.DOCUMENTS_ADDED]} new, {c[Count.DOCUMENTS_UPDATED]} updated, "
            f"{c[Count.DOCUMENTS_UNCHANGED]} unchanged), {plural(c[Count.CHUNKS], 'new passage')}."
        )
    elif state == "cancelled":
        lines.append(f"Stopped indexing *{site}* after {plural(pages, 'page')}; what was indexed stays.")
    else:
        lines.append(
            f"Indexing *{site}* failed after {plural(pages, 'page')}: {error or 'an unexpected error'}."
        )
    if c.skipped:
        lines.append("Skipped: " + "; ".join(f"{n} ({e(reason)})" for reason, n in c.skipped.items()) + ".")
    if c[Count.PAGES_FAILED]:
        lines.append(
            f"{plural(c[Count.PAGES_FAILED], 'page')} could not be fetched; say “status” for details."
        )
    if c[Count.LINKS_BROKEN]:
        lines.append(f"Broken links: {c[Count.LINKS_BROKEN]} (the page answered 404 or 410).")
    if c.attachments_indexed:
        lines.append(f"Also {plural(c.attachments_indexed, 'attachment')} read and indexed.")
    if c[Count.DOCUMENTS_REMOVED]:
        lines.append(f"Removed {plural(c[Count.DOCUMENTS_REMOVED], 'page')} that no longer exist.")
    if state == "succeeded":
        lines.append(f"Ask me anything about {site}.")
    return "\n".join(lines)


def job_line(site: str, state: str, counters: Mapping[str, int], when: str) -> str:
    c = JobCounters(counters)
    return (
        f"• *{e(site)}*: {state}, {plural(c.pages_indexed, 'page')} of {c[Count.PAGES_FOUND]} found — {when}"
    )


def source_line(site: str, schedule: str, refreshed: str, held: int | None = None) -> str:
    line = f"• *{e(site)}* refreshes {e(schedule)} ({refreshed})"
    if held:
        line += f"; it keeps the newest {held:,} messages (LORE_LEARN_MAX_MESSAGES), forgetting the oldest"
    return line


def no_site(reference: str) -> str:
    return f"I'm not indexing a site called “{e(reference)}” here. Say “status” to see the sites I know."


def site_forgotten(site: str, documents: int) -> str:
    return f"Forgot *{e(site)}*: removed its {plural(documents, 'page')} and stopped refreshing it."


def folder_forgotten(folder: str, rest: str) -> str:
    return f"Forgetting *{e(folder)}*: I'm syncing what stays (*{e(rest)}*), which removes its documents."


def stop_requested(site: str) -> str:
    return f"Stopping the indexing of *{e(site)}*…"


def nothing_running(site: str) -> str:
    return f"Nothing is being indexed for *{e(site)}* right now."


def schedule_set(site: str, schedule: str) -> str:
    site, schedule = e(site), e(schedule)
    if schedule == "never":
        return f"I won't refresh *{site}* on my own any more; say “refresh {site}” when you want to."
    return f"I'll refresh *{site}* {schedule}."
