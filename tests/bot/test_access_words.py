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


def test_mapping_and_restricting_are_read_as_commands() -> None:
    from bot.chat.commands import ListMappings, MapAccount, RestrictSource, UnmapAccount

    assert parse("<@UBOT> map <@U0ALICE|alice> to github octocat") == MapAccount(
        "U0ALICE", "octocat", "github"
    )
    assert parse("map U0123ABCD to @octocat on github") == MapAccount("U0123ABCD", "octocat", "github")
    assert parse("map <@U0ALICE> to 5b10ac8d82e05b22cc7d4ef5") == MapAccount(
        "U0ALICE", "5b10ac8d82e05b22cc7d4ef5"
    )
    assert parse("unmap <@U0ALICE> from github") == UnmapAccount("U0ALICE", "github")
    assert parse("map @alice to github octocat") == MapAccount("alice", "octocat", "github")  # the shell's
    assert parse("list account mappings") == ListMappings() == parse("who is mapped?")
    assert parse(
        "restrict the notion attachment to <#C0ENG|eng> and <!subteam^S0SRE|@sre>"
    ) == RestrictSource("notion", None, ("channel:C0ENG", "usergroup:S0SRE"), ("#eng", "@sre"))
    assert parse("restrict notion in the handbook index to <#C0ENG>") == RestrictSource(
        "notion", "handbook", ("channel:C0ENG",), ("#C0ENG",)
    )
    assert parse("restrict the notion attachment to #eng") == RestrictSource(
        "notion", None, (), unlinked=True
    )
    assert parse("unrestrict the notion attachment") == RestrictSource("notion", None, ())
    assert parse("lift the restriction on notion in the ops index") == RestrictSource("notion", "ops", ())
    for question in (
        "how do I map a drive in windows?",
        "what does map reduce mean?",
        "who restricted the budget?",
    ):
        assert isinstance(parse(question), Question), question


def test_restriction_and_mapping_sentences_escape_what_users_typed() -> None:
    said = messages.restricted("Notion <!channel>", "ops", ["#eng"], [("#eng", "Slack said <@U1>")], 3)
    assert "<!channel>" not in said and "<@U1>" not in said and "3 documents changed" in said
    assert "nobody reads through it until I can" in said
    assert (
        messages.mapped("U1", "GitHub (x)", "*bold*", changed=True).count("*") == 4
    )  # the name's own escaped
