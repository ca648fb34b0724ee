"""The GitHub issue's "done when", through the real `lore` entry points against the fake
GitHub (Enterprise Server-shaped, on loopback): `lore source add github --url …/api/v3` with
the token read from an environment variable, `lore source attach --repo` through a secondary
rate limit and a 429, then a scripted shell session in which a fact from docs/deploy.md, one
from an issue comment and one from a discussion's accepted answer are each answered with a
citation linking to the right GitHub page; edits, a rename and deletions in the fake are
reflected after "refresh"; acme/payments being private, its facts reach the local user only
once mapped to a collaborator (`lore access map`), and only in private; and the chat commands (connect github, list github repositories,
add … repository to … index, stop indexing, forget) go through the shell's router."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.lore_cli import answers, lore, lore_env
from tests.fakes.github_server import TOKEN, FakeGitHub, Seeded, seed

REPO = "acme/payments"
DEPLOY_Q = "when do production deploys of the payments API go out?\n"
LOCAL = "localdev"
QUESTIONS = (
    DEPLOY_Q
    + """\
what is the refund worker's timeout?
how do we rotate the webhook secret?
"""
)


@pytest.fixture
def github() -> Iterator[tuple[FakeGitHub, Seeded]]:
    with FakeGitHub() as fake:
        seeded = seed(fake)
        fake.share(REPO, users={"ada": "admin", "grace": "read"})  # acme/payments is private
        yield fake, seeded


def run(args: list[str], env: dict[str, str], cwd: Path, stdin: str | None = None) -> str:
    return lore(args, env, cwd, secret=TOKEN, stdin=stdin)


@pytest.mark.e2e
def test_add_attach_answer_with_links_then_follow_edits(
    tmp_path: Path, github: tuple[FakeGitHub, Seeded]
) -> None:
    fake, seeded = github
    env = {**lore_env(tmp_path), "GITHUB_TOKEN": TOKEN, "LOGNAME": LOCAL, "USER": LOCAL}
    web = f"{fake.web_url}/{REPO}"

    added = run(
        ["source", "add", "github", "--url", fake.base_url, "--token-env", "GITHUB_TOKEN"], env, tmp_path
    )
    assert "Connected GitHub at 127.0.0.1 as ada (personal access token …wxyz)" in added
    assert "acme/payments, acme/website, acme" in added

    fake.secondary_limit(1, retry_after="1", after=3)
    fake.secondary_limit(1, retry_after="1", status=429, after=2)
    attached = run(["source", "attach", "127.0.0.1", "--index", "github", "--repo", REPO], env, tmp_path)
    assert "Done indexing GitHub acme/payments" in attached and "8 pages indexed (8 new" in attached
    limited = [r for r in fake.api_requests() if r.status in (403, 429)]
    assert [r.status for r in limited] == [403, 429], "both limits met, waited out, nothing lost"

    # acme/payments is private: its facts reach someone GitHub lets read it, in private only.
    unmapped = run(["shell"], env, tmp_path, stdin="enable the github index\n" + QUESTIONS)
    assert all("every Tuesday" not in a and "45 seconds" not in a for a in answers(unmapped)), unmapped
    connection = re.search(r"(\d+)\D+127\.0\.0\.1", run(["source", "list"], env, tmp_path))
    assert connection is not None
    mapped = run(["access", "map", LOCAL, "Ada", "--source", "github"], env, tmp_path)
    assert f"@{LOCAL} is now mapped to GitHub (127.0.0.1) ada: from their next question" in mapped, mapped
    listed = run(["access", "mappings"], env, tmp_path)
    assert f"• @{LOCAL} → GitHub (127.0.0.1) ada" in listed, listed
    said = run(["shell"], env, tmp_path, stdin=QUESTIONS + "/in #eng\nenable the github index\n" + DEPLOY_Q)
    channel = said.split("lore> …\n")[-1]
    assert "every Tuesday" not in channel, channel  # an answer in a channel: public repositories only
    deploy, timeout, rotate = said.split("lore> …\n")[1:4]
    assert (
        "every Tuesday" in deploy
        and f"docs/deploy.md › Deploying the payments API <{web}/blob/main/docs/deploy.md>" in deploy
    ), deploy
    assert "45 seconds" in timeout, timeout
    assert f"<{web}/issues/{seeded.timeout_issue}#issuecomment-{seeded.timeout_comment}>" in timeout, timeout
    assert "payments-cli secrets rotate" in rotate, rotate
    assert f"<{web}/discussions/{seeded.discussion}#discussioncomment-{seeded.answer}>" in rotate, rotate

    fake.write(
        REPO,
        "docs/deploy.md",
        "# Deploying\n\nProduction deploys of the payments API go out every Thursday.\n",
    )
    fake.rename(REPO, "docs/architecture.rst", "docs/ledger.rst")
    fake.edit_comment(
        REPO, seeded.timeout_issue, seeded.timeout_comment, "The refund worker's timeout is now 90 seconds."
    )
    fake.delete_discussion(REPO, seeded.discussion)
    fake.blobs_served.clear()
    refreshed = run(["shell"], env, tmp_path, stdin="refresh acme/payments\n" + QUESTIONS)
    assert (
        "Done indexing *GitHub acme/payments*" in refreshed
        or "Done indexing GitHub acme/payments" in refreshed
    )
    assert sorted(fake.blobs_served) == ["docs/deploy.md", "docs/ledger.rst"]
    deploy, timeout, rotate = answers(refreshed)
    assert "every Thursday" in deploy and "every Tuesday" not in deploy, deploy
    assert "90 seconds" in timeout and "45 seconds" not in timeout, timeout
    assert "payments-cli secrets rotate" not in rotate, rotate

    chat = run(
        ["shell"],
        env,
        tmp_path,
        stdin=(
            "connect github\n"
            "list github repositories\n"
            "/in #eng\n"
            "add the acme/website repository to the github index\n"
            "stop indexing acme/website\n"
            "forget acme/website\n"
            "status\n"
        ),
    )
    assert "connect GitHub from the command line: `lore source add github --token-env GITHUB_TOKEN`" in chat
    assert "• *acme/payments* — Payments service" in chat or "• acme/payments — Payments service" in chat, (
        chat
    )
    assert "Syncing GitHub acme/website into the github index." in chat, chat
    assert "Forgetting acme/website: I'm syncing what stays (GitHub acme/payments)" in chat, chat
    assert "Done indexing GitHub acme/payments in" in chat.split("Forgetting acme/website")[1], chat
    # Taking one repository out is in the audit log, as the shell's, with the repository.
    audit = [json.loads(line) for line in run(["audit"], env, tmp_path).splitlines() if line.startswith("{")]
    [forgot] = [e for e in audit if e["action"] == "source.forget_folder"]
    assert (forgot["surface"], forgot["details"]["folder"]) == ("shell", "acme/website"), forgot
    print(added + attached + said + refreshed + chat)  # the sessions, for `pytest -s`
