"""Block Kit for the Home tab and its "add a page" form, from a `Home` (the use case's
facts); no logic beyond layout. A Home view holds at most 100 blocks, so long lists are cut
with a line saying so."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bot.app.actions import VerifiedListing
from bot.app.actions.home import AddTarget, ChannelSummary, Home, JobSummary
from bot.chat import messages
from bot.chat.mrkdwn import escape, source
from bot.chat.render import age, render_access_status
from bot.slack.blocks import Block
from knowledge import Count, JobCounters
from storage.records import VerifiedRef
from storage.values import Scope

VIEW_BLOCKS = 100
SECTION_LIMIT = 3000
OPTION_TEXT = 75
SHOWN_CHANNELS = 20
ADD_URL = "home_add_url"
ENABLE = "home_enable"
DISABLE = "home_disable"
REFRESH_JOB = "home_job_refresh"
STOP_JOB = "home_job_stop"
SITE = "site"
VERIFIED_MENU = "home_verified"
VERIFIED_FORM = "home_verified_edit"
VERIFIED_DOINGS = frozenset({"edit", "expire", "renew", "remove"})
SHOWN_VERIFIED = 15


def partner_view() -> dict[str, Any]:
    """The Home of someone from another organisation (Slack Connect): nothing of the
    workspace's memory, only how to ask."""
    return {"type": "home", "blocks": [_header(messages.HOME_TITLE), _section(messages.HOME_PARTNER)]}


def home_view(
    home: Home, notice: str | None = None, verified: Sequence[VerifiedListing] = ()
) -> dict[str, Any]:
    blocks: list[Block] = [_header(messages.HOME_TITLE)]
    if notice:
        blocks.append(_context(notice))
    blocks.append(_personal(home))
    blocks += [_header(messages.HOME_INDEXES), _section(_index_lines(home))]
    blocks += [_header(messages.HOME_DOCUMENTS), _section(_document_lines(home))]
    if home.jobs:
        blocks.append(_header(messages.HOME_JOBS))
        for job in home.jobs:
            blocks += _job(job)
    blocks.append(_header(messages.HOME_CHANNELS))
    if not home.channels:
        blocks.append(_section(messages.HOME_NO_CHANNELS))
    for summary in home.channels[:SHOWN_CHANNELS]:
        blocks += _channel(summary)
    if verified:
        blocks.append(_header(messages.HOME_VERIFIED))
        blocks += [_verified(v) for v in verified[:SHOWN_VERIFIED]]
    if home.feedback:
        blocks += [_header(messages.HOME_FEEDBACK), _section(_feedback_lines(home))]
    if home.admin is not None:
        blocks += _admin(home)
    return {"type": "home", "blocks": _fit(blocks)}


def verified_modal(verified: VerifiedRef) -> dict[str, Any]:
    """The form an expert edits a verified answer's words in."""
    return {
        "type": "modal",
        "callback_id": VERIFIED_FORM,
        "private_metadata": str(verified.id),
        "title": {"type": "plain_text", "text": messages.VERIFIED_FORM_TITLE},
        "submit": {"type": "plain_text", "text": "Save"},
        "close": {"type": "plain_text", "text": "Cancel"},
        "blocks": [
            {
                "type": "input",
                "block_id": "question",
                "label": {"type": "plain_text", "text": messages.VERIFIED_FORM_QUESTION},
                "element": {
                    "type": "plain_text_input",
                    "action_id": "value",
                    "max_length": 2000,
                    **({"initial_value": verified.question[:2000]} if verified.question else {}),
                },
            },
            {
                "type": "input",
                "block_id": "answer",
                "label": {"type": "plain_text", "text": messages.VERIFIED_FORM_LABEL},
                "element": {
                    "type": "plain_text_input",
                    "action_id": "value",
                    "multiline": True,
                    "max_length": 3000,
                    "initial_value": verified.answer[:3000],
                },
            },
        ],
    }


def verified_choice(value: str) -> tuple[str, int] | None:
    """(what to do, verified answer id) from a verified answer's menu option."""
    what, _, verified = value.partition(":")
    return (what, int(verified)) if what in VERIFIED_DOINGS and verified.isdigit() else None


def add_url_modal(targets: Sequence[AddTarget]) -> dict[str, Any]:
    options = [_option(_target_label(t), _target_value(t)) for t in targets][:100]
    return {
        "type": "modal",
        "callback_id": ADD_URL,
        "title": {"type": "plain_text", "text": messages.HOME_ADD_PAGE},
        "submit": {"type": "plain_text", "text": "Add"},
        "close": {"type": "plain_text", "text": "Cancel"},
        "blocks": [
            {
                "type": "input",
                "block_id": "url",
                "label": {"type": "plain_text", "text": messages.HOME_FORM_URL},
                "element": {"type": "url_text_input", "action_id": "value"},
            },
            {
                "type": "input",
                "block_id": "index",
                "label": {"type": "plain_text", "text": messages.HOME_FORM_INDEX},
                "element": {
                    "type": "static_select",
                    "action_id": "value",
                    "options": options,
                    **({"initial_option": options[0]} if options else {}),
                },
            },
            {
                "type": "input",
                "block_id": SITE,
                "optional": True,
                "label": {"type": "plain_text", "text": "Whole site"},
                "element": {
                    "type": "checkboxes",
                    "action_id": "value",
                    "options": [_option(messages.HOME_FORM_SITE, SITE)],
                },
            },
        ],
    }


def target_of(value: str) -> tuple[int, str | None] | None:
    """(index id, channel or None) from an "add to" option's value."""
    index, _, channel = value.partition("@")
    return (int(index), channel or None) if index.isdigit() else None


def channel_choice(value: str) -> tuple[str, int] | None:
    """(channel, index id) from an enable/disable option's value."""
    channel, _, index = value.rpartition(":")
    return (channel, int(index)) if channel and index.isdigit() else None


# -- the parts ------------------------------------------------------------------------------


def _personal(home: Home) -> Block:
    personal = home.personal
    return {
        "type": "section",
        "text": {
            "type": "mrkdwn",
            "text": messages.home_personal(
                personal.index.name, personal.stats.documents, personal.stats.chunks
            ),
        },
        "accessory": _button(
            messages.HOME_ADD_PAGE, ADD_URL, ADD_URL, messages.HOME_ADD_PAGE_LABEL, primary=True
        ),
    }


def _index_lines(home: Home) -> str:
    lines = [
        f"• *{s.index.name}* ({s.index.scope}) — {messages.plural(s.stats.documents, 'document')}"
        for s in home.indexes
    ]
    if home.more_indexes:
        lines.append(messages.home_more_indexes(home.more_indexes))
    return "\n".join(lines)


def _document_lines(home: Home) -> str:
    if not home.documents:
        return messages.HOME_NO_DOCUMENTS
    lines = []
    for recent in home.documents:
        document = recent.document
        name = source(document.name, document.url)
        lines.append(f"• {name} — in *{escape(recent.index.name)}*, added {age(document.time_added)}")
    return "\n".join(lines)


def _job(summary: JobSummary) -> list[Block]:
    job = summary.job
    counted = JobCounters(job.counters)
    found = counted[Count.PAGES_FOUND]
    progress = f"{counted.pages_done}/{found} pages" if found else "starting"
    when = f"started {age(job.started_at)}" if job.started_at else f"queued {age(job.created_at)}"
    if job.finished:
        progress = f"{counted.pages_indexed} pages indexed"
        when = f"ended {age(job.finished_at or job.created_at)}"
    text = f"*{escape(summary.source)}* → *{summary.index.name}*: {job.state.value}, {progress} — {when}"
    blocks: list[Block] = [_section(text)]
    if summary.manageable:
        buttons = [
            _button(messages.HOME_REFRESH, REFRESH_JOB, str(job.id), f"Index {summary.source} again now")
        ]
        if not job.finished:
            buttons.append(
                _button(messages.HOME_STOP, STOP_JOB, str(job.id), f"Stop indexing {summary.source}")
            )
        blocks.append({"type": "actions", "block_id": f"job:{job.id}", "elements": buttons})
    return blocks


def _channel(summary: ChannelSummary) -> list[Block]:
    channel, conversation = summary.channel, summary.conversation
    text = messages.home_channel(
        channel.name or channel.external_id,
        [i.name for i in summary.enabled],
        conversation.response_mode,
        conversation.settings_locked,
    )
    blocks: list[Block] = [_section(text)]
    if not summary.may_change:
        return blocks
    elements = []
    if summary.enableable:
        options = [_option(i.name, f"{channel.external_id}:{i.id}") for i in summary.enableable][:100]
        elements.append(_select(messages.HOME_ENABLE, ENABLE, options))
    if summary.enabled:
        options = [_option(i.name, f"{channel.external_id}:{i.id}") for i in summary.enabled][:100]
        elements.append(_select(messages.HOME_DISABLE, DISABLE, options))
    if elements:
        blocks.append({"type": "actions", "block_id": f"channel:{channel.external_id}", "elements": elements})
    return blocks


def _verified(listed: VerifiedListing) -> Block:
    """A verified answer: its question, its words, who verified it (and whether it awaits
    review); for its channel's experts and admins, a menu to edit, review or remove it."""
    v = listed.verified
    text = messages.verified_line(v.question, v.answer, v.verified_by_name, v.flagged)
    block = _section(f"#{escape(listed.channel.name or listed.channel.external_id)} · {text}")
    if listed.manageable:
        doings = [("edit", messages.HOME_VERIFIED_EDIT)]
        doings.append(
            ("renew", messages.HOME_VERIFIED_RENEW)
            if v.flagged
            else ("expire", messages.HOME_VERIFIED_EXPIRE)
        )
        doings.append(("remove", messages.HOME_VERIFIED_REMOVE))
        block["accessory"] = {
            "type": "overflow",
            "action_id": VERIFIED_MENU,
            "options": [_option(label, f"{what}:{v.id}") for what, label in doings],
        }
    return block


def _feedback_lines(home: Home) -> str:
    lines = []
    for review in home.feedback:
        counts = (
            f"{messages.plural(review.total_unhelpful, 'unhelpful answer')}, "
            f"{messages.plural(review.total_unanswered, 'unanswered question')}"
        )
        lines.append(f"• *{review.index.name}*: {counts}")
        for item in (*review.unhelpful[:2], *review.unanswered[:1]):
            comments = [f"“{escape(v.comment)}”" for v in item.feedback if not v.helpful and v.comment]
            said = f" — {', '.join(comments)}" if comments else ""
            lines.append(f"    ◦ “{escape(item.answer.question[:150])}”{said}")
    lines.append("Say “show feedback” in a channel or DM for all of it.")
    return "\n".join(lines)


def _admin(home: Home) -> list[Block]:
    admin = home.admin
    assert admin is not None
    blocks: list[Block] = [_header(messages.HOME_ADMIN)]
    if admin.connections is not None:
        lines = [
            f"• *{escape(c.name)}* ({c.kind}) at {c.base_url} — {c.credentials_hint}, connected {age(c.created_at)}"
            for c in admin.connections
        ]
        blocks.append(_section("*Connectors*\n" + ("\n".join(lines) or messages.HOME_CONNECTORS_NONE)))
        if admin.access:
            blocks.append(_section("*Who may read what*\n" + render_access_status(admin.access)))
    if admin.settings:
        fields = [{"type": "mrkdwn", "text": f"*{name}*\n{escape(value)}"} for name, value in admin.settings][
            :10
        ]
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": "*Settings*"}, "fields": fields})
    return blocks


# -- Block Kit pieces -------------------------------------------------------------------------


def _fit(blocks: list[Block]) -> list[Block]:
    if len(blocks) <= VIEW_BLOCKS:
        return blocks
    return [*blocks[: VIEW_BLOCKS - 1], _context("…more than fits here; ask me in a DM for the rest.")]


def _header(text: str) -> Block:
    return {"type": "header", "text": {"type": "plain_text", "text": text[:150]}}


def _section(text: str) -> Block:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text[:SECTION_LIMIT] or " "}}


def _context(text: str) -> Block:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": text[:SECTION_LIMIT]}]}


def _button(text: str, action: str, value: str, label: str, *, primary: bool = False) -> Block:
    button: Block = {
        "type": "button",
        "action_id": action,
        "value": value,
        "text": {"type": "plain_text", "text": text},
        "accessibility_label": label[:75],
    }
    if primary:
        button["style"] = "primary"
    return button


def _select(placeholder: str, action: str, options: list[Block]) -> Block:
    return {
        "type": "static_select",
        "action_id": action,
        "placeholder": {"type": "plain_text", "text": placeholder[:150]},
        "options": options,
    }


def _option(text: str, value: str) -> Block:
    return {"text": {"type": "plain_text", "text": text[:OPTION_TEXT]}, "value": value}


def _target_label(target: AddTarget) -> str:
    index = target.index
    if index.scope == Scope.PERSONAL:
        return f"{index.name} (your personal index)"
    if target.channel is not None:
        return f"#{index.name} (the channel's index)"
    return f"{index.name} ({index.scope})"


def _target_value(target: AddTarget) -> str:
    return f"{target.index.id}@{target.channel}" if target.channel else str(target.index.id)
