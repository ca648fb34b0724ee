"""App Home (Slack's Home tab): its sections, buttons and forms."""

from __future__ import annotations

from collections.abc import Sequence

from bot.chat.messages._words import and_list, plural

__all__ = [
    "HOME_ADD_PAGE",
    "HOME_ADD_PAGE_LABEL",
    "HOME_ADMIN",
    "HOME_CHANNELS",
    "HOME_CONNECTORS_NONE",
    "HOME_DISABLE",
    "HOME_DOCUMENTS",
    "HOME_ENABLE",
    "HOME_FEEDBACK",
    "HOME_FORM_BAD_URL",
    "HOME_FORM_INDEX",
    "HOME_FORM_SITE",
    "HOME_FORM_URL",
    "HOME_INDEXES",
    "HOME_JOBS",
    "HOME_LOCKED",
    "HOME_NO_CHANNELS",
    "HOME_NO_DOCUMENTS",
    "HOME_PARTNER",
    "HOME_REFRESH",
    "HOME_STOP",
    "HOME_TITLE",
    "home_channel",
    "home_crawling",
    "home_enabled",
    "home_more_indexes",
    "home_personal",
    "home_refreshing",
]


HOME_TITLE = "Lore, your team's memory"
HOME_PARTNER = (
    "Lore is this workspace's memory, and you are here from another organisation. "
    "Ask questions by mentioning Lore in the channels you share with us: it answers there from "
    "that channel's own documents."
)
HOME_INDEXES = "Indexes you can use"
HOME_DOCUMENTS = "Added lately"
HOME_NO_DOCUMENTS = "Nothing yet. Add a page here, or mention me with a file: “add this doc to your memory”."
HOME_JOBS = "Indexing"
HOME_CHANNELS = "Your channels with Lore"
HOME_NO_CHANNELS = "None yet: invite me to a channel (`/invite @lore`) and mention me there."
HOME_FEEDBACK = "Feedback on the indexes you look after"
HOME_ADMIN = "For admins"
HOME_CONNECTORS_NONE = (
    "No connector yet. Say “connect confluence”, “connect github”, “connect google drive” or “connect notion” "
    "in a DM with me."
)
HOME_ADD_PAGE = "Add a page"
HOME_ADD_PAGE_LABEL = "Add a web page to one of your indexes"
HOME_REFRESH = "Refresh"
HOME_STOP = "Stop"
HOME_ENABLE = "Search another index here"
HOME_DISABLE = "Stop searching an index"
HOME_LOCKED = "settings locked by an admin"
HOME_FORM_URL = "Page address"
HOME_FORM_INDEX = "Add it to"
HOME_FORM_SITE = "Crawl the whole site under it, and keep it fresh"
HOME_FORM_BAD_URL = "Enter the page's address, starting with https://"


def home_personal(name: str, documents: int, chunks: int) -> str:
    return (
        f"*Your personal index* (*{name}*): {plural(documents, 'document')}, {plural(chunks, 'passage')}. "
        "Only you can search it, in your DM with me or here."
    )


def home_more_indexes(count: int) -> str:
    return f"…and {count} more: say “list indexes” in a channel to see the ones it can use."


def home_channel(name: str, enabled: Sequence[str], mode: str | None, locked: bool) -> str:
    searched = and_list([f"*{n}*" for n in enabled]) if enabled else "nothing (enable an index)"
    facts = [f"searches {searched}"]
    if enabled:
        facts.append(f"new documents go to *{enabled[0]}*")
    facts.append(f"answers: {mode.replace('_', ' ').lower() if mode else 'default mode'}")
    if locked:
        facts.append(HOME_LOCKED)
    return f"*#{name}* — " + "; ".join(facts)


def home_enabled(index: str, channel: str, on: bool, changed: bool) -> str:
    if not changed:
        return f"The *{index}* index was already {'on' if on else 'off'} in #{channel}."
    return f"#{channel} {'now searches' if on else 'no longer searches'} the *{index}* index."


def home_crawling(site: str, index: str) -> str:
    return f"Crawling *{site}* into the *{index}* index; its progress shows here."


def home_refreshing(site: str) -> str:
    return f"Refreshing *{site}*; its progress shows here."
