"""The shape of `knowledge/` at a git revision: its tree, how many modules and lines, how deep
its imports run, the layers its import-linter contract declares, its largest modules and
functions. Read from git, so two revisions compare without checking either out:

    python -m bench.code_shape 6b5a262 HEAD

prints one Markdown report per revision (`docs/architecture.md` quotes it).
"""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from collections import Counter
from dataclasses import dataclass
from functools import cache
from pathlib import PurePosixPath

PACKAGE = "knowledge"
TOP = 5
"""How many of the largest modules and functions a report lists."""


@dataclass(frozen=True)
class Shape:
    revision: str
    modules: dict[str, str]
    """Module name → its source."""
    packages: frozenset[str]
    """The modules that are folders (their `__init__.py`)."""
    layers: int

    @property
    def lines(self) -> int:
        return sum(source.count("\n") for source in self.modules.values())


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], check=True, capture_output=True, text=True).stdout


def shape(revision: str) -> Shape:
    files = [f for f in _git("ls-tree", "-r", "--name-only", revision, PACKAGE).split() if f.endswith(".py")]
    modules = {_module(f): _git("show", f"{revision}:{f}") for f in files}
    try:
        config = tomllib.loads(_git("show", f"{revision}:pyproject.toml"))
    except subprocess.CalledProcessError:
        config = {}
    contracts = config.get("tool", {}).get("importlinter", {}).get("contracts", [])
    inside = [c for c in contracts if c.get("type") == "layers" and PACKAGE in c.get("containers", [])]
    packages = frozenset(_module(f) for f in files if f.endswith("/__init__.py"))
    return Shape(revision, modules, packages, max((len(c["layers"]) for c in inside), default=0))


def _module(path: str) -> str:
    parts = list(PurePosixPath(path).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(shape: Shape) -> dict[str, set[str]]:
    """Each module's imports of other modules of the package, at module level (not those
    under `if TYPE_CHECKING:` nor inside functions: they do not run when it is imported)."""
    graph: dict[str, set[str]] = {}
    for name, source in shape.modules.items():
        found: set[str] = set()
        for node in ast.parse(source).body:
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                targets = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            found |= {t for t in targets if t in shape.modules and t != name}
        graph[name] = found
    return graph


def depth(graph: dict[str, set[str]]) -> int:
    """The longest chain of imports (modules in it), cycles cut where they close."""

    @cache
    def longest(name: str, seen: frozenset[str]) -> int:
        return 1 + max((longest(d, seen | {d}) for d in graph[name] if d not in seen), default=0)

    sys.setrecursionlimit(10_000)
    return max((longest(name, frozenset({name})) for name in graph), default=0)


def functions(shape: Shape) -> list[tuple[int, str]]:
    found = []
    for name, source in shape.modules.items():
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno:
                found.append((node.end_lineno - node.lineno + 1, f"{name}.{node.name}"))
    return sorted(found, reverse=True)[:TOP]


def report(shape: Shape) -> str:
    folders = Counter(
        name.split(".")[1]
        for name in shape.modules
        if name.count(".") > 1 or (name in shape.packages and name != PACKAGE)
    )
    folders.pop(PACKAGE, None)
    top_level = sorted(
        n.split(".")[1] for n in shape.modules if n.count(".") == 1 and n not in shape.packages
    )
    stages = sum(
        s.count("\n")
        for n, s in shape.modules.items()
        if n.split(".")[1:2] not in (["extraction"], ["sources"])
    )
    sizes = sorted(((s.count("\n"), n) for n, s in shape.modules.items()), reverse=True)[:TOP]
    lines = [
        f"### knowledge/ at {shape.revision}",
        "",
        f"- modules: {len(shape.modules)}, lines: {shape.lines:,} ({stages:,} outside extraction/ and"
        " sources/, which the redesign did not reorganise)",
        f"- modules at the top of knowledge/ (beside `__init__.py`): {len(top_level)} ({', '.join(top_level)})",
        "- folders: " + ", ".join(f"{f}/ {n}" for f, n in sorted(folders.items())),
        f"- longest chain of imports inside knowledge/: {depth(imports(shape))} modules",
        f"- layers declared inside knowledge/ (import-linter): {shape.layers}",
        "- largest modules: " + ", ".join(f"{n} ({c})" for c, n in sizes),
        "- largest functions: " + ", ".join(f"{n} ({c})" for c, n in functions(shape)),
    ]
    return "\n".join(lines)


def main(argv: list[str]) -> None:
    for revision in argv or ["HEAD"]:
        print(report(shape(revision)), end="\n\n")


if __name__ == "__main__":
    main(sys.argv[1:])
