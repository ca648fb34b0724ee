"""The chat grammar: natural phrasings map to commands, and questions stay questions."""

from __future__ import annotations

import dataclasses

import pytest

from bot.chat import commands as c
from bot.chat.commands import parse
from bot.chat.grammar import asks_something


def variants(text: str) -> list[str]:
    """The ways people type the same command: case, punctuation, please, a mention."""
    return [
        text,
        text.upper(),
        text[:1].upper() + text[1:] + ".",
        text + "!",
        text + "?",
        f"please {text}",
        f"Please {text}, thanks!",
        f"{text} please",
        f"can you {text}?",
        f"could you please {text}",
        f"<@UBOT> {text}",
        f"<@UBOT|lore> hey, {text}",
        f"@lore {text}",
        f"  {text}  ",
        f"hi lore, {text}",
    ]


COMMANDS: list[tuple[str, c.Command]] = [
    ("help", c.Help()),
    ("what can you do", c.Help()),
    ("how do I use lore", c.Help()),
    ("status", c.Status()),
    ("what's the status", c.Status()),
    ("show jobs", c.Status()),
    ("list indexes", c.ListIndexes()),
    ("list the indexes", c.ListIndexes()),
    ("show me all indexes", c.ListIndexes()),
    ("which indexes can I use", c.ListIndexes()),
    ("what indexes do you have", c.ListIndexes()),
    ("what's in your memory", c.ListDocs()),
    ("what is in your memory", c.ListDocs()),
    ("what do you remember", c.ListDocs()),
    ("list docs", c.ListDocs()),
    ("show me the documents", c.ListDocs()),
    ("enable the eng index", c.EnableIndex("eng")),
    ("enable eng", c.EnableIndex("eng")),
    ("turn on the eng index", c.EnableIndex("eng")),
    ("activate eng", c.EnableIndex("eng")),
    ("use the eng index", c.EnableIndex("eng")),
    ("use the eng index too", c.EnableIndex("eng")),
    ("search the eng index as well", c.EnableIndex("eng")),
    ("enable the #eng index", c.EnableIndex("#eng")),
    ("enable the <#C0123|eng> index", c.EnableIndex("#eng")),
    ("enable <#C0123|eng>", c.EnableIndex("#eng")),
    ('enable the "team notes" index', c.EnableIndex("team notes")),
    ("enable “team notes”", c.EnableIndex("team notes")),
    ("disable the eng index", c.DisableIndex("eng")),
    ("turn off eng", c.DisableIndex("eng")),
    ("stop using the eng index", c.DisableIndex("eng")),
    ("remove the eng index", c.DisableIndex("eng")),
    ("make eng the default", c.MakeDefault("eng")),
    ("make the eng index the default", c.MakeDefault("eng")),
    ("set eng as the default index", c.MakeDefault("eng")),
    ("set the default index to eng", c.MakeDefault("eng")),
    ("change default to eng", c.MakeDefault("eng")),
    ("create an index called handbook", c.CreateIndex("handbook")),
    ("create a new index named handbook", c.CreateIndex("handbook")),
    ("create index handbook", c.CreateIndex("handbook")),
    ("make a new shared index called Team Handbook", c.CreateIndex("Team Handbook")),
    ("delete the eng index", c.DeleteIndex("eng")),
    ("drop the eng index", c.DeleteIndex("eng")),
    ('delete the "eng" index', c.DeleteIndex("eng")),
    ("forget report.pdf", c.Forget("report.pdf")),
    ("forget the file report.pdf", c.Forget("report.pdf")),
    ('forget "Q3 report.pdf" from your memory', c.Forget("Q3 report.pdf")),
    ("forget the onboarding guide", c.Forget("onboarding guide")),
    ("remove report.pdf from memory", c.Forget("report.pdf")),
    ("remove the onboarding guide from your memory", c.Forget("onboarding guide")),
    ("delete the doc report.pdf", c.Forget("report.pdf")),
    ("delete report.pdf", c.Forget("report.pdf")),
    ("remove 42", c.Forget("42")),
    ("forget https://docs.example.com/a", c.Forget("https://docs.example.com/a")),
    ("add this doc to your memory", c.AddFiles()),
    ("add this to your memory", c.AddFiles(thread_too=True)),
    ("add these files", c.AddFiles()),
    ("add it to your memory", c.AddFiles(thread_too=True)),
    ("add to memory", c.AddFiles(thread_too=True)),
    ("save this", c.AddFiles(thread_too=True)),
    ("remember this", c.AddFiles(thread_too=True)),
    ("remember these documents", c.AddFiles()),
    ("learn this", c.AddFiles(thread_too=True)),
    ("remember this thread", c.SaveThread()),
    ("save this conversation to your memory", c.SaveThread()),
    ("require mentions here", c.RequireMentions(True)),
    ("only answer when mentioned", c.RequireMentions(True)),
    ("don't require mentions here", c.RequireMentions(False)),
    ("answer follow-ups without a mention", c.RequireMentions(False)),
    ("learn this channel", c.LearnChannel()),
    ("learn this channel's history", c.LearnChannel()),
    ("forget this channel's history", c.ForgetChannelHistory()),
    ("stop learning this channel", c.ForgetChannelHistory()),
    ("use rag only mode here", c.SetMode("RAG_ONLY")),
    ("use RAG-only mode", c.SetMode("RAG_ONLY")),
    ("use rag only", c.SetMode("RAG_ONLY")),
    ("switch to llm only", c.SetMode("LLM_ONLY")),
    ("set mode to hybrid", c.SetMode("HYBRID")),
    ("use smart fallback mode in this channel", c.SetMode("SMART_FALLBACK")),
    ("change to rag priority", c.SetMode("RAG_PRIORITY")),
    ("switch to llm priority mode here", c.SetMode("LLM_PRIORITY")),
    ("use the strategy smart", c.SetStrategy("smart")),
    ("set retrieval strategy to confidence", c.SetStrategy("confidence")),
    ("use function retrieval here", c.SetStrategy("function")),
    ("stop indexing https://docs.example.com", c.StopIndexing("https://docs.example.com")),
    ("refresh https://docs.example.com", c.Refresh("https://docs.example.com")),
    ("answer questions here", c.HelpChannel(True)),
    ("answer questions in this channel when 80% sure", c.HelpChannel(True, 0.8)),
    ("make this a help channel", c.HelpChannel(True)),
    ("stop answering questions here", c.HelpChannel(False)),
    ("don't answer questions here", c.HelpChannel(False)),
    ("no experts here", c.SetExperts(())),
    ("list verified answers", c.ListVerified()),
]


def folded(command: c.Command) -> tuple[type, tuple[object, ...]]:
    """The command with its words case-folded: names keep the case they were typed in, and
    the catalog matches them case-insensitively."""
    values = dataclasses.astuple(command)
    return type(command), tuple(v.casefold() if isinstance(v, str) else v for v in values)


@pytest.mark.parametrize(("text", "expected"), COMMANDS, ids=[t for t, _ in COMMANDS])
def test_a_command_is_understood_however_it_is_typed(text: str, expected: c.Command) -> None:
    assert parse(text) == expected
    for typed in variants(text):
        assert folded(parse(typed)) == folded(expected), typed


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("add https://docs.example.com/page to your memory", c.AddUrls(("https://docs.example.com/page",))),
        ("add <https://docs.example.com/page> to your memory", c.AddUrls(("https://docs.example.com/page",))),
        (
            "<@UBOT> please add <https://docs.example.com|docs.example.com> to your memory",
            c.AddUrls(("https://docs.example.com",)),
        ),
        (
            "add https://a.example.com and https://b.example.com",
            c.AddUrls(("https://a.example.com", "https://b.example.com")),
        ),
        ("crawl the whole site https://docs.example.com", c.AddUrls(("https://docs.example.com",), True)),
        ("add these docs https://docs.example.com", c.AddUrls(("https://docs.example.com",), True)),
        ("remember <https://wiki.example.com/x|the wiki page>", c.AddUrls(("https://wiki.example.com/x",))),
        ("add https://docs.example.com/page.", c.AddUrls(("https://docs.example.com/page",))),
    ],
)
def test_links_to_add(text: str, expected: c.Command) -> None:
    assert parse(text) == expected


QUESTIONS = [
    "what is the status of the deploy?",
    "what's the status of the migration",
    "status of the deploy",
    "how do I remove a user?",
    "how do I delete a branch in git?",
    "remove the user from the group",
    "should we delete the old branch?",
    "delete the old logs",
    "how do I enable two-factor auth?",
    "how do I use git?",
    "help me write a query",
    "help with deploys",
    "what do you know about kubernetes?",
    "list the steps to deploy",
    "show me the runbook",
    "who is on call this week?",
    "How do we deploy billing?",
    "what is the deploy process?",
    "use the staging database for tests?",
    "make the build faster",
    "create a new branch for this fix?",
    "remember when we shipped v2?",
    "add a user to the admin group",
    "add a column to the table?",
    "save the file as csv?",
    "index the table by id?",
    "where is the default config?",
    "which index do we use for search?",
    "what does the eng index cover?",
    "update",
    "stop",
    "thanks",
]


def test_an_answer_taught_keeps_the_question_and_the_answer_as_said() -> None:
    assert parse("the answer to “how do I roll back?” is: switch the load balancer back.") == c.Teach(
        "how do I roll back?", "switch the load balancer back."
    )
    assert parse("<@UBOT> answer to how do we deploy? is every Tuesday") == c.Teach(
        "how do we deploy?", "every Tuesday"
    )
    assert parse("what is the answer to the ultimate question?") == c.Question(
        "what is the answer to the ultimate question?"
    )


def test_experts_are_named_as_slack_writes_them() -> None:
    said = "experts here are <@U1> <@U2|bob> and <!subteam^S9|@eng-oncall>"
    assert parse(said) == c.SetExperts(("U1", "U2", "S9"))
    assert parse("@lore experts here are @ana @ben") == c.SetExperts(("ana", "ben"))
    assert parse("who are the experts here?") == c.Question("who are the experts here?")


@pytest.mark.parametrize(
    ("message", "asks"),
    [
        ("how do I roll back a release?", True),
        ("Does anyone know where the staging keys live", True),
        ("the deploy is stuck, any idea why", True),
        ("is the build farm down?", True),
        ("deploy finished, thanks all", False),
        ("why?", False),
        ("lunch at noon", False),
        ("<@U1> <@U2>", False),
    ],
)
def test_what_asks_something_in_a_help_channel(message: str, asks: bool) -> None:
    assert asks_something(message) is asks


@pytest.mark.parametrize("text", QUESTIONS)
def test_questions_are_not_commands(text: str) -> None:
    assert parse(text) == c.Question(text)
    assert parse(f"<@UBOT> {text}") == c.Question(text)


def test_a_question_loses_the_mention_and_keeps_its_words() -> None:
    assert parse("<@UBOT>   when do we\n deploy?") == c.Question("when do we deploy?")
    assert parse("<@UBOT|lore> what is in <#C1|eng>?") == c.Question("what is in #eng?")
    assert parse("") == c.Question("")
    assert parse("<@UBOT>") == c.Question("")


def test_parse_never_fails() -> None:
    for text in [
        "???",
        "<>",
        "<@",
        "<#C1|",
        "enable",
        "enable the index",
        "forget",
        "“”",
        "\x00",
        "a" * 10_000,
    ]:
        assert isinstance(parse(text), c.Question | c.EnableIndex | c.Forget | c.AddFiles), text


@pytest.mark.parametrize("declaration", c.DECLARATIONS, ids=lambda d: d.command.__name__)
def test_every_declared_example_is_understood_as_its_command(declaration: c.Declaration) -> None:
    assert declaration.examples and declaration.summary and declaration.who
    for example in declaration.examples:
        assert type(parse(example)) is declaration.command, example
        assert type(parse(f"<@UBOT> please {example}")) is declaration.command, example


def test_every_command_is_declared_once() -> None:
    declared = [d.command for d in c.DECLARATIONS]
    commands = set(c.Command.__args__) - {c.Question}  # type: ignore[attr-defined]
    assert sorted(declared, key=str) == sorted(commands, key=str)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("lock this channel's settings", c.LockSettings(True)),
        ("lock settings", c.LockSettings(True)),
        ("unlock the channel settings here", c.LockSettings(False)),
    ],
)
def test_locking_settings(text: str, expected: c.Command) -> None:
    assert parse(text) == expected
