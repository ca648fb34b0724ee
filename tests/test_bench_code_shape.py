"""bench/code_shape.py: the figures docs/architecture.md quotes about knowledge/'s shape."""

from __future__ import annotations

from bench.code_shape import Shape, depth, functions, imports, report


def _shape() -> Shape:
    modules = {
        "knowledge": "",
        "knowledge.engine": "from knowledge.search import retrieval\nimport knowledge.errors\n",
        "knowledge.errors": "class KnowledgeError(Exception):\n    pass\n",
        "knowledge.search": "",
        "knowledge.search.retrieval": (
            "from typing import TYPE_CHECKING\n"
            "from knowledge.errors import KnowledgeError\n"
            "if TYPE_CHECKING:\n    from knowledge.engine import Engine\n"
            "def search():\n    from knowledge.engine import Engine\n    return 1\n"
        ),
    }
    return Shape("test", modules, frozenset({"knowledge", "knowledge.search"}), 3)


def test_imports_are_read_at_module_level_only_and_the_longest_chain_counts_modules() -> None:
    shape = _shape()
    graph = imports(shape)
    assert graph["knowledge.engine"] == {"knowledge.search", "knowledge.search.retrieval", "knowledge.errors"}
    assert graph["knowledge.search.retrieval"] == {"knowledge.errors"}, "not TYPE_CHECKING, not in functions"
    assert depth(graph) == 3, "engine → retrieval → errors"
    assert depth({"a": {"b"}, "b": {"a"}}) == 2, "a cycle is cut where it closes"


def test_the_report_names_top_level_modules_folders_layers_and_the_largest_functions() -> None:
    text = report(_shape())
    assert "modules at the top of knowledge/ (beside `__init__.py`): 2 (engine, errors)" in text
    assert "folders: search/ 2" in text
    assert "layers declared inside knowledge/ (import-linter): 3" in text
    assert functions(_shape())[0] == (3, "knowledge.search.retrieval.search")
