"""The README and the docs site stay true: the reference tables are generated from the code and
live in `docs/`, the site builds with `mkdocs build --strict` (internal links and anchors
checked), the repository paths and links they name exist, and the README stays a front door."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from bot.app.settings import Settings
from bot.chat.commands import DECLARATIONS
from bot.cli import docs

ROOT = docs.ROOT
README_MOST_LINES = 200
TABLES = {
    "settings": "configuration.md",
    "commands": "commands.md",
    "permissions": "permissions.md",
    "cli": "commands.md",
}


def _site_text() -> str:
    return "\n".join(page.read_text() for page in docs.pages())


def test_every_generated_table_is_fresh() -> None:
    for page in docs.pages():
        current = page.read_text()
        assert docs.render(current) == current, f"{page.name} is stale: run `python -m bot.cli.docs --write`"


def test_each_generated_table_lives_once_in_its_docs_page_and_not_in_the_readme() -> None:
    found = {path.name: docs.generated_in(path.read_text()) for path in docs.pages()}
    for name, page in TABLES.items():
        holders = [path for path, names in found.items() for held in names if held == name]
        assert holders == [page], (name, holders)
    assert found["README.md"] == []


def test_every_setting_command_and_cli_command_is_documented() -> None:
    text = _site_text()
    for name, field in Settings.model_fields.items():
        assert f"`{name.upper()}`" in text
        assert field.description, f"{name} needs a description for the docs"
    for declaration in DECLARATIONS:
        assert f"`{declaration.examples[0]}`" in text
    for command in ("lore ingest", "lore ask", "lore source attach", "lore jobs cancel", "lore doctor"):
        assert command in text


def test_a_stale_table_is_noticed_and_written_anew() -> None:
    current = (docs.DOCS / "configuration.md").read_text()
    stale = current.replace("`LORE_HOME`", "`LORE_HOMEDIR`", 1)
    assert docs.render(stale) != stale
    assert docs.render(stale) == current


def test_the_entry_point_reports_fresh_pages() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bot.cli.docs"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert (done.returncode, done.stderr) == (0, "")


def test_the_readme_is_a_front_door() -> None:
    readme = docs.README.read_text()
    assert len(readme.splitlines()) <= README_MOST_LINES
    shots = re.findall(r"!\[[^\]]+\]\((docs/img/console-[\w-]+\.png)\)", readme)
    assert len(set(shots)) >= 2, "the README shows two screenshots of the admin console"
    makefile = (ROOT / "Makefile").read_text()
    for target in ("run", "test"):
        assert f"make {target} " in readme
        assert re.search(rf"^{target}: ", makefile, re.M), (
            f"`make {target}` is in the README but not the Makefile"
        )


def test_relative_links_of_the_readme_and_pages_point_at_files() -> None:
    for page in docs.pages():
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            path = (page.parent / target.split("#", 1)[0]).resolve()
            assert path.exists(), f"{page.name} links to {target}, which does not exist"


REPO_PATH = re.compile(r"`((?:bot|knowledge|storage|bench|tests|docs)/[\w./-]*[\w/])`")


def test_repository_paths_named_in_the_docs_exist() -> None:
    for page in docs.pages():
        for path in REPO_PATH.findall(page.read_text()):
            if "*" in path or "…" in path:
                continue
            assert (ROOT / path).exists(), f"{page.name} names {path}, which does not exist"


def test_the_site_builds_strictly_offline(tmp_path: Path) -> None:
    mkdocs = Path(sys.executable).with_name("mkdocs")  # a test extra, like pytest
    done = subprocess.run(
        [str(mkdocs), "build", "--strict", "--quiet", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "site" / "permissions" / "index.html").is_file()


def test_a_broken_link_fails_the_strict_build(tmp_path: Path) -> None:
    mkdocs = Path(sys.executable).with_name("mkdocs")  # a test extra, like pytest
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# Home\n\nSee [the API](http-api.md#keyz).\n")
    (tmp_path / "mkdocs.yml").write_text((ROOT / "mkdocs.yml").read_text().split("\nnav:")[0] + "\n")
    done = subprocess.run(
        [str(mkdocs), "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode != 0
    assert "http-api.md" in done.stderr
