"""`lore shell`: the same router as Slack, driven line by line in the terminal."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator
from io import StringIO
from pathlib import Path

import pytest

from bot.app.settings import Settings
from bot.chat.runtime import Runtime, open_runtime
from bot.shell.session import Shell

DOCS = {
    "deploy.md": "# Deploying\n\nWe deploy the billing service every Tuesday with the blue-green pipeline.\n",
    "oncall.md": "# On-call\n\nThe on-call engineer carries the pager for one week, from Monday to Monday.\n",
}
SALARY = "# Compensation\n\nAlice's salary is 181,000 zorkmids per year, paid by the Zorkmid bank.\n"


async def lines(*typed: str) -> AsyncIterator[str]:
    for line in typed:
        yield line + "\n"


class Terminal:
    """A shell on a runtime, with what it printed read back one exchange at a time."""

    def __init__(self, runtime: Runtime) -> None:
        self.out = StringIO()
        self.shell = Shell(runtime.services, runtime.router, self.out)
        self._read = 0

    async def type(self, *typed: str) -> str:
        """Type the lines; what Lore printed in answer."""
        await self.shell.run(lines(*typed))
        printed = self.out.getvalue()[self._read :]
        self._read = len(self.out.getvalue())
        return printed


@pytest.fixture
def folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """`./notes` (two markdown files) and `./private` (alice's), relative to the cwd."""
    notes = tmp_path / "notes"
    notes.mkdir()
    for name, text in DOCS.items():
        (notes / name).write_text(text)
    (notes / ".hidden.md").write_text("not this one")
    private = tmp_path / "private"
    private.mkdir()
    (private / "salary.md").write_text(SALARY)
    monkeypatch.chdir(tmp_path)
    yield tmp_path


@pytest.fixture
async def terminal(tmp_path: Path, folders: Path) -> AsyncIterator[Terminal]:
    settings = Settings(
        _env_file=None,
        lore_home=tmp_path / "home",
        database_url=None,
        chroma_host=None,
        openai_api_key=None,
        openai_base_url=None,
        slack_bot_token=None,
    )
    async with open_runtime(settings) as runtime:
        yield Terminal(runtime)


async def test_a_folder_added_in_a_channel_answers_with_sources(terminal: Terminal) -> None:
    printed = await terminal.type("/as alice", "/in #eng", "@lore please add ./notes to your memory")
    assert "(now speaking as alice)" in printed and "(now in #eng)" in printed
    assert "lore> Added deploy.md to the eng index (1 passage)." in printed
    assert "lore> Added oncall.md to the eng index (1 passage)." in printed
    assert ".hidden.md" not in printed

    answer = await terminal.type("When do we deploy the billing service?")
    assert "We deploy the billing service every Tuesday" in answer
    assert "Sources:\n  [1] deploy.md, added just now (eng)" in answer

    listing = await terminal.type("list indexes")
    assert "⭐ eng (channel) — 2 documents, 2 passages" in listing
    assert "personal" not in listing  # not in a channel, even for its owner


async def test_forgetting_a_reference_that_names_several_documents_forgets_none(terminal: Terminal) -> None:
    await terminal.type("/in #eng", "add ./notes to your memory")

    careless = await terminal.type("forget .md")  # the part of a name both share

    assert "“.md” matches 2 documents in the eng index, so I forgot none of them:" in careless
    ids = {name: int(number) for name, number in re.findall(r"(\w+\.md) \(id (\d+)\)", careless)}
    assert set(ids) == {"deploy.md", "oncall.md"}
    assert "2 documents, 2 passages" in await terminal.type("list indexes")
    listed = await terminal.type("what's in your memory?")
    assert "• deploy.md — text/markdown" in listed, "a name no other document has is shown alone"
    assert "Forgot oncall.md (from the eng index)." in await terminal.type(f"forget {ids['oncall.md']}")
    one = await terminal.type("forget deploy")  # a part of a name that names one document is enough
    assert "Forgot deploy.md (from the eng index)." in one
    assert "The eng index is empty." in await terminal.type("what's in your memory?")


async def test_bob_cannot_see_alices_personal_documents(terminal: Terminal) -> None:
    question = "how many zorkmids is alice's salary?"
    printed = await terminal.type("/as alice", "/dm", "add ./private to your memory", question)
    assert "Added salary.md to the personal index" in printed
    assert "Sources:\n  [1] salary.md, added just now (personal)" in printed  # the control

    for where in ("/dm", "/in #eng"):
        printed = await terminal.type(
            "/as bob",
            where,
            "enable the personal index",
            "enable alice's personal index",
            "use the personal index too",
            question,
            "what's in your memory?",
        )
        assert "salary.md" not in printed and "181,000" not in printed
        assert "Enabled the" not in printed

    printed = await terminal.type("/as alice", "/in #eng", question)
    assert "salary.md" not in printed  # a channel never sees a personal index, even its owner's


async def test_delete_asks_yes_or_no_and_quit_stops_reading(terminal: Terminal) -> None:
    printed = await terminal.type(
        "/as olga", "/in #ops", "create an index called scratch", "delete the scratch index", "no"
    )
    assert "lore> Delete the scratch index and its 0 documents? This cannot be undone. (yes/no)" in printed
    assert printed.endswith("lore> Cancelled.\n")
    printed = await terminal.type("delete the scratch index", "yes", "list indexes")
    assert "lore> Deleted the scratch index." in printed
    assert "scratch" not in printed.split("lore> Indexes you can use here")[1]
    printed = await terminal.type("/quit", "help")
    assert printed == ""
    assert (await terminal.type("/nonsense")).startswith(
        "Shell commands: /in #channel, /dm, /as NAME, /quit."
    )


async def test_slack_only_commands_say_so_in_the_shell(terminal: Terminal) -> None:
    printed = await terminal.type(
        "/as ana", "/in #eng", "remember this thread", "learn this channel", "forget this channel's history"
    )
    assert "lore> Say “remember this thread” as a reply in the thread you want me to save" in printed
    assert "lore> I can learn a channel's history only in Slack, where I can read it." in printed
    assert "lore> I haven't learned this channel's history" in printed


async def test_a_channel_made_a_help_channel_in_the_shell_answers_only_what_it_is_sure_of(
    terminal: Terminal,
) -> None:
    await terminal.type("/as alice", "/in #eng", "@lore add ./notes to your memory")
    made = await terminal.type("@lore answer questions here", "@lore experts here are @bob")
    assert "I answer questions posted here without a mention" in made and "Experts here: @bob" in made
    answered = await terminal.type("when do we deploy the billing service?")
    assert "We deploy the billing service every Tuesday" in answered
    quiet = await terminal.type("lunch at noon, anyone?", "what is the capital of the moon colony?")
    assert quiet.count("Lore stayed quiet") == 2 and "couldn't find" not in quiet
    taught = await terminal.type("@lore the answer to “who keeps the spare key?” is: Priya at the front desk")
    assert "Saved as the verified answer" in taught
    verified = await terminal.type("@lore who keeps the spare key?")
    assert verified.index("Priya at the front desk") < verified.index("✅ Verified by alice")
    assert "Priya" in await terminal.type("@lore list verified answers")
    assert "no longer answer" in await terminal.type("@lore stop answering questions here")
    assert "Lore stayed quiet" not in await terminal.type("lunch at noon, anyone?")


async def test_mistakes_get_a_did_you_mean_or_a_missing_path_not_an_answer(terminal: Terminal) -> None:
    await terminal.type("add ./notes to your memory")  # something any question could quote

    for typo in ("add READM.md to your memory", "add ./nowhere/plan.md to your memory"):
        printed = await terminal.type(typo)
        assert "lore> I can't find" in printed and "Sources:" not in printed, printed
    printed = await terminal.type("delete everything")
    assert "I didn't understand “delete everything” as a command. Did you mean" in printed
    assert "“delete the handbook index”" in printed and "Sources:" not in printed
    assert "Did you mean “list indexes”" in await terminal.type("lsit indexes")
    assert "Sources:" in await terminal.type("When do we deploy the billing service?")  # questions still are


async def test_a_bare_file_name_in_the_folder_is_added(terminal: Terminal, folders: Path) -> None:
    (folders / "README.md").write_text("# Readme\n\nThe staging password rotates every Friday.\n")
    printed = await terminal.type("add README.md to your memory")
    assert "Added README.md to the personal index" in printed
