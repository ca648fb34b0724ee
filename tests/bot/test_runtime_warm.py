"""What Lore loads before its first question, so that the first question does not hold up
every other conversation on the event loop."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PROBE = """
import asyncio, sys
from pathlib import Path
from bot.app.settings import Settings
from bot.chat.runtime import open_runtime
from knowledge import tokens

async def main() -> None:
    settings = Settings(_env_file=None, lore_home=Path(sys.argv[1]), database_url=None,
                        chroma_host=None, lore_jobs_in_process=False)
    async with open_runtime(settings):
        print(tokens._encoding.cache_info().currsize)

asyncio.run(main())
"""


def test_the_token_encoding_is_loaded_when_the_runtime_opens(tmp_path: Path) -> None:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "OPENAI_", "DATABASE_", "CHROMA_"))
    }
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path / "home")],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=Path(__file__).parents[2],
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[-1] == "1", "the encoding would load during the first question"
