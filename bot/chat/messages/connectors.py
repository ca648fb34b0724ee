"""Connecting Confluence, GitHub, Google Drive and Notion, and choosing what they index."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bot.chat.messages.documents import failed_file
from bot.chat.mrkdwn import escape as e
from knowledge import Folder

__all__ = [
    "CONNECT_NOT_ALLOWED",
    "NEEDS_KEY_SETUP",
    "connect_failed",
    "connect_offer",
    "connect_with_cli",
    "connected",
    "shown",
    "space_queued",
    "spaces",
    "unknown_connector",
]


@dataclass(frozen=True)
class _Kind:
    """How the messages about one kind of connector name it and what to say next."""

    label: str
    folders: str
    attach: str
    cli: str


_KINDS = {
    "confluence": _Kind(
        "Confluence",
        "Spaces",
        "“add the <KEY> space to the confluence index”",
        "`lore source add confluence --url https://your-site.atlassian.net/wiki --email you@example.com "
        "--token-env CONFLUENCE_TOKEN` (or `--pat-env VAR` for Data Center); then say "
        "“add the ENG space to the confluence index”",
    ),
    "github": _Kind(
        "GitHub",
        "Repositories",
        "“add the <owner/name> repository to the <name> index”",
        "`lore source add github --token-env GITHUB_TOKEN` (a fine-grained personal access token; "
        "`--app-id ID --installation-id ID --private-key-file app.pem` for a GitHub App, `--url "
        "https://HOST/api/v3` for Enterprise Server); then say “add the acme/payments repository to the "
        "eng index”",
    ),
    "google-drive": _Kind(
        "Google Drive",
        "Folders and shared drives",
        "“add the <folder name> folder to the <name> index” (or its link)",
        "`lore source add google-drive --key-file key.json --act-as you@your-domain` (a service account "
        "with domain-wide delegation; `--client-id ID --client-secret-env VAR --refresh-token-env VAR` for "
        "one user's OAuth client); then say “add the Handbook folder to the handbook index”",
    ),
    "notion": _Kind(
        "Notion",
        "Pages and databases",
        "“add our Notion to the <name> index” (everything shared with Lore's integration) or “add the notion "
        "page <link> to the <name> index”",
        "`lore source add notion --token-env NOTION_TOKEN` (an internal integration's secret, from "
        "notion.so/profile/integrations; share the pages Lore should read with the integration); then say "
        "“add our Notion to the handbook index”",
    ),
}


def _kind(kind: str) -> _Kind:
    return _KINDS.get(kind) or _Kind(kind.capitalize(), "Folders", "“add …”", f"`lore source add {kind}`")


def connect_offer(kind: str) -> str:
    return (
        f"Press the button to connect {_kind(kind).label}. You type the credentials into a private form, "
        "never into this conversation; Lore keeps them encrypted."
    )


def connect_with_cli(kind: str) -> str:
    return (
        f"The shell can't show a private form for credentials, so connect {_kind(kind).label} from the "
        f"command line: {_kind(kind).cli}."
    )


CONNECT_NOT_ALLOWED = (
    "Only workspace admins (and the people an admin lists in LORE_CONNECTOR_ADMINS) can connect "
    "Confluence, GitHub, Google Drive or Notion or choose what they index, since everyone here can then "
    "read what it holds."
)
NEEDS_KEY_SETUP = (
    "Before connecting a source, an admin needs to give Lore a key to encrypt credentials with: "
    "set LORE_SECRET_KEY (make one with "
    '`python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())"`) '
    "and restart Lore."
)


def unknown_connector(kind: str) -> str:
    return (
        f"I can't connect {e(kind)} yet; I know Confluence (“connect confluence”), GitHub (“connect github”) "
        "Google Drive (“connect google drive”) and Notion (“connect notion”)."
    )


def connected(site: str, account: str, hint: str, folders: Sequence[str], kind: str = "confluence") -> str:
    words = _kind(kind)
    listed = (
        ", ".join(e(s) for s in folders[:20]) + (" …" if len(folders) > 20 else "")
        if folders
        else "none visible yet"
    )
    return (
        f"Connected {words.label} at *{e(site)}* as {e(account)} ({e(hint)}). {words.folders} this account can "
        f"read: {listed}. Say {words.attach} to index one."
    )


def shown(folders: Sequence[Folder]) -> list[str]:
    """How a connection's folders are named when it is connected: by key (a space, a
    repository), or by name where the key is an id (a Notion page or database)."""
    return [f.name if f.kind in ("page", "database") else f.key for f in folders]


def connect_failed(reason: str, kind: str = "confluence") -> str:
    return (
        f"I couldn't connect {_kind(kind).label}: {failed_file(reason)} Nothing was saved; say “connect "
        f"{_kind(kind).label.lower()}” "
        "to try again."
    )


def spaces(site: str, found: Sequence[tuple[str, str]], kind: str = "confluence") -> str:
    words = _kind(kind)
    if not found:
        return f"The account connected to *{e(site)}* can't read any {words.folders.lower()[:-1]}."
    lines = "\n".join(f"• *{e(key)}* — {e(name)}" for key, name in found)
    return f"{words.folders} in *{e(site)}*:\n{lines}\nSay {words.attach} to index one."


def space_queued(folder: str, index: str, created: bool, kind: str = "confluence") -> str:
    made = f"I created the shared *{e(index)}* index and enabled it here. " if created else ""
    if kind == "confluence":
        what = f"the Confluence space *{e(folder)}*"
    elif kind == "notion" and folder == "workspace":
        what = "everything shared with Lore in *Notion*"
    else:
        what = f"{_kind(kind).label} *{e(folder)}*"
    return f"{made}Syncing {what} into the *{e(index)}* index. I'll show progress here."
