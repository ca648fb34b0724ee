"""The Google Drive issue's "done when", through the real `lore` entry points against the fake
Google on loopback: `lore source add google-drive` with a service account's key file acting
as a Workspace user, `lore source attach --folder Handbook` (by its name) through a 403
`userRateLimitExceeded` mid-sync; Drive's sharing applied: the local user, unknown to Drive,
reads none of it, and once mapped to Ada (`lore access grant --user`, who owns the folder)
a fact in a Google Doc, one in the second sheet of a Sheet, one in a Slide and one in an
uploaded PDF (shared with Ada alone) are each answered in private with a citation linking
to the file in Drive, and none in a channel; an edit, a trashed file and a file moved out of
the folder are reflected after "refresh"; Ada's share of a file taken back is gone after the
next permission sync; and the chat commands (connect google drive, list google drive
folders, add … folder to … index) go through the shell's router."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.lore_cli import answers, lore, lore_env
from tests.fakes.google_server import DOCUMENT, DOMAIN, FakeGoogle, Permission, Seeded, seed

LOCAL = "localdev"
QUESTIONS = """\
how long may a trip be to book trains over flights?
how many seats does the Lovelace room have?
where are laptops collected?
how must badges be worn?
"""


@pytest.fixture
def google() -> Iterator[tuple[FakeGoogle, Seeded]]:
    with FakeGoogle() as fake:
        yield fake, seed(fake)


def run(args: list[str], env: dict[str, str], cwd: Path, key: str, stdin: str | None = None) -> str:
    return lore(args, env, cwd, secret=json.loads(key)["private_key"].splitlines()[1], stdin=stdin)


@pytest.mark.e2e
def test_add_attach_answer_with_links_then_follow_edits(
    tmp_path: Path, google: tuple[FakeGoogle, Seeded]
) -> None:
    fake, seeded = google
    env = {**lore_env(tmp_path), "LOGNAME": LOCAL, "USER": LOCAL}
    key = fake.service_account_key()
    key_file = tmp_path / "lore-reader.json"
    key_file.write_text(key)
    links = {
        name: fake.file_json(fake.files[file_id], f"ada@{DOMAIN}")["webViewLink"]
        for name, file_id in (
            ("doc", seeded.doc),
            ("sheet", seeded.sheet),
            ("slides", seeded.slides),
            ("pdf", seeded.pdf),
        )
    }

    added = run(
        [
            "source",
            "add",
            "google-drive",
            "--url",
            fake.drive_url,
            "--key-file",
            str(key_file),
            "--act-as",
            f"ada@{DOMAIN}",
        ],
        env,
        tmp_path,
        key,
    )
    assert f"Connected Google Drive at 127.0.0.1 as Ada Lovelace (ada@{DOMAIN})" in added, added
    assert f"service account lore-reader@acme-lore.iam.gserviceaccount.com acting as ada@{DOMAIN}" in added

    fake.rate_limit(1, after=6)
    attached = run(
        ["source", "attach", "127.0.0.1", "--index", "drive", "--folder", "Handbook"], env, tmp_path, key
    )
    assert f"Done indexing *Google Drive {seeded.handbook}*" in attached, attached
    assert "5 pages indexed (5 new" in attached and "2 attachments read" in attached, "and the 2 sheets"
    assert [r.status for r in fake.api_requests() if r.status == 403] == [403], "met once, waited out"

    unmapped = run(["shell"], env, tmp_path, key, stdin="enable the drive index\n" + QUESTIONS)
    assert all(links[k] not in a for a in answers(unmapped, 4) for k in links), "Drive does not know them"
    connection = re.search(r"(\d+)\D+127\.0\.0\.1", run(["source", "list"], env, tmp_path, key))
    assert connection is not None
    ada = f"{connection[1]}:user:ada@{DOMAIN}"
    mapped = run(["access", "grant", "--user", LOCAL, ada], env, tmp_path, key)
    assert f"Granted {ada} to {LOCAL}" in mapped, mapped
    said = run(
        ["shell"], env, tmp_path, key, stdin=QUESTIONS + "/in #eng\nenable the drive index\n" + QUESTIONS
    )
    in_channel = said.split("lore> …\n")[-4:]
    assert all(links[k] not in a for a in in_channel for k in links), "in a channel: none of it"
    assert "visibly" not in in_channel[3], in_channel[3]
    trains, seats, laptops, badges = said.split("lore> …\n")[1:5]
    assert "four hours" in trains and links["doc"] in trains, trains
    assert "12" in seats and links["sheet"] in seats, seats
    assert "IT desk on floor 2" in laptops and links["slides"] in laptops, laptops
    assert "visibly" in badges and links["pdf"] in badges, badges

    fake.edit(seeded.doc, "# Expenses\n\n## Travel\n\nBook trains over flights for trips under six hours.\n")
    fake.trash(seeded.slides)
    fake.move(seeded.pdf, seeded.archive)
    before = len(fake.api_requests())
    refreshed = run(["shell"], env, tmp_path, key, stdin="/in #eng\nrefresh Handbook\n/dm\n" + QUESTIONS)
    assert (
        "Done indexing *Google Drive Handbook*" in refreshed
        or "Done indexing Google Drive Handbook" in refreshed
    ), refreshed
    trains, _, laptops, badges = answers(refreshed, 4)
    assert "six hours" in trains and "four hours" not in trains, trains
    assert "IT desk on floor 2" not in laptops, laptops
    assert "visibly" not in badges, badges
    assert len(fake.api_requests()) > before

    # A file Ada may open only through a share: taken back in Drive, gone at the next permission sync.
    memo = fake.add(
        "Board memo",
        DOCUMENT,
        seeded.handbook,
        owner=f"bob@{DOMAIN}",
        content="# Board\n\nThe board meets in Lisbon.\n",
    )
    fake.share(memo.id, Permission("user", "writer", f"ada@{DOMAIN}"))  # a writer: sees its sharing
    memo_q = "where does the board meet?\n"
    shared = run(["shell"], env, tmp_path, key, stdin="/in #eng\nrefresh Handbook\n/dm\n" + memo_q)
    assert "Lisbon" in answers(shared, 1)[0], shared
    fake.unshare(memo.id, f"ada@{DOMAIN}")
    fake.share(memo.id, Permission("user", "reader", f"cy@{DOMAIN}"))
    synced = run(["access", "refresh"], env, tmp_path, key)
    assert "Synced who may read" in synced or "synced" in synced.lower(), synced
    revoked = run(["shell"], env, tmp_path, key, stdin=memo_q)
    assert "Lisbon" not in answers(revoked, 1)[0], revoked

    chat = run(
        ["shell"],
        env,
        tmp_path,
        key,
        stdin=(
            "connect google drive\n"
            "list google drive folders\n"
            "/in #eng\n"
            "add the Archive folder to the drive index\n"
            "status\n"
        ),
    )
    assert "connect Google Drive from the command line: `lore source add google-drive --key-file" in chat, (
        chat
    )
    assert "Archive" in chat and "Engineering" in chat, chat
    assert "Syncing Google Drive" in chat and "into the drive index" in chat, chat
    print(added + attached + said + refreshed + chat)  # the sessions, for `pytest -s`
