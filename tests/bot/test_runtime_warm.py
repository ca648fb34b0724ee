"""What Lore does before its first question, so that the first question, or the garbage
collector, does not hold up every other conversation on the event loop."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PROBE = """
import asyncio, gc, sys
from pathlib import Path
from bot.app.settings import Settings
from bot.chat.runtime import open_runtime
from knowledge.backends import tokens

async def main() -> None:
    settings = Settings(_env_file=None, lore_home=Path(sys.argv[1]), database_url=None,
                        chroma_host=None, lore_jobs_in_process=False)
    async with open_runtime(settings, serving=sys.argv[2] == "serving"):
        print(gc.get_freeze_count(), len(gc.get_objects()))
        print(tokens._encoding.cache_info().currsize)

asyncio.run(main())
"""


def probe(home: Path, mode: str) -> list[str]:
    """The probe's output lines, the runtime opened in `home` as `mode` says."""
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "OPENAI_", "DATABASE_", "CHROMA_"))
    }
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(home), mode],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=Path(__file__).parents[2],
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.splitlines()


def test_the_token_encoding_is_loaded_when_the_runtime_opens(tmp_path: Path) -> None:
    assert probe(tmp_path / "home", "")[-1] == "1", "the encoding would load during the first question"


def test_a_serving_runtime_leaves_what_start_up_built_out_of_full_collections(tmp_path: Path) -> None:
    """The entry points open the runtime `serving`: a full collection then walks only what was
    made since, not the tens of thousands of objects start-up built (settle)."""
    frozen, tracked = map(int, probe(tmp_path / "serving", "serving")[0].split())
    assert frozen > 20_000 and tracked < frozen / 10
    frozen, tracked = map(int, probe(tmp_path / "plain", "")[0].split())
    assert frozen == 0 and tracked > 20_000, "opened for a test or a command, nothing is frozen"
