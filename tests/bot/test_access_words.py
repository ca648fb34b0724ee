"""Who someone is in a connected source starts from the email Slack confirms; what chat says
of access (a source's sync state, an admin's explanation) names principals, never text; and
the two access commands are read as such, not as questions."""

from __future__ import annotations

from bot.chat import messages
from bot.chat.commands import ExplainAccess, Question, RefreshPermissions, parse
from bot.chat.render import render_principal
from bot.slack.people import confirmed_email


def test_only_a_confirmed_email_of_the_workspace_ties_someone_to_a_source() -> None:
    user = {"is_email_confirmed": True, "profile": {"email": " Ada@Example.COM "}}
    assert confirmed_email(user, partner=False) == "ada@example.com"
    assert confirmed_email({**user, "is_email_confirmed": False}, partner=False) == ""
    assert confirmed_email(user, partner=True) == ""  # another organisation's address opens nothing
    assert confirmed_email({**user, "is_bot": True}, partner=False) == ""
    assert confirmed_email({"is_email_confirmed": True, "profile": {}}, partner=False) == ""
    assert (
        confirmed_email({"is_email_confirmed": True, "profile": {"email": "not-an-email"}}, partner=False)
        == ""
    )


def test_access_commands_are_read_as_commands() -> None:
    assert parse("refresh permissions") == RefreshPermissions()
    assert parse("please sync the permissions now") == RefreshPermissions()
    assert parse("<@UBOT> explain access for <@U0BOB|bob> to Payroll 2026") == ExplainAccess(
        "U0BOB", "Payroll 2026"
    )
    assert parse("why can't <@U0BOB> read “Budget”?") == ExplainAccess("U0BOB", "Budget")
    assert parse("explain access for U0123ABCD to https://wiki.example.com/x") == ExplainAccess(
        "U0123ABCD", "https://wiki.example.com/x"
    )
    assert isinstance(parse("can bob read the budget page?"), Question)
    assert isinstance(parse("explain access control in our API"), Question)


def test_a_sources_state_says_when_it_synced_what_is_restricted_and_what_failed() -> None:
    assert messages.permissions_line(3, "5 minutes ago", None, "4 minutes ago", None) == (
        "permissions synced 5 minutes ago, 3 documents restricted; groups synced 4 minutes ago"
    )
    failed = messages.permissions_line(12, None, "Confluence answered 500", None, "it <@U1> broke")
    assert "can't be read until one succeeds" in failed and "12 documents" in failed
    assert "<@U1>" not in failed  # a source's error text is escaped, never a mention
    assert render_principal("7:group:finance") == "group finance"
    assert render_principal("7:user:5b10ac8d") == "user 5b10ac8d"
