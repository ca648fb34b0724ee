"""The phrasings of document-level access: why someone may read a document, people mapped to
source accounts, attachments restricted to Slack groups, permissions synced."""

from __future__ import annotations

import re

from bot.chat.grammar.reading import Said, regex
from bot.chat.intents import (
    Command,
    ExplainAccess,
    MapAccount,
    RestrictSource,
    UnmapAccount,
)

__all__ = [
    "MAPPINGS",
    "REFRESH_PERMISSIONS",
    "explain_access",
    "map_account",
    "restrict_source",
    "unmap_account",
]


REFRESH_PERMISSIONS = re.compile(
    r"^(?:refresh|re-?sync|sync|update|re-?check)(?: the)? (?:permissions|access|restrictions)"
    r"(?: (?:now|of (?:the )?(?:connected )?sources|from (?:confluence|the sources)))?$",
    re.I,
)
_SOMEONE = r"(?:<@(?P<{0}>[UW][A-Z0-9]+)(?:\|[^>]*)?>|@?(?P<{0}_id>[UW][A-Z0-9]{{6,}}))"
"""A person: a Slack mention (`<@U…>`), or their user id as it is."""
_EXPLAIN_ACCESS = re.compile(
    r"^(?:<@[A-Z0-9]+(?:\|[^>]*)?>[\s,:]*)?(?i:please\s+)?"
    rf"(?:(?i:explain (?:the )?access (?:for|of)) {_SOMEONE.format('user')} (?i:to|on|for) "
    rf"|(?i:why can(?:'|’)?t) {_SOMEONE.format('other')} (?i:read|see) )"
    r"(?P<document>.+?)[\s?.!]*$",
)


def explain_access(said: Said) -> Command | None:
    """Read from the raw message: the user it names is a mention, which reading drops."""
    if not (found := _EXPLAIN_ACCESS.match(said.raw.strip())):
        return None
    document = found.group("document").strip().strip("\"'“”‘’`").strip()
    user = next(found.group(g) for g in ("user", "user_id", "other", "other_id") if found.group(g))
    return ExplainAccess(user, said.urls[0] if said.urls else document) if document else None


_LEAD = r"^(?:<@[A-Z0-9]+(?:\|[^>]*)?>[\s,:]*)?(?i:please\s+)?"
"""A leading mention of Lore and a "please", before a command read from the raw message."""
_ACCOUNT = r"@?(?P<account>[\w.-]+)"
_PERSON = (
    r"(?:<@(?P<user>[UW][A-Z0-9]+)(?:\|[^>]*)?>|@?(?P<user_id>[UW][A-Z0-9]{6,})|@(?P<user_name>[\w.-]+))"
)
"""A person: a Slack mention, their user id, or `@name` (the shell's people, by login name)."""
_SOURCE_NAME = r"[\w.-]+"
_MAP = re.compile(
    _LEAD + rf"(?i:map|link) {_PERSON} (?i:to|as|with) "
    rf"(?:(?P<source>{_SOURCE_NAME}) (?i:(?:user|login|account) )?)?{_ACCOUNT}"
    rf"(?: (?i:on|in|at) (?P<source2>{_SOURCE_NAME}))?[\s.!]*$"
)
_UNMAP = re.compile(
    _LEAD + rf"(?i:unmap|unlink|remove the mapping (?:of|for)) {_PERSON}"
    rf"(?: (?i:from|on|in|at) (?P<source>{_SOURCE_NAME}))?[\s.!]*$"
)
MAPPINGS = regex(
    r"^(?:list|show)(?: me)?(?: the| all)? (?:account |people )?mappings$|^who is mapped(?: to what| to which accounts?)?$"
)
_GROUP = re.compile(
    r"<#(?P<channel>C[A-Z0-9]+)(?:\|(?P<channel_name>[^>]*))?>"
    r"|<!subteam\^(?P<usergroup>S[A-Z0-9]+)(?:\|(?P<usergroup_name>[^>]*))?>"
    r"|(?<![\w#@])(?P<bare>[CGS][A-Z0-9]{6,})\b"
)
_RESTRICT = re.compile(
    _LEAD + r"(?i:restrict|limit) (?:(?i:the) )?(?P<source>.+?)(?: (?i:attachment|source|connection|sync))?"
    r"(?: (?i:in|of|on) (?:(?i:the) )?(?P<index>[\w .#-]+?) (?i:index))? (?i:to) (?:(?i:the) )?"
    r"(?:(?i:members of) )?(?P<whom>.+?)[\s.!]*$"
)
_UNRESTRICT = re.compile(
    _LEAD + r"(?i:unrestrict|(?:lift|remove) the restriction (?:on|of)) (?:(?i:the) )?(?P<source>.+?)"
    r"(?: (?i:attachment|source|connection|sync))?(?: (?i:in|of|on) (?:(?i:the) )?(?P<index>[\w .#-]+?) (?i:index))?"
    r"[\s.!]*$"
)


def _someone(found: re.Match[str]) -> str:
    return next(found.group(g) for g in ("user", "user_id", "user_name") if found.group(g))


def map_account(said: Said) -> Command | None:
    """Read from the raw message: the user it names is a mention, which reading drops."""
    if not (found := _MAP.match(said.raw.strip())):
        return None
    source = found.group("source") or found.group("source2")
    return MapAccount(_someone(found), found.group("account"), source)


def unmap_account(said: Said) -> Command | None:
    if not (found := _UNMAP.match(said.raw.strip())):
        return None
    return UnmapAccount(_someone(found), found.group("source"))


def restrict_source(said: Said) -> Command | None:
    """“restrict the notion attachment to #eng @eng-team”, read from the raw message, where
    Slack spells channels `<#C…|eng>` and user groups `<!subteam^S…|@eng-team>`. A group
    named without Slack's link (plain `#eng`) has no id: the command is still recognised,
    with no group, and the use case asks for a link."""
    raw = said.raw.strip()
    if found := _UNRESTRICT.match(raw):
        return RestrictSource(_attachment(found.group("source")), found.group("index"), ())
    if not (found := _RESTRICT.match(raw)):
        return None
    named = [_group(group) for group in _GROUP.finditer(found.group("whom"))]
    groups, names = [key for key, _ in named], [name for _, name in named]
    if not groups:
        return RestrictSource(_attachment(found.group("source")), found.group("index"), (), unlinked=True)
    return RestrictSource(
        _attachment(found.group("source")), found.group("index"), tuple(groups), tuple(names)
    )


def _group(group: re.Match[str]) -> tuple[str, str]:
    """A Slack channel or user group as Slack linked it: its key (`channel:C…`,
    `usergroup:S…`) and how it is named (`#eng`, `@eng-team`)."""
    if group.group("bare"):
        bare = group.group("bare")
        key = f"usergroup:{bare}" if bare.startswith("S") else f"channel:{bare}"
        name = bare
    elif group.group("channel"):
        key, name = (
            f"channel:{group.group('channel')}",
            "#" + (group.group("channel_name") or group.group("channel")),
        )
    else:
        key = f"usergroup:{group.group('usergroup')}"
        name = group.group("usergroup_name") or group.group("usergroup")
    return key, name if name.startswith(("#", "@")) or key.startswith("channel") else f"@{name}"


def _attachment(said: str) -> str:
    return said.strip().strip("\"'“”‘’`").strip()
