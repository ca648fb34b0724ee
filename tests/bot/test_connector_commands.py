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
