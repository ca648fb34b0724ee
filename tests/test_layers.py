"""Dependencies run one way, bot -> knowledge -> storage, and only bot/ talks to Slack
(the contracts in pyproject.toml, checked by import-linter)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IGNORED = ("DATABASE_URL", "CHROMA_HOST", "OPENAI_API_KEY", "OPENAI_BASE_URL", "SLACK_BOT_TOKEN")
HEAVY = (
    "pypdf",
    "trafilatura",
    "docx",
    "pptx",
    "aiohttp",
    "apscheduler",
    "alembic",
    "knowledge.sources.fetch",
    "knowledge.sources.connectors.service",
)
"""What a command that neither reads files, fetches, runs jobs nor migrates must not load."""


def lore_then(
    argv: list[str], report: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`lore ARGV` in a process of its own, through the console script's entry point, then
    the Python expression `report` (`gc` and `sys` imported) printed to stderr."""
    probe = (
        "import gc, sys\n"
        "from bot.cli import main\n"
        f"sys.argv = ['lore', *{argv!r}]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        f"print({report}, file=sys.stderr)"
    )
    return subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def test_import_contracts_hold() -> None:
    lint_imports = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run([str(lint_imports)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "7 kept, 0 broken" in result.stdout


def test_the_cli_starts_without_what_its_commands_seldom_need() -> None:
    """The PDF, HTML and Office libraries load when a file of their type is read; the crawler
    (aiohttp), the job worker (APScheduler) and Alembic when a command fetches, runs jobs or
    has migrations to apply; not with every command (`lore ask` and `lore --help` would pay
    about a second for them)."""
    probe = f"import sys, bot.cli.main; print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_asking_an_index_by_name_loads_none_of_it(tmp_path: Path) -> None:
    """`lore ask -i NAME` finds the index through the use cases, which every surface builds
    whole; the connectors' client among them is built on first use, not with them."""
    env = {k: v for k, v in os.environ.items() if k not in IGNORED} | {"LORE_HOME": str(tmp_path)}
    lore = [sys.executable, "-c", "from bot.cli import main; main()"]
    subprocess.run([*lore, "indexes"], cwd=ROOT, env=env, check=True, capture_output=True, timeout=120)
    result = lore_then(
        ["ask", "-i", "personal", "how do we rotate the keys?"],
        f"sorted(m for m in {HEAVY!r} if m in sys.modules)",
        env,
    )
    assert "personal index" in result.stdout, result.stdout + result.stderr
    assert result.stderr.strip().splitlines()[-1] == "[]", result.stderr


def test_the_lore_command_freezes_what_its_import_built() -> None:
    """`lore` imports the command line with the collector paused, and what the import built is
    frozen out of its sight; collection is back on for the command itself."""
    result = lore_then(["--help"], "gc.get_freeze_count(), gc.isenabled()")
    assert "Usage" in result.stdout
    frozen, enabled = result.stderr.split()
    assert int(frozen) > 100_000
    assert enabled == "True"
