"""Issue 35, findings 2 and 7: sources are shown through one renderer on every surface.

"Share in channel" posted a `/lore` answer's sources raw: a document named `<!channel>
<@U0ADMIN>` with a crafted URL pinged the channel and a user and made a fake "Official HR
policy" link in the channel, while the private copy of the same answer was escaped. App
Home's "added lately" linked a document's raw URL too; and the HTTP API took any URL for a
document. Now every surface goes through `bot.chat.mrkdwn.source`, and the API accepts only
`http(s)` URLs.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from tests.security.conftest import Lore, raw_mentions, running_lore

pytestmark = pytest.mark.asyncio(loop_scope="module")

LINK = re.compile(r"<([^<>|]*)\|([^<>]*)>")
HOSTILE = {
    "name": "<!channel> <@U0ADMIN> leave policy",
    "text": "Parental leave at Quokka Inc lasts twenty weeks, paid in full.",
    "url": "https://intranet.example/leave|Official HR policy><!here> <@U0ADMIN>",
    "context_type": "policy",
    "content_domain": "hr",
    "document_category": "policy",
}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def lore(tmp_path_factory: Any) -> AsyncIterator[Lore]:
    async with running_lore(tmp_path_factory.mktemp("lore-share")) as running:
        status, _ = await running.api("POST", "/v1/indexes", json_body={"name": "hr"})
        assert status == 201
        status, body = await running.api("POST", "/v1/indexes/hr/documents/text", json_body=HOSTILE)
        assert status in (200, 201), body
        yield running


def assert_inert(posted: str) -> None:
    assert raw_mentions(posted) == [], posted
    for target, label in LINK.findall(posted):
        assert target.startswith(("http://", "https://", "mailto:")), target
        assert not re.search(r"[\s<>|]", target), target
        assert "Official HR policy" not in label


async def test_a_shared_answer_posts_its_sources_escaped(lore: Lore) -> None:
    lore.slack.add_channel("CGENERAL", "general")
    lore.slack.add_user("USUE", "sue")
    await lore.mention("CGENERAL", "USUE", "enable the hr index")
    sent = await lore.slash("USUE", "CGENERAL", "how long is parental leave at Quokka?")
    [answer] = lore.responses(sent)
    assert "twenty weeks" in answer.text
    lore.begin()
    assert await lore.press_private("USUE", "CGENERAL", answer, "share_answer") == 200
    shared = lore.calls("chat.postMessage")
    assert shared and all(c.params["channel"] == "CGENERAL" for c in shared)
    posted = "\n".join(json.dumps(c.params) for c in shared)
    assert "leave policy" in posted and "&lt;!channel&gt;" in posted
    assert "<@USUE> shared Lore's answer" in posted  # who shared it: the one mention meant
    assert_inert(posted.replace("<@USUE> shared", "sue shared"))


async def test_the_home_tab_shows_a_documents_link_escaped(lore: Lore) -> None:
    lore.slack.add_user("UHOME", "home")
    lore.begin()
    event = {"type": "app_home_opened", "user": "UHOME", "channel": "DUHOME", "tab": "home"}
    assert await lore.deliver({**event, "event_ts": lore.next_ts()}) == 200
    [published] = lore.calls("views.publish")
    posted = json.dumps(published.params)
    assert "leave policy" in posted
    assert_inert(posted)


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "file:///etc/passwd",
        "slack://channel?id=C1",
        "ftp://files.example/a",
        "data:,x",
    ],
)
async def test_the_api_takes_only_web_addresses_for_documents(lore: Lore, url: str) -> None:
    body = {**HOSTILE, "name": "odd link", "url": url}
    status, answer = await lore.api("POST", "/v1/indexes/hr/documents/text", json_body=body)
    assert status == 400, answer
    assert "http" in json.dumps(answer)
