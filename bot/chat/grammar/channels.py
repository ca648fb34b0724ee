"""The phrasings of a Slack channel's own commands: save a thread, learn or forget its history,
answer without a mention, help channels, experts and verified answers; and whether a
post asks something."""

from __future__ import annotations

import re

from bot.chat.grammar.reading import MEMORY, POLITE, Said, regex, strip_mentions
from bot.chat.intents import (
    Command,
    HelpChannel,
    RequireMentions,
    SetExperts,
    Teach,
)

__all__ = [
    "ASKING_WORDS",
    "FORGET_HISTORY",
    "LEARN_CHANNEL",
    "LIST_VERIFIED",
    "SAVE_THREAD",
    "asks_something",
    "experts",
    "help_channel",
    "require_mentions",
    "teach",
]


SAVE_THREAD = regex(
    rf"^(?:remember|save|store|keep|memori[sz]e|add|index) (?:this|the|that|our) (?:whole )?(?:thread|conversation|discussion)\s*{MEMORY}?$"
)
_REQUIRE_MENTIONS = regex(
    r"^(?:require|need) (?:an? )?(?:@?mentions?|@lore)(?: here| in this (?:channel|conversation))?$"
    r"|^(?:only )?(?:answer|reply|respond)(?: only)? when (?:i )?(?:@?mentioned|mention you|you(?:['’]re| are) mentioned)(?: here)?$"
)
_NO_MENTIONS = regex(
    r"^(?:don['’]?t|do not|stop|no longer) (?:require|requiring|need|needing) (?:an? )?(?:@?mentions?|@lore)(?: here| in this (?:channel|conversation))?$"
    r"|^(?:answer|reply to|respond to) follow[- ]?ups(?: here)?(?: without (?:an? )?@?mentions?)?$"
)
LEARN_CHANNEL = regex(
    r"^(?:learn|read|index|remember|ingest)(?: from)? (?:this|the) channel(?:['’]s)?(?: (?:history|messages|conversations?))?$"
    r"|^(?:learn|read|index) (?:the )?(?:history|messages) of this channel$"
)
FORGET_HISTORY = regex(
    r"^(?:forget|remove|delete|unlearn) (?:this|the) channel(?:['’]s)?(?: (?:history|messages))?$"
    r"|^(?:forget|remove|delete) (?:the )?(?:history|messages) of this channel$"
    r"|^stop learning (?:this|the) channel$"
)
_HERE = r"(?: here| in this channel)"
_HELP_ON = regex(
    rf"^(?:answer|reply to|respond to) (?:the )?questions{_HERE}(?: without (?:a |being )?mention(?:s|ed)?)?"
    r"(?: (?:when|if) (?:you(?:['’]re| are) )?(?:at least )?(?P<pct>\d{1,3}) ?% (?:sure|confident))?$"
    r"|^make this (?:channel )?a help channel$|^(?:this|make this) (?:is )?a help channel$"
)
_HELP_OFF = regex(
    rf"^(?:stop|don['’]?t|do not|no longer) (?:answering|answer) (?:the )?questions{_HERE}(?: unless mentioned)?$"
    r"|^this is(?: not|n['’]t) a help channel$|^make this channel not a help channel$"
)
_EXPERTS = regex(r"^(?:the )?experts?(?: here| in this channel| for this channel)? (?:are|is)\b(?P<rest>.*)$")
_NO_EXPERTS = regex(
    r"^(?:no experts?(?: here)?|remove (?:the|all) experts?(?: here)?|clear (?:the )?experts?)$"
)
_EXPERT_ID = re.compile(
    r"<@([UW][A-Z0-9]+)(?:\|[^>]*)?>|<!subteam\^([A-Z0-9]+)(?:\|[^>]*)?>|(?<![<\w])@([\w.-]+)"
)
_TEACH = (
    re.compile(
        r"^(?:the )?(?:right |correct )?answer to [\"“'‘](?P<q>[^\"”'’]+)[\"”'’]\s+is[:,]?\s+(?P<a>\S.*)$",
        re.I | re.S,
    ),
    re.compile(r"^(?:the )?(?:right |correct )?answer to (?P<q>.+?) is[:,]\s+(?P<a>\S.*)$", re.I | re.S),
    re.compile(r"^(?:the )?(?:right |correct )?answer to (?P<q>.+?\?) is\s+(?P<a>\S.*)$", re.I | re.S),
)
"""A question in quotes; else one ending with "is:" or with its question mark."""
LIST_VERIFIED = regex(
    r"^(?:list|show)(?: me)?(?: the| all)? verified answers(?: here)?$|^what are the verified answers(?: here)?$"
)


def help_channel(said: Said) -> Command | None:
    if found := _HELP_ON.match(said.text):
        pct = found.group("pct")
        return HelpChannel(True, min(100, int(pct)) / 100 if pct else None)
    return HelpChannel(False) if _HELP_OFF.match(said.text) else None


def experts(said: Said) -> Command | None:
    """“experts here are @a @b”: people and user groups as Slack writes them (`<@U…>`,
    `<!subteam^S…>`), or plain `@names` (the shell's people)."""
    if _NO_EXPERTS.match(said.text):
        return SetExperts(())
    if not _EXPERTS.match(_strip_mentions_keep(said.raw)):
        return None
    found = tuple(dict.fromkeys(next(g for g in m.groups() if g) for m in _EXPERT_ID.finditer(said.raw)))
    found = tuple(f for f in found if f.lower() != "lore")
    return SetExperts(found) if found else None


def teach(said: Said) -> Command | None:
    text = POLITE.sub("", strip_mentions(said.raw))
    for pattern in _TEACH:
        if found := pattern.match(text):
            return Teach(found.group("q").strip().rstrip("?").strip() + "?", found.group("a").strip())
    return None


def _strip_mentions_keep(raw: str) -> str:
    """The message with a leading mention of Lore and greetings removed, other mentions kept
    (they are what “experts here are …” names)."""
    text = re.sub(r"^\s*(?:<@[A-Z0-9]+(?:\|[^>]*)?>|@lore\b)[,:]?\s*", "", raw, flags=re.I)
    return POLITE.sub("", text).strip()


_ASKS = re.compile(
    r"\?\s*(?:[:;][\w-]+:\s*)*$"
    r"|^(?:how|what|what['’]s|whats|why|when|where|which|who|whom|whose|can|could|would|will|should|is|are|"
    r"do|does|did|has|have|may|might|any(?:one|body)|is there|are there)\b"
    r"|\b(?:does anyone know|anyone know|how (?:do|can|should) (?:i|we|you)|how to|i need to know|"
    r"wondering (?:how|what|why|whether|if)|any idea)\b",
    re.I,
)
ASKING_WORDS = 3
"""Fewer words do not ask the documents anything ("why?", "any news?")."""


def asks_something(message: str) -> bool:
    """Whether a message posted to nobody asks something (a question mark, or it opens as a
    question does), in a few words at least: Lore answers those alone in a help channel."""
    text = strip_mentions(message)
    return len(text.split()) >= ASKING_WORDS and bool(_ASKS.search(text))


def require_mentions(said: Said) -> Command | None:
    if _REQUIRE_MENTIONS.match(said.text):
        return RequireMentions(True)
    return RequireMentions(False) if _NO_MENTIONS.match(said.text) else None
