"""Notion blocks and properties → Markdown, on Notion's JSON shapes: lists nested and
numbered, to-dos, toggles, callouts and quotes, code with its language, tables, equations,
rich text annotations and mentions, child pages linked; a row's properties as lines."""

from __future__ import annotations

from typing import Any

from knowledge.sources.connectors.notion_markdown import CHILDREN, Renderer, property_lines, rich_text

Json = dict[str, Any]


def span(text: str, **marks: bool) -> Json:
    notes = {"bold": False, "italic": False, "strikethrough": False, "underline": False, "code": False}
    return {"type": "text", "plain_text": text, "annotations": {**notes, **marks, "color": "default"}}


def block(kind: str, text: str = "", *children: Json, **own: Any) -> Json:
    data = {"rich_text": [span(text)] if text else [], **own}
    found: Json = {"object": "block", "id": f"id-{kind}-{text}", "type": kind, kind: data}
    if children:
        found |= {"has_children": True, CHILDREN: list(children)}
    return found


def test_rich_text_keeps_marks_outside_spaces_and_equations_as_latex() -> None:
    items = [
        span("Never", bold=True),
        span(" deploy "),
        span("main", code=True),
        span(" on "),
        span("Friday ", italic=True),
    ]
    assert rich_text(items) == "**Never** deploy `main` on _Friday_ "
    mention = {"type": "mention", "plain_text": "Runbooks", "mention": {"type": "page", "page": {"id": "x"}}}
    assert rich_text(
        [mention, {"type": "equation", "plain_text": "x", "equation": {"expression": "E=mc^2"}}]
    ) == ("RunbooksE=mc^2")
    assert rich_text(items, marks=False) == "Never deploy main on Friday "


def test_lists_nest_number_and_check_and_stay_tight() -> None:
    blocks = [
        block("bulleted_list_item", "Before a deploy", block("bulleted_list_item", "freeze merges"),
              block("to_do", "watch the canary", checked=True)),
        block("numbered_list_item", "Run make release"),
        block("numbered_list_item", "Announce it"),
        block("paragraph", "After."),
        block("numbered_list_item", "Again from one"),
    ]  # fmt: skip
    assert Renderer().markdown(blocks) == (
        "- Before a deploy\n  - freeze merges\n  - [x] watch the canary\n\n"
        "1. Run make release\n2. Announce it\n\nAfter.\n\n1. Again from one\n"
    )


def test_toggles_callouts_quotes_code_tables_and_child_pages() -> None:
    table = block("table", "", block("table_row", cells=[[span("Service")], [span("Owner")]]),
                  block("table_row", cells=[[span("pay|ments")], [span("Ada")]]), table_width=2, has_column_header=True)  # fmt: skip
    blocks = [
        block("heading_2", "On call"),
        block("toggle", "Handover", block("paragraph", "At 09:30 on Mondays.")),
        block("callout", "Careful", icon={"type": "emoji", "emoji": "⚠️"}),
        block("quote", "Move carefully."),
        block("code", "", rich_text=[span("X = 45\n")], language="python", caption=[span("settings.py")]),
        table,
        {"object": "block", "id": "e", "type": "equation", "equation": {"expression": "a^2+b^2"}},
        {"object": "block", "id": "abc-123", "type": "child_page", "child_page": {"title": "Runbooks"}},
        {"object": "block", "id": "d", "type": "child_database", "child_database": {"title": "Decisions"}},
        block("table_of_contents"),
    ]
    text = Renderer(lambda page_id: f"https://notion.test/{page_id}").markdown(blocks)
    assert text == (
        "## On call\n\nHandover\n\nAt 09:30 on Mondays.\n\n> ⚠️ Careful\n\n> Move carefully.\n\n"
        "```python\nX = 45\n```\n\nsettings.py\n\n"
        "| Service | Owner |\n|---|---|\n| pay\\|ments | Ada |\n\n$$\na^2+b^2\n$$\n\n"
        "Page: [Runbooks](https://notion.test/abc-123)\n\nDatabase: Decisions\n"
    )


def test_a_rows_properties_are_lines_with_names_for_people_and_pages() -> None:
    properties = {
        "Name": {"type": "title", "title": [span("Ledger database")]},
        "Status": {"type": "status", "status": {"name": "Accepted"}},
        "Owner": {"type": "people", "people": [{"object": "user", "id": "u1"}]},
        "Decided": {"type": "date", "date": {"start": "2024-03-14", "end": "2024-03-15"}},
        "Related": {"type": "relation", "relation": [{"id": "p1"}, {"id": "gone"}]},
        "Tags": {"type": "multi_select", "multi_select": [{"name": "storage"}, {"name": "ledger"}]},
        "Cost": {"type": "number", "number": 12.0},
        "Done": {"type": "checkbox", "checkbox": False},
        "Score": {"type": "formula", "formula": {"type": "number", "number": 0.5}},
        "Empty": {"type": "rich_text", "rich_text": []},
        "Ticket": {"type": "unique_id", "unique_id": {"prefix": "DEC", "number": 7}},
    }
    people = {"u1": "Ada Lovelace"}.get
    pages = {"p1": "Use SQS for the refund queue"}.get
    assert property_lines(properties, people, pages) == [
        "Status: Accepted",
        "Owner: Ada Lovelace",
        "Decided: 2024-03-14 → 2024-03-15",
        "Related: Use SQS for the refund queue",
        "Tags: storage, ledger",
        "Cost: 12",
        "Done: no",
        "Score: 0.5",
        "Ticket: DEC-7",
    ]
