"""End to end over files of every supported type, generated here: `lore ingest` a folder
of them (the real CLI, in a subprocess), then ask a question each file alone answers,
through the same services the CLI builds, and see that file cited first."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.knowledge.files import make_csv, make_docx, make_html_page, make_pdf, make_pptx

LORE = str(Path(sys.executable).with_name("lore"))

FILES: dict[str, bytes] = {
    "notes.txt": b"The office wifi password rotates on the first Monday of every month.\n",
    "guide.md": b"# Guide\n\n## Releases\n\nRelease candidates are cut from the main branch every Wednesday afternoon.\n",
    "page.html": make_html_page(
        title="Parking",
        heading="Parking",
        article=["Visitors park in the west garage, level two, and register at reception with their plate."],
    ),
    "policy.pdf": make_pdf(
        [["Travel policy.", "Economy class is required for flights shorter than six hours."]],
        title="Travel policy",
    ),
    "handbook.docx": make_docx(
        [(1, "Expenses"), (None, "Receipts must be submitted within thirty days of purchase.")],
        title="Handbook",
    ),
    "deck.pptx": make_pptx(
        [("Roadmap", ["The mobile app redesign ships in the third quarter."], "")], title="Roadmap"
    ),
    "people.csv": make_csv(
        [["name", "team", "desk"], ["Ada", "platform", "4.12"], ["Grace", "compilers", "2.07"]]
    ),
    "config.json": json.dumps({"service": {"retention_days": 45, "region": "eu-west"}}).encode(),
    "worker.py": b'"""Queue worker."""\n\nMAX_RETRIES = 7  # the worker retries a failed job seven times before giving up\n',
}
QUESTIONS = {
    "notes.txt": "When does the office wifi password rotate?",
    "guide.md": "When are release candidates cut?",
    "page.html": "Where do visitors park?",
    "policy.pdf": "Which class is required for short flights?",
    "handbook.docx": "How long do we have to submit receipts?",
    "deck.pptx": "When does the mobile app redesign ship?",
    "people.csv": "Which desk does Grace sit at?",
    "config.json": "How many retention days does the service keep?",
    "worker.py": "How many times does the worker retry a failed job?",
}


def lore(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "LORE_HOME": str(home), "HOME": str(home)}
    return subprocess.run([LORE, *args], env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("every-type")
    folder = root / "files"
    folder.mkdir()
    for name, data in FILES.items():
        (folder / name).write_bytes(data)
    result = lore("ingest", str(folder), "--index", "team", home=root / "home")
    assert result.returncode == 0, result.stderr
    assert f"{len(FILES)} added or updated, 0 already in memory, 0 failed" in result.stdout, result.stdout
    return root / "home"


@pytest.mark.e2e
async def test_each_type_answers_its_question(home: Path) -> None:
    from bot.app.local import index_for_cli, local_dm
    from bot.app.services import build_services
    from bot.app.settings import Settings
    from knowledge.engine import Request

    services = build_services(Settings(_env_file=None, lore_home=home))
    try:
        actor = await local_dm(services)
        index = await index_for_cli(services, actor, "team", create=False)
        cited = {}
        for name, question in QUESTIONS.items():
            answer = await services.knowledge.ask(Request([index], [{"role": "user", "content": question}]))
            cited[name] = answer.citations[0].name if answer.citations else None
    finally:
        await services.aclose()
    assert cited == {name: name for name in QUESTIONS}


@pytest.mark.e2e
def test_the_cli_answers_in_json(home: Path) -> None:
    result = lore("ask", QUESTIONS["policy.pdf"], "--index", "team", "--json", home=home)
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert not answer["abstained"] and answer["citations"][0]["name"] == "policy.pdf"


@pytest.mark.e2e
def test_documents_listing_shows_every_type(home: Path) -> None:
    result = lore("docs", "team", home=home)
    assert result.returncode == 0, result.stderr
    for mime in (
        "application/pdf",
        "wordprocessingml",
        "presentationml",
        "text/html",
        "text/csv",
        "application/json",
    ):
        assert mime in result.stdout, result.stdout
