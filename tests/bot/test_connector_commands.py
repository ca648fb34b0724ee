"""The Confluence chat commands: how they are phrased (and what they must not swallow), and
what the shell says when it cannot help: no private form there, no key to seal credentials
with, nothing connected yet."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.app.settings import Settings
from bot.chat import commands as c
from bot.chat.runtime import open_runtime
from tests.bot.test_shell import Terminal


@pytest.mark.parametrize(
    ("typed", "parsed"),
    [
        ("connect confluence", c.ConnectSource("confluence")),
        ("<@UBOT> please connect to Confluence Cloud", c.ConnectSource("confluence")),
        ("set up confluence", c.ConnectSource("confluence")),
        ("list confluence spaces", c.ListSpaces()),
        ("which spaces can I add?", c.ListSpaces()),
        ("add the ENG space to the confluence index", c.AttachSpace("ENG", "confluence")),
        ("add space ops to confluence", c.AttachSpace("OPS", "confluence")),
        ("sync the eng confluence space into the wiki index", c.AttachSpace("ENG", "wiki")),
        ("add the ENG space page 4242 to the confluence index", c.AttachSpace("ENG", "confluence", "4242")),
        ("add the ~ada space to the personal-wiki index", c.AttachSpace("~ada", "personal-wiki")),
        ("refresh confluence", c.Refresh("confluence")),
        ("stop indexing ENG", c.StopIndexing("ENG")),
        ("forget confluence", c.Forget("confluence")),
        ("enable the confluence index", c.EnableIndex("confluence")),
        ("add the handbook index", c.EnableIndex("handbook")),
        ("how do I connect confluence to jira?", c.Question("how do I connect confluence to jira?")),
        ("what is in the ENG space?", c.Question("what is in the ENG space?")),
    ],
)
def test_phrasings(typed: str, parsed: c.Command) -> None:
    assert c.parse(typed) == parsed


@pytest.fixture
async def keyless(tmp_path: Path) -> AsyncIterator[Terminal]:
    settings = Settings(_env_file=None, lore_home=tmp_path / "home", database_url=None, slack_bot_token=None)
    async with open_runtime(settings) as runtime:
        yield Terminal(runtime)


async def test_the_shell_explains_what_it_cannot_do(keyless: Terminal) -> None:
    printed = await keyless.type("connect confluence")
    assert "an admin needs to give Lore a key to encrypt credentials with: set LORE_SECRET_KEY" in printed
    printed = await keyless.type("add the ENG space to the confluence index")
    assert "No Confluence is connected yet; an admin can connect one with “connect confluence”." in printed
    printed = await keyless.type("list confluence spaces")
    assert "No Confluence is connected yet" in printed
    printed = await keyless.type("add the ENG space page x1 to the confluence index")
    assert "lore>" in printed  # not a page id: read as something else, and answered all the same


@pytest.mark.parametrize(
    ("typed", "parsed"),
    [
        ("connect github", c.ConnectSource("github")),
        ("<@UBOT> please connect to our GitHub", c.ConnectSource("github")),
        ("list github repositories", c.ListRepositories()),
        ("which repos can I add?", c.ListRepositories()),
        ("add the acme/payments repository to the eng index", c.AttachRepository("acme/payments", "eng")),
        ("add repo acme/payments to eng", c.AttachRepository("acme/payments", "eng")),
        (
            "sync the acme/payments github repo into the code index",
            c.AttachRepository("acme/payments", "code"),
        ),
        ("add all repositories of acme to the eng index", c.AttachRepository("acme", "eng")),
        ("index acme's repos into eng", c.AttachRepository("acme", "eng")),
        ("refresh acme/payments", c.Refresh("acme/payments")),
        ("stop indexing acme/payments", c.StopIndexing("acme/payments")),
        ("forget acme/payments", c.Forget("acme/payments")),
        ("how do I add a repository to github?", c.Question("how do I add a repository to github?")),
        (
            "add the acme/payments; rm -rf / repository to eng",
            c.Question("add the acme/payments; rm -rf / repository to eng"),
        ),
    ],
)
def test_github_phrasings(typed: str, parsed: c.Command) -> None:
    assert c.parse(typed) == parsed


async def test_the_shell_explains_github_too(keyless: Terminal) -> None:
    printed = await keyless.type("add the acme/payments repository to the eng index")
    assert "No GitHub is connected yet; an admin can connect one with “connect github”." in printed
    printed = await keyless.type("list github repositories")
    assert "No GitHub is connected yet" in printed
