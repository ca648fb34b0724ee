"""Document-level access from connected sources: people mapped to accounts, restricted attachments, permission syncs."""

from __future__ import annotations

from collections.abc import Sequence

from bot.chat.messages._words import plural
from bot.chat.mrkdwn import escape as e

__all__ = [
    "ACCESS_ADMINS_ONLY",
    "NO_CONNECTED_SOURCES",
    "NO_MAPPINGS",
    "RESTRICT_NEEDS_LINKS",
    "access_verdict",
    "mapped",
    "mappings",
    "permissions_line",
    "permissions_refreshed",
    "restricted",
    "syncs_busy",
    "unmapped",
]


ACCESS_ADMINS_ONLY = "Only workspace admins can ask why someone may or may not read a document."
NO_CONNECTED_SOURCES = "No connected source syncs permissions here yet."
NO_MAPPINGS = (
    "No one is mapped to an account of a connected source. Say “map @someone to github octocat” "
    "(or `lore access map U… octocat`)."
)
RESTRICT_NEEDS_LINKS = (
    "Name the channel or user group so Slack links it (type # or @ and pick it from the list), "
    "as in “restrict the notion attachment to #eng”."
)


def restricted(
    source: str, index: str, names: Sequence[str], failed: Sequence[tuple[str, str]], changed: int
) -> str:
    """A connector attachment restricted to Slack groups (`names`), or no longer (none);
    `failed`: (group, why) whose members could not be read."""
    if not names:
        return (
            f"*{e(source)}* in the *{e(index)}* index is no longer restricted: whoever may search the index "
            f"reads what it brings again ({plural(changed, 'document')} changed)."
        )
    who = ", ".join(e(n) for n in names)
    channels = [n for n in names if n.startswith("#")]
    where = f", and in {', '.join(e(c) for c in channels)}" if channels else ""
    lines = [
        f"Only members of {who} now read what *{e(source)}* brings to the *{e(index)}* index: in private{where} "
        f"({plural(changed, 'document')} changed)."
    ]
    lines += [
        f"• I couldn't read who is in {e(name)} ({e(why)}): nobody reads through it until I can."
        for name, why in failed
    ]
    return "\n".join(lines)


def mapped(user: str, label: str, account: str, *, changed: bool) -> str:
    """`map @alice to github octocat` done (or already so)."""
    if not changed:
        return f"<@{e(user)}> is already mapped to {e(label)} *{e(account)}*; nothing changed."
    return (
        f"<@{e(user)}> is now mapped to {e(label)} *{e(account)}*: from their next question, they read in private "
        f"what that account may read there."
    )


def unmapped(user: str, accounts: Sequence[tuple[str, str]]) -> str:
    """`unmap @alice from github`: the (source label, account) pairs taken back."""
    if not accounts:
        return f"<@{e(user)}> was not mapped to an account there; nothing changed."
    gone = ", ".join(f"{e(label)} *{e(account)}*" for label, account in accounts)
    return f"<@{e(user)}> is no longer mapped to {gone}."


def mappings(rows: Sequence[tuple[str, str, str]]) -> str:
    """Who is mapped to which account: (Slack user, source label, account) rows."""
    if not rows:
        return NO_MAPPINGS
    lines = ["People mapped to accounts of the connected sources:"]
    lines += [f"• <@{e(user)}> → {e(label)} *{e(account)}*" for user, label, account in rows]
    return "\n".join(lines)


def permissions_line(
    restricted: int,
    synced: str | None,
    error: str | None,
    groups_synced: str | None,
    groups_error: str | None,
) -> str:
    """How up to date a connected source's access is: when permissions and groups were last
    synced (`synced` already worded, like “5 minutes ago”), how many of its documents are
    restricted, and a failure, which leaves documents unreadable (fail closed)."""
    if error is not None:
        said = f"permission sync failed: {e(error)}; its {plural(restricted, 'document')} can't be read until one succeeds"
    elif synced is None:
        said = f"permissions not synced yet ({plural(restricted, 'document')} waiting)"
    else:
        said = f"permissions synced {synced}, {plural(restricted, 'document')} restricted"
    if groups_error is not None:
        said += f"; group sync failed: {e(groups_error)} (its groups count as empty)"
    elif groups_synced is not None:
        said += f"; groups synced {groups_synced}"
    else:
        said += "; groups not synced yet"
    return said


def permissions_refreshed(
    documents: int, restricted: int, changed: int, groups: int, failures: Sequence[str]
) -> str:
    said = (
        f"Synced who may read {plural(documents, 'document')} ({restricted} restricted, "
        f"{changed} changed) and the members of {plural(groups, 'group')}."
    )
    if failures:
        said += " Failed, so what they cover can't be read until they succeed: " + "; ".join(
            e(f) for f in failures
        )
    return said


def access_verdict(user: str, document: str, readable: bool) -> str:
    verb = "may read" if readable else "may not read"
    return f"<@{user}> {verb} *{e(document)}*."


def syncs_busy(count: int) -> str:
    return f"{plural(count, 'sync')} already running elsewhere went on there."
