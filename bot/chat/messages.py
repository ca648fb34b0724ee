"""Every sentence Lore says in chat, in one place, so wording is easy to review and test.

Sentences are Slack mrkdwn. Every name, reference, link or reason in them that a user, a
document or a site supplied is escaped here (`e`), so none can mention, link or format;
the shell and the CLI show them through `bot.chat.render.plain`, which undoes it. The
reasons that `too_big`, `login_page` and `download_failed` build are plain text: they
travel in errors and are escaped once, by `failed_file`, when shown.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from bot.app.actions.threads import CAPPED, HELD
from bot.chat.commands import DECLARATIONS, Section
from bot.chat.mrkdwn import escape as e
from knowledge import Count, Folder, JobCounters, Notice, NoticeKind
from storage.access import Given

HELP_LEAD = "Here's what I can do:\n• *Ask me anything* — I answer from this conversation's enabled indexes and cite my sources."


def help_text() -> str:
    """`help`: every command, by section, with how people say it (from the declarations)."""
    lines = [HELP_LEAD]
    for section in Section:
        declared = [d for d in DECLARATIONS if d.section == section]
        if declared:
            examples = "; ".join(" or ".join(f"“{x}”" for x in d.examples) for d in declared)
            lines.append(f"• *{section.value}*: {examples}.")
    return "\n".join(lines)


WORKING = "Looking through my memory…"
LOOKING_PRIVATELY = "Looking through my memory… (only you will see the answer)"
NOT_SHAREABLE = "I can't share that answer any more."


def shared_by(user: str, question: str) -> str:
    """Above an answer someone shared from `/lore`."""
    shown = question if len(question) <= 300 else question[:299] + "…"
    shown = shown.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return f"<@{user}> shared Lore's answer to “{shown}”"


STATUS = "is looking through its memory…"
LOADING_MESSAGES = (
    "Looking through my memory…",
    "Reading the passages that match…",
    "Checking my sources…",
)
PROMPTS_TITLE = "Ask me about what your team knows"
SUGGESTED_PROMPTS = (
    ("What can you do?", "help"),
    ("What do you remember?", "what's in your memory?"),
    ("Which indexes can I use?", "list indexes"),
    ("Ask about the channel I'm in", "What has been decided in the channel I'm looking at?"),
)


CONNECT_SLACK = (
    "Slack is not configured, so Lore runs in your terminal. "
    "To connect Slack, set SLACK_BOT_TOKEN and SLACK_APP_TOKEN (see README: Connect Slack)."
)
NO_FILES = (
    "I don't see any files on this message or on the message it replies to. "
    "Attach the files and mention me again, or reply “remember this” under the message that has them."
)
NOT_IN_A_THREAD = (
    "Say “remember this thread” as a reply in the thread you want me to save, and I'll keep "
    "every message in it, who wrote it and when, with a link back to it."
)
PARTNERS_NOT_ANSWERED = (
    "Lore answers only the people of the workspace it is installed in here "
    "(its admins have turned it off for other organisations in shared channels)."
)
NOTHING_TO_ASK = "What would you like to know? Ask me a question, or say “help”."
INDEX_GONE = "That index no longer exists."
ANSWER_FAILED_NOTE = "I couldn't answer this one; I've told the asker why."


def added(name: str, index: str, chunks: int) -> str:
    return f"Added *{e(name)}* to the *{e(index)}* index ({plural(chunks, 'passage')}). Ask me about it any time."


def updated(name: str, index: str, chunks: int) -> str:
    return (
        f"Updated *{e(name)}* in the *{e(index)}* index with its new content ({plural(chunks, 'passage')})."
    )


def already(name: str, index: str) -> str:
    return f"*{e(name)}* is already in memory (the *{e(index)}* index); nothing to do."


def thread_saved(index: str, count: int, authors: Sequence[str], chunks: int, *, updated: bool) -> str:
    who = _and(list(authors[:5]) + ([f"{len(authors) - 5} more"] if len(authors) > 5 else []))
    what = f"{plural(count, 'message')} from {who}" if who else plural(count, "message")
    if updated:
        return f"Updated this thread in the *{index}* index: now {what} ({plural(chunks, 'passage')})."
    return f"Saved this thread to the *{index}* index: {what} ({plural(chunks, 'passage')}). Ask me about it any time; I'll link back here."


def kept_private(index: str, default: str) -> str:
    """A private channel's thread went to its own index, not the conversation's default."""
    return (
        f"This channel is private, so I kept it in its own *{e(index)}* index, which only its members "
        f"can read, not in *{e(default)}*."
    )


def shortcut_saved(index: str, what: str, count: int, unchanged: bool) -> str:
    if unchanged:
        return f"That thread is already in the *{index}* index ({what}) as it is now."
    return f"Saved that thread ({plural(count, 'message')}) to the *{index}* index ({what}). Only you can see this note."


PICK_ANOTHER = "Save it to another index"
PICK_ANOTHER_LABEL = "Choose another index to save this thread to"
PICK_LABEL = "Save the thread to"


def did_you_mean(said: str, examples: Sequence[str]) -> str:
    """A line that starts like a command but is none: the closest commands."""
    shown = " or ".join(f"“{e(x)}”" for x in examples)
    return f"I didn't understand “{e(said)}” as a command. Did you mean {shown}? Say “help” for all of them."


def no_such_path(paths: Sequence[str], where: str) -> str:
    """Files named in a shell line that are not there."""
    names = _and([f"“{e(p)}”" for p in paths])
    return f"I can't find {names} (looking in {e(where)}). Name a file or folder that exists, like ./docs."


NOT_YOUR_CONVERSATION = (
    "I can only save messages from conversations you are in: a channel or group DM you are a "
    "member of, or your DM with me."
)


def thread_partly_read(error: str) -> str:
    """The shortcut saved the message, but not the rest of its thread."""
    return (
        f"I couldn't read the rest of its thread (Slack said {e(error)}), so I kept the message alone; "
        "invite me to the channel to save whole threads."
    )


def thread_unreadable(error: str) -> str:
    return f"I couldn't read this thread: Slack said {error}. Check that I'm a member of this channel."


def thread_unchanged(index: str) -> str:
    return f"This thread is already in the *{index}* index as it is now; nothing to do."


def mentions_required(required: bool, is_dm: bool) -> str:
    if is_dm:
        return "In a DM I always answer; this setting matters in channels."
    if required:
        return "From now on I answer here only when mentioned, also in threads I've answered in."
    return "From now on I also answer follow-ups in threads I've answered in here, without a mention."


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
            f"Done reading *{label}* in {_duration(seconds)}: {plural(read, 'thread or hour of chat', 'threads and hours of chat')} "
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


def dm_files_added(names: Sequence[str]) -> str:
    return f"I added {_and([e(n) for n in names])} to your personal index. Ask me about {'it' if len(names) == 1 else 'them'} here any time."


def failed_file(reason: str) -> str:
    """A plain-text reason (an error's) as a sentence, escaped."""
    reason = e(reason)
    return reason[0].upper() + reason[1:] + ("" if reason.endswith((".", "?", "!")) else ".")


def too_big(name: str, size_mb: float, limit_mb: int) -> str:
    return f"I couldn't read {name}: it is {size_mb:.0f} MB; the limit is {limit_mb} MB."


def login_page(name: str) -> str:
    return (
        f"I couldn't download {name}: Slack sent a sign-in page instead of the file. "
        "Check that I have the files:read scope and am a member of this channel."
    )


def download_failed(name: str, detail: str) -> str:
    return f"I couldn't download {name}: {detail}."


def foreign_file_refused(name: str, host: str, reason: str) -> str:
    """A shared file whose link is not on Slack: Slack's credentials never go there."""
    return (
        f"I couldn't download {name}: it is stored at {host}, not on Slack, and I fetch such links "
        f"only as public web pages, never with Slack credentials: {reason}."
    )


def enabled(index: str, what: str) -> str:
    return f"Enabled the *{e(index)}* index ({e(what)}) here. I'll search it for every question."


def already_enabled(index: str, what: str) -> str:
    return f"The *{e(index)}* index ({e(what)}) is already enabled here."


def disabled(index: str, what: str) -> str:
    return f"Disabled the *{e(index)}* index ({e(what)}) here."


def not_enabled(index: str, what: str) -> str:
    return f"The *{e(index)}* index ({e(what)}) wasn't enabled here."


def made_default(index: str, what: str) -> str:
    return f"New documents here now go into the *{e(index)}* index ({e(what)})."


def documents_only(index: str, what: str, on: bool) -> str:
    if on:
        return (
            f"Answers that draw on the *{e(index)}* index ({e(what)}) now come from its documents alone, "
            "wherever it is enabled: when they don't say, I'll say I don't know."
        )
    return f"Answers that draw on the *{e(index)}* index ({e(what)}) may use general knowledge again, labelled as such."


def settings_locked(locked: bool) -> str:
    if locked:
        return "Locked this channel's settings: only workspace admins can change its indexes and answer mode now."
    return "Unlocked this channel's settings: its members can enable and disable indexes again."


def created(index: str) -> str:
    return f"Created the shared *{e(index)}* index and enabled it here. Anyone in the workspace can enable it too."


def confirm_delete(index: str, documents: int) -> str:
    return f"Delete the *{e(index)}* index and its {plural(documents, 'document')}? This cannot be undone."


def deleted(index: str) -> str:
    return f"Deleted the *{e(index)}* index."


def delete_cancelled(index: str) -> str:
    return f"Kept the *{e(index)}* index."


def forgot(names: Sequence[str], index: str) -> str:
    return f"Forgot {_and([f'*{e(n)}*' for n in names])} (from the *{e(index)}* index)."


def nothing_to_forget(reference: str, index: str) -> str:
    return f"I couldn't find a document matching “{e(reference)}” in the *{e(index)}* index. Say “what's in your memory” to see its documents."


def no_index_here() -> str:
    return "There is no index enabled here. Enable one with “enable the <name> index” or create one with “create an index called <name>”."


def mode_set(mode: str) -> str:
    return f"Answers here now use *{e(mode)}* mode."


def strategy_set(strategy: str) -> str:
    return f"Retrieval strategy here is now *{e(strategy)}*."


def unknown_mode(mode: str) -> str:
    return f"I don't know the {e(mode)} mode. Try rag only, llm only, hybrid, smart fallback, rag priority or llm priority."


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
            f"Done indexing *{site}* in {_duration(seconds)}: {plural(pages, 'page')} indexed "
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


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"


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


def fetching(url: str) -> str:
    return f"Reading {e(url)}…"


def feedback_thanks(helpful: bool, indexes: Sequence[str], given: Given) -> str:
    """After 👍/👎: who will see it (never a promise of learning that does not happen)."""
    lead = "Thanks! Glad it helped." if helpful else "Thanks for telling me."
    if given == Given.DM:
        return (
            f"{lead} It stays with you: say “show feedback” in your DM with me to see it. "
            "Workspace admins only see that an answer was judged, never what it said."
        )
    if given == Given.PRIVATE_CHANNEL:
        return (
            f"{lead} Members of this channel who look after its indexes will see it (“show feedback” "
            "here); workspace admins only see that an answer was judged."
        )
    if not indexes:
        return f"{lead} Workspace admins will see it (“show feedback”)."
    names = _and([f"*{e(name)}*" for name in indexes])
    return (
        f"{lead} The people who look after the {names} {'index' if len(indexes) == 1 else 'indexes'} "
        "and workspace admins will see it (“show feedback”)."
    )


FEEDBACK_FORM_TITLE = "What went wrong?"
FEEDBACK_REASONS = {
    "wrong": "It's wrong",
    "outdated": "It's out of date",
    "missing source": "A source is missing",
    "other": "Something else",
}
FEEDBACK_COMMENT_LABEL = "Tell the people who look after these documents more (optional)"
NO_FEEDBACK = (
    "Nothing to review: no answer from the indexes you look after was marked unhelpful, "
    "none of their questions went unanswered or to the experts, and they keep no verified answer."
)


def feedback_withheld(count: int) -> str:
    """Answers a reviewer may count but not read (given in someone's DM or a private channel)."""
    was, them = ("was", "it") if count == 1 else ("were", "them")
    return (
        f"{plural(count, 'more answer')} {was} given where you can't read {them} "
        "(someone's DM, or a private channel you are not in here): counted, not shown."
    )


REVIEW_LEAD = (
    "Answers that didn't help, questions I couldn't answer, what was asked of the experts and "
    "the verified answers, by index (newest first):"
)


# --- answers at a glance, help channels, experts, verified answers -------------------------

SHOW_MORE = "Show more"
SHOW_MORE_LABEL = "Show the whole answer, only to you"
VERIFY = "Verify"
VERIFY_LABEL = "Mark this answer as the right one (experts)"
ASK_EXPERT = "Ask an expert"
ASK_EXPERT_LABEL = "Ask this channel's experts in the thread"
SAVE_AS_ANSWER = "Save as the answer"
SAVE_AS_ANSWER_LABEL = "Save your reply as the verified answer to this thread's question"
NOT_A_REPLY = (
    "“Save as the answer” works on a reply in a thread: the thread's first message is the "
    "question, the reply you pick is its answer."
)
NOT_SHOWN_HERE = "I can't show that answer here."


def quoted_from(source: str, quote: str) -> str:
    """A quote in an answer at a glance, after its source (both already made safe); a code
    block opens on a line of its own."""
    return f"From {source}:{chr(10) if quote.startswith('```') else ' '}{quote}"


def sources_line(sources: Sequence[str]) -> str:
    """The sources of an answer in one line (each already made safe)."""
    return "Sources: " + " · ".join(sources)


A_TEAMMATE = "a teammate"
"""Who verified an answer, once they were forgotten (`lore forget-user`)."""


def verified_mark(question: str, verified_by: str, when: datetime, link: str | None) -> str:
    """Under a verified answer: whose it is, when, and its thread (each already made safe)."""
    verified_by = verified_by or A_TEAMMATE
    day = f"{when.day} {when:%b}" if when.year == datetime.now(UTC).year else f"{when.day} {when:%b %Y}"
    thread = f" · <{link}|the thread>" if link else ""
    return f"✅ Verified by {verified_by} on {day}, answering “{question}”{thread}"


def help_mode(on: bool, threshold: float) -> str:
    if on:
        return (
            "From now on I answer questions posted here without a mention, when I'm at least "
            f"{threshold:.0%} sure; otherwise I stay quiet (mention me to hear what I found). "
            "Mark a good reply with “Save as the answer” (or ✅) and I'll answer with it next time."
        )
    return "I no longer answer questions here unless I'm mentioned."


def experts_set(experts: Sequence[str]) -> str:
    if not experts:
        return "This channel has no experts now; I won't offer to ask anyone."
    return (
        f"Experts here: {_and([mention(e) for e in experts])}. When I can't answer, I'll offer to ask "
        "them, and they can verify my answers."
    )


def mention(slack_id: str) -> str:
    """A Slack id stored as an expert, as a mention (a person or a user group)."""
    return f"<!subteam^{slack_id}>" if slack_id.startswith("S") else f"<@{slack_id}>"


def escalation(experts: Sequence[str], asking: str, question: str) -> str:
    """Lore asks the experts in the thread ("Ask an expert", pressed by `asking`)."""
    shown = e(question if len(question) <= 300 else question[:299] + "…")
    return (
        f"{' '.join(mention(x) for x in experts)}: <@{asking}> would like an expert's answer to “{shown}”; "
        "I may not have the right answer. Could one of you reply here? Your reply can become "
        "the verified answer."
    )


NOT_SURE_OFFER = "I'm not sure enough to answer this here. Want me to ask this channel's experts?"
"""To the asker alone, in a help channel with experts, when Lore found something but is not sure."""
ASK_EXPERTS_INSTEAD = "Want me to ask this channel's experts for the right answer?"
"""After 👎 on an answer, where the channel has experts."""


def offer_to_save(question: str) -> str:
    shown = e(question if len(question) <= 200 else question[:199] + "…")
    return f"Thanks for answering “{shown}”. Save your reply as the answer, so I can give it next time?"


def verified_saved(question: str, updated: bool = False) -> str:
    shown = e(question if len(question) <= 200 else question[:199] + "…")
    return (
        f"Saved as the verified answer to “{shown}”. I'll answer with it first when someone asks that again."
    )


NO_QUESTION = "(no question: whoever asked it was forgotten; edit it to write the question it answers)"


def verified_line(question: str, answer: str, by: str, flagged: str | None) -> str:
    if not question:
        question = NO_QUESTION
    q = e(question if len(question) <= 150 else question[:149] + "…")
    a = e(answer if len(answer) <= 200 else answer[:199] + "…")
    state = f" _(awaiting review: {e(flagged)})_" if flagged else ""
    return f"*“{q}”*{state}\n{a}\n_verified by {e(by or A_TEAMMATE)}_"


def verified_removed(question: str) -> str:
    return f"Removed the verified answer to “{e(question[:150])}”."


def verified_expired(question: str) -> str:
    return f"Set aside for review: the answer to “{e(question[:150])}” won't be given until an expert verifies it again."


def verified_renewed(question: str) -> str:
    return f"Verified again: the answer to “{e(question[:150])}”."


def verified_edited(question: str) -> str:
    return f"Updated the verified answer to “{e(question[:150])}”."


def escalated_line(question: str, when: str) -> str:
    return f"“{e(question[:200])}”, asked of the experts {when}"


def verified_review_line(question: str, by: str, when: str, flagged: str | None) -> str:
    state = f" — awaiting review ({e(flagged)})" if flagged else ""
    return f"“{e(question[:200])}”, verified by {e(by or A_TEAMMATE)} {when}{state}"


NO_VERIFIED = "No verified answers here yet. Mark a good reply in a thread with “Save as the answer”."
HOME_VERIFIED = "Verified answers"
HOME_VERIFIED_EDIT = "Edit"
HOME_VERIFIED_EXPIRE = "Set aside for review"
HOME_VERIFIED_RENEW = "Verify again"
HOME_VERIFIED_REMOVE = "Remove"
VERIFIED_FORM_TITLE = "Edit the answer"
VERIFIED_FORM_QUESTION = "The question it answers"
VERIFIED_FORM_LABEL = "The verified answer"


# --- App Home (Slack's Home tab) ---------------------------------------------------------

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
    searched = _and([f"*{n}*" for n in enabled]) if enabled else "nothing (enable an index)"
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


def internal_error() -> str:
    return "Something went wrong on my side while handling that; nothing you sent was lost. Please try again in a moment."


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """`1 passage`, `3 passages` (or the plural given)."""
    return f"{count} {noun if count == 1 else nouns or noun + 's'}"


def _and(items: Sequence[str]) -> str:
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


# -- document-level access from connected sources ----------------------------------------------

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


_NOTICES = {
    NoticeKind.HEDGED: "I'm not sure the documents answer exactly this: check the sources.",
    NoticeKind.KEYWORD_ONLY: "The embedding model failed, so I searched by keyword only.",
    NoticeKind.UNVERIFIED: "The model's answer did not rest every claim on a cited document, so here is "
    "what the documents say.",
    NoticeKind.GENERAL_KNOWLEDGE: "Not from your documents: this answer comes from the model's general knowledge.",
    NoticeKind.PARTLY_GENERAL: "Sentences marked (general knowledge) are not from your documents.",
    NoticeKind.MODEL_FIRST: "Partly from the model's own knowledge: only what cites a source here rests on "
    "your documents.",
}


def notice(said: Notice) -> str:
    """What an answer's notice says, as plain text (every surface shows it; Slack escapes it)."""
    match said.kind:
        case NoticeKind.ELSEWHERE:
            return f"What I found is about {said.detail}, not {' or '.join(said.asked)}."
        case NoticeKind.NO_MODEL:
            return f"No language model is configured, so {said.detail} answers quote the documents."
        case NoticeKind.MODEL_FAILED:
            return _sentence(f"{said.detail}, so here is what the documents say.")
        case NoticeKind.MODEL_SILENT:
            return _sentence(f"{said.detail or 'the model gave no answer'}; here is what the documents say.")
        case NoticeKind.MODEL_PROBLEM:
            return f"{said.detail.capitalize()}."
    return _NOTICES[said.kind]


def _sentence(text: str) -> str:
    return text[0].upper() + text[1:]
