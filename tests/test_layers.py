"""Dependencies run one way, bot -> knowledge -> storage, and only bot/ talks to Slack
(the contracts in pyproject.toml, checked by import-linter)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_import_contracts_hold() -> None:
    lint_imports = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run([str(lint_imports)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "5 kept, 0 broken" in result.stdout


def test_the_cli_starts_without_the_file_parsers() -> None:
    """The PDF, HTML and Office libraries load when a file of their type is read, not with
    every command (`lore ask` and `lore --help` would pay a fifth of a second for them)."""
    probe = "import sys, bot.cli.main; print(sorted(m for m in ('pypdf', 'trafilatura', 'docx', 'pptx') if m in sys.modules))"
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
