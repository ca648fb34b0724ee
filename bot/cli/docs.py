"""The documentation's reference tables, generated from the code so they cannot drift:
settings (from `Settings`), the command line (from the typer app), chat commands (from their
declarations) and who may do what (from the permission table).

They live in the docs site's pages (`docs/configuration.md`, `docs/commands.md`,
`docs/permissions.md`), between `<!-- generated: NAME -->` and `<!-- /generated -->`.
`python -m bot.cli.docs --write` rewrites the generated parts of every page (and of README.md,
should it hold one); a test fails when they are stale.
"""

from __future__ import annotations

import enum
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import typer

from bot.app.settings import Settings
from bot.chat.commands import DECLARATIONS
from storage.access import FEEDBACK, PERMISSIONS, Action, Role, Sight
from storage.document_access import restricted_readers

SOURCE_ACCESS = "read a document its source restricts"

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
MARKER = re.compile(r"(<!-- generated: (?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- /generated -->)", re.S)


def settings_table() -> str:
    rows = ["| variable | default | meaning |", "|---|---|---|"]
    for name, field in Settings.model_fields.items():
        rows.append(f"| `{name.upper()}` | {_default(field.default)} | {_cell(field.description or '')} |")
    return "\n".join(rows)


def commands_table() -> str:
    rows = ["| say | does | who may |", "|---|---|---|"]
    for declaration in DECLARATIONS:
        said = ", ".join(f"`{example}`" for example in declaration.examples)
        rows.append(f"| {said} | {_cell(declaration.summary)} | {_cell(declaration.who)} |")
    return "\n".join(rows)


def permissions_table() -> str:
    actions = list(Action)
    heads = [a.value for a in actions] + [SOURCE_ACCESS]
    rows = ["| index | " + " | ".join(heads) + " |", "|---" * (len(heads) + 1) + "|"]
    for kind, table in PERMISSIONS.items():
        cells = [_roles(table[action]) for action in actions] + [_cell(restricted_readers(kind))]
        rows.append(f"| {kind.value} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def feedback_table() -> str:
    sights = list(Sight)
    head = "| answer given in | " + " | ".join(s.value for s in sights) + " |"
    rows = [head, "|---" * (len(sights) + 1) + "|"]
    for given, table in FEEDBACK.items():
        cells = [_roles(table[s]) for s in sights]
        rows.append(f"| {given.value} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def cli_reference() -> str:
    from bot.cli.main import app

    lines = ["```"]
    for path, command in _commands(typer.main.get_command(app), ["lore"]):
        usage = " ".join([*path, *_params(command)])
        paragraph = " ".join((command.help or "").strip().split("\n\n")[0].split())
        summary = re.split(r"(?<=\.)\s", paragraph)[0].rstrip(".")
        lines.append(f"{usage:<60} # {summary}" if len(usage) < 60 else f"{usage}\n{'':<60} # {summary}")
    lines.append("```")
    return "\n".join(lines)


GENERATED: dict[str, Callable[[], str]] = {
    "settings": settings_table,
    "commands": commands_table,
    "permissions": permissions_table,
    "feedback": feedback_table,
    "cli": cli_reference,
}


def render(page: str) -> str:
    """`page` with every generated part made anew."""

    def fill(match: re.Match[str]) -> str:
        return f"{match.group(1)}{GENERATED[match.group('name')]()}\n{match.group(4)}"

    return MARKER.sub(fill, page)


def pages() -> list[Path]:
    """The Markdown files that may hold generated parts: the docs site's pages and the README."""
    return [*sorted(DOCS.rglob("*.md")), README]


def generated_in(page: str) -> list[str]:
    """The names of the generated parts `page` holds, in order."""
    return [match.group("name") for match in MARKER.finditer(page)]


def _commands(command: Any, path: list[str]) -> Iterator[tuple[list[str], Any]]:
    """Every command under `command` (typer's click objects), depth first, by name."""
    subcommands = getattr(command, "commands", None)
    if subcommands is None:
        yield path, command
        return
    if command.invoke_without_command and command.callback is not None and len(path) > 1:
        yield path, command
    for name in sorted(subcommands):
        if not subcommands[name].hidden:
            yield from _commands(subcommands[name], [*path, name])


def _params(command: Any) -> list[str]:
    shown = []
    for param in command.params:
        name = (param.name or "").upper()
        if param.param_type_name == "argument":
            shown.append(f"{name}…" if param.nargs == -1 else name)
        elif param.param_type_name == "option" and param.name != "help":
            flag = max(param.opts, key=len)
            spelled = flag if param.is_flag else f"{flag} {name}"
            shown.append(spelled if param.required else f"[{spelled}]")
    return shown


def _default(value: object) -> str:
    if value is None:
        return "unset"
    if isinstance(value, enum.Enum):
        value = value.value
    if value == "":
        return "empty"
    if isinstance(value, Path):
        return f"`./{value}`"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    return f"`{value}`"


def _roles(roles: frozenset[Role]) -> str:
    order = list(Role)
    return ", ".join(role.value for role in sorted(roles, key=order.index)) or "nobody"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def main(argv: list[str]) -> int:
    stale = []
    for path in pages():
        current = path.read_text()
        fresh = render(current)
        if fresh == current:
            continue
        if "--write" in argv:
            path.write_text(fresh)
        else:
            stale.append(path.relative_to(ROOT).as_posix())
    for name in stale:
        print(f"{name} is stale: run `python -m bot.cli.docs --write`", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
