"""The OAuth scopes Lore's bot token needs, each with why, from the Web API methods Lore
calls and the events it subscribes to. `manifest.yml` asks for exactly `BOT_SCOPES` (a test
derives the methods and events from the code and checks the three agree), and `lore doctor`
names whatever the installed token lacks (`missing`)."""

from __future__ import annotations

from collections.abc import Iterable

METHOD_SCOPES: dict[str, frozenset[str]] = {
    "auth.test": frozenset(),
    "chat.postMessage": frozenset({"chat:write"}),
    "chat.postEphemeral": frozenset({"chat:write"}),
    "chat.update": frozenset({"chat:write"}),
    "chat.startStream": frozenset({"chat:write"}),
    "chat.appendStream": frozenset({"chat:write"}),
    "chat.stopStream": frozenset({"chat:write"}),
    "chat.getPermalink": frozenset(),
    "assistant.threads.setStatus": frozenset({"chat:write"}),
    "assistant.threads.setSuggestedPrompts": frozenset({"chat:write"}),
    "assistant.threads.setTitle": frozenset({"chat:write"}),
    "reactions.add": frozenset({"reactions:write"}),
    "reactions.remove": frozenset({"reactions:write"}),
    "users.info": frozenset({"users:read", "users:read.email"}),
    "usergroups.users.list": frozenset({"usergroups:read"}),
    # Lore reads channels, private channels and group DMs it is in (never other DMs).
    "users.conversations": frozenset({"channels:read", "groups:read", "mpim:read"}),
    "conversations.info": frozenset({"channels:read", "groups:read", "mpim:read"}),
    # Who is in a channel an attachment is restricted to (`lore access restrict`).
    "conversations.members": frozenset({"channels:read", "groups:read", "mpim:read"}),
    "conversations.replies": frozenset({"channels:history", "groups:history", "im:history", "mpim:history"}),
    "conversations.history": frozenset({"channels:history", "groups:history", "im:history", "mpim:history"}),
    "files.info": frozenset({"files:read"}),
    "views.open": frozenset(),
    "views.update": frozenset(),
    "views.publish": frozenset(),
    # Sign in with Slack (the console): the app's client credentials, then the person's own
    # token with the user scopes `openid` and `profile`; nothing of the bot token's.
    "openid.connect.token": frozenset(),
    "openid.connect.userInfo": frozenset(),
}
"""Every Web API method Lore may call, and the scopes it needs for the conversations Lore
uses it on."""

EVENT_SCOPES: dict[str, frozenset[str]] = {
    "app_mention": frozenset({"app_mentions:read"}),
    "message.channels": frozenset({"channels:history"}),
    "message.groups": frozenset({"groups:history"}),
    "message.im": frozenset({"im:history"}),
    "message.mpim": frozenset({"mpim:history"}),
    "member_joined_channel": frozenset({"channels:read", "groups:read"}),
    "app_home_opened": frozenset(),
    "reaction_added": frozenset({"reactions:read"}),
    "assistant_thread_started": frozenset({"assistant:write"}),
    "assistant_thread_context_changed": frozenset({"assistant:write"}),
    "app_uninstalled": frozenset(),
    "tokens_revoked": frozenset(),
}
"""Every bot event Lore may subscribe to, and the scopes Slack requires for it."""

FEATURE_SCOPES: dict[str, str] = {
    "files:read": "download the files people ask Lore to remember (url_private)",
    "commands": "the /lore slash command and the “Add to Lore's memory” and “Save as the answer” shortcuts",
}

BOT_SCOPES: dict[str, str] = {
    "app_mentions:read": "hear @lore in channels",
    "assistant:write": "Lore's assistant threads (the Messages tab's agent view)",
    "channels:history": "read a public channel's thread Lore answers in, and follow-ups",
    "channels:read": "channel names, whether a channel is public, and who is in it",
    "chat:write": "answer, stream answers, reply privately, show status",
    "commands": FEATURE_SCOPES["commands"],
    "files:read": FEATURE_SCOPES["files:read"],
    "groups:history": "the same in private channels Lore is in",
    "groups:read": "the same for private channels Lore is in",
    "im:history": "direct messages to Lore",
    "mpim:history": "group DMs Lore is in",
    "mpim:read": "whether a conversation is a group DM (private)",
    "reactions:read": "✅ on a reply in a help channel's thread marks it as the verified answer",
    "reactions:write": "the “working on it” reaction",
    "usergroups:read": "who is in a user group named as a channel's experts, or an attachment is restricted to",
    "users:read": "names, and who is a workspace admin or a guest",
    "users:read.email": "a person's confirmed email: who they are in connected sources (Confluence), "
    "so that private answers use what those sources let them read",
}
"""What the bot token must be granted, and why."""


def needed(methods: Iterable[str], events: Iterable[str]) -> frozenset[str]:
    """The scopes some methods and events need (KeyError for one this module doesn't know)."""
    scopes: set[str] = set()
    for method in methods:
        scopes |= METHOD_SCOPES[method]
    for event in events:
        scopes |= EVENT_SCOPES[event]
    return frozenset(scopes)


def missing(granted: Iterable[str]) -> list[str]:
    """The scopes Lore needs that were not granted, sorted."""
    return sorted(set(BOT_SCOPES) - set(granted))


def unused(granted: Iterable[str]) -> list[str]:
    """Scopes granted that Lore does not use (worth removing), sorted."""
    return sorted(set(granted) - set(BOT_SCOPES))
