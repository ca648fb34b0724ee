"""`make run` with nothing configured: `lore run` opens the shell, says how to connect Slack,
and a scripted session adds a local folder and answers a question about it with sources."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

LORE = str(Path(sys.executable).with_name("lore"))


@pytest.mark.e2e
def test_lore_run_without_tokens_is_a_scriptable_shell(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "deploy.md").write_text("# Deploying\n\nWe deploy the billing service every Tuesday.\n")
    (docs / "oncall.md").write_text("# On-call\n\nThe on-call engineer carries the pager for a week.\n")
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "OPENAI_", "DATABASE_", "CHROMA_"))
    }
    script = f"@lore add {docs} to your memory\n@lore when do we deploy billing?\n"
    run = subprocess.run(
        [LORE, "run"],
        input=script,
        env={**env, "LORE_HOME": str(tmp_path / "home")},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert "To connect Slack, set SLACK_BOT_TOKEN" in lines[0]
    assert "Added deploy.md to the personal index (1 passage)." in run.stdout
    assert "Added oncall.md to the personal index (1 passage)." in run.stdout
    answer = run.stdout[run.stdout.index("We deploy the billing service every Tuesday. [1]") :]
    assert "> We deploy the billing service every Tuesday. [1]" in answer
    assert "Sources:\n  [1] deploy.md, added just now (personal)" in answer
    assert "oncall.md" not in answer  # off the subject, not quoted
