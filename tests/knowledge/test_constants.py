"""Every numeric constant of knowledge/ says why it is what it is (issue 37): a fitted one is
data (`knowledge/data/parameters.toml`), a setting is a setting, and any other carries a
comment or a docstring, its own or its group's (consecutive constants under one comment)."""

from __future__ import annotations

import ast
from pathlib import Path

import knowledge

ROOT = Path(knowledge.__file__).parent


def _numeric(value: ast.expr) -> bool:
    if isinstance(value, ast.Constant):
        return isinstance(value.value, int | float) and not isinstance(value.value, bool)
    if isinstance(value, ast.UnaryOp):
        return _numeric(value.operand)
    if isinstance(value, ast.BinOp):
        return _numeric(value.left) or _numeric(value.right)
    if isinstance(value, ast.Tuple):
        return all(_numeric(e) for e in value.elts)  # (1, 3, 5), not a table of strings and numbers
    return False


def _unit(node: ast.Assign | ast.AnnAssign) -> bool:
    """`MB = 1024 * 1024`: a unit, which says itself."""
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return all(isinstance(t, ast.Name) and t.id in {"KB", "MB", "GB"} for t in targets)


def _unexplained(path: Path, root: Path = ROOT) -> list[str]:
    source = path.read_text()
    lines = source.split("\n")
    body = ast.parse(source).body
    found = []
    for i, node in enumerate(body):
        if not isinstance(node, ast.Assign | ast.AnnAssign) or node.value is None:
            continue
        if not _numeric(node.value) or _unit(node):
            continue
        first = i  # the group: consecutive assignments, none separated by a blank line
        while (
            first
            and isinstance(body[first - 1], ast.Assign | ast.AnnAssign)
            and body[first - 1].end_lineno == body[first].lineno - 1
        ):
            first -= 1
        last = i
        while (
            last + 1 < len(body)
            and isinstance(body[last + 1], ast.Assign | ast.AnnAssign)
            and body[last + 1].lineno == body[last].end_lineno + 1  # type: ignore[operator]
        ):
            last += 1
        commented = any("#" in lines[n - 1] for n in range(node.lineno, (node.end_lineno or node.lineno) + 1))
        above = lines[body[first].lineno - 2].lstrip().startswith("#")
        after = (
            last + 1 < len(body)
            and isinstance(body[last + 1], ast.Expr)
            and isinstance(body[last + 1].value, ast.Constant)  # type: ignore[attr-defined]
            and isinstance(body[last + 1].value.value, str)  # type: ignore[attr-defined]
        )
        own = (
            i + 1 < len(body)
            and isinstance(body[i + 1], ast.Expr)
            and isinstance(body[i + 1].value, ast.Constant)  # type: ignore[attr-defined]
        )
        if not (commented or above or after or own):
            found.append(f"{path.relative_to(root.parent)}:{node.lineno}: {lines[node.lineno - 1].strip()}")
    return found


def test_every_numeric_constant_of_knowledge_says_why() -> None:
    unexplained = [line for path in sorted(ROOT.rglob("*.py")) for line in _unexplained(path)]
    assert unexplained == [], "say why in one line (or move a fitted number to parameters.toml)"


def test_the_check_finds_a_bare_constant(tmp_path: Path) -> None:
    module = tmp_path / "knowledge" / "bare.py"
    module.parent.mkdir()
    module.write_text(
        'MB = 1024 * 1024\nWHY = 3  # because\n\n# a group\nA = 1\nB = 2\n\nBARE = 0.25\n\nDOC = 4\n"""why"""\n'
    )
    assert _unexplained(module, tmp_path / "knowledge") == ["knowledge/bare.py:8: BARE = 0.25"]
