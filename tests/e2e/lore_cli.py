"""What the end-to-end tests of the connectors share (`test_{confluence,github,notion,
google_drive}.py`): the real `lore` command in a process of its own, with an environment of
its own (a scratch home, a secret key, the loopback fakes allowed), and the shell's answers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from cryptography.fernet import Fernet

LORE = str(Path(sys.executable).with_name("lore"))


def lore_env(home: Path) -> dict[str, str]:
    """The test's environment without Lore's settings, and Lore at `home`."""
    keep = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "SLACK_", "CHROMA_", "DATABASE_", "LORE_"))
    }
    return {
        **keep,
        "HOME": str(home),
        "LORE_HOME": str(home / "lore"),
        "LORE_SECRET_KEY": Fernet.generate_key().decode(),
        "LORE_CRAWL_ALLOW": "127.0.0.1",
        "LORE_PROGRESS_SECONDS": "0.2",
    }


def lore(args: list[str], env: dict[str, str], cwd: Path, *, secret: str, stdin: str | None = None) -> str:
    """`lore ARGS`' output; it must succeed and never show `secret`."""
    done = subprocess.run(
        [LORE, *args], env=env, cwd=cwd, input=stdin, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert secret not in done.stdout + done.stderr
    return done.stdout


def answers(said: str, count: int = 3) -> list[str]:
    """The shell's last `count` answers, in order (each begins after Lore's "…" while it thinks)."""
    return said.split("lore> …\n")[-count:]
