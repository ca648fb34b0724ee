"""Confluence storage format to Markdown-flavoured text: structure kept (headings, lists,
tables, code), macros understood or dropped, and bodies that are not well-formed XML read
anyway, never with entities or the network."""

from __future__ import annotations

from knowledge.indexing.chunking import chunk_text
from knowledge.sources.connectors.storage_format import storage_to_markdown


def test_headings_paragraphs_and_inline_marks() -> None:
    body = (
        "<h1>Deploy&nbsp;guide</h1><p>Run <code>make deploy</code> &mdash; then <strong>wait</strong>"
        " for <em>green</em>.<br/>Then tell <a href='https://status.example.com'>status</a>.</p>"
        "<h3>Notes</h3><p>  spaced \n  out  </p>"
    )
    assert storage_to_markdown(body) == (
        "# Deploy guide\n\n"
        "Run `make deploy` — then **wait** for _green_.\n"
        "Then tell [status](https://status.example.com).\n\n"
        "### Notes\n\n"
        "spaced out\n"
    )


def test_nested_lists_and_paragraphs_in_items() -> None:
    body = (
        "<ul><li>one<ul><li>nested <b>bold</b></li></ul></li><li><p>two</p><p>more</p></li></ul>"
        "<ol><li>first</li><li>second<ol><li>inner</li></ol></li></ol>"
    )
    assert storage_to_markdown(body) == (
        "- one\n  - nested **bold**\n- two\n  more\n\n1. first\n2. second\n   1. inner\n"
    )


def test_tables_become_pipe_rows_with_a_header() -> None:
    body = (
        "<table><colgroup><col/></colgroup><tbody>"
        "<tr><th><p>Env</p></th><th>Host</th><th>Notes</th></tr>"
        "<tr><td>prod</td><td>a|b</td><td><ul><li>x</li><li>y</li></ul></td></tr>"
        "<tr><td>dev</td></tr></tbody></table>"
    )
    assert storage_to_markdown(body) == (
        "| Env | Host | Notes |\n| --- | --- | --- |\n| prod | a\\|b | - x - y |\n| dev |  |  |\n"
    )


def test_code_macros_become_fenced_blocks_with_their_language() -> None:
    body = (
        '<ac:structured-macro ac:name="code" ac:schema-version="1" ac:macro-id="x">'
        '<ac:parameter ac:name="language">python</ac:parameter>'
        '<ac:parameter ac:name="title">example</ac:parameter>'
        '<ac:plain-text-body><![CDATA[# not a heading\nif a < b and c > d:\n    print("```")\n]]>'
        "</ac:plain-text-body></ac:structured-macro>"
        '<ac:structured-macro ac:name="noformat"><ac:plain-text-body><![CDATA[raw <text>]]>'
        "</ac:plain-text-body></ac:structured-macro><pre>pre  formatted\n  kept</pre>"
    )
    text = storage_to_markdown(body)
    assert text == (
        '````python\n# not a heading\nif a < b and c > d:\n    print("```")\n````\n\n'
        "```\nraw <text>\n```\n\n"
        "```\npre  formatted\n  kept\n```\n"
    )
    [chunk] = chunk_text(text, title="Page")
    assert chunk.heading == "", "a # line inside code is not a heading"


def test_panels_are_kept_and_navigation_macros_dropped() -> None:
    body = (
        '<ac:structured-macro ac:name="toc"><ac:parameter ac:name="maxLevel">2</ac:parameter></ac:structured-macro>'
        '<ac:structured-macro ac:name="warning"><ac:rich-text-body><p>Never deploy on Fridays.</p>'
        "</ac:rich-text-body></ac:structured-macro>"
        '<ac:structured-macro ac:name="expand"><ac:parameter ac:name="title">Details</ac:parameter>'
        "<ac:rich-text-body><p>Hidden until opened.</p></ac:rich-text-body></ac:structured-macro>"
        '<ac:structured-macro ac:name="children"/>'
        '<ac:structured-macro ac:name="jira"><ac:parameter ac:name="key">OPS-12</ac:parameter></ac:structured-macro>'
    )
    assert storage_to_markdown(body) == (
        "**Warning:** Never deploy on Fridays.\n\n**Details**\n\nHidden until opened.\n\nOPS-12\n"
    )


def test_links_tasks_status_layouts_and_emoticons() -> None:
    body = (
        '<ac:layout><ac:layout-section ac:type="two_equal"><ac:layout-cell><h2>Left</h2>'
        '<p>See <ac:link><ri:page ri:content-title="Rollback" ri:space-key="ENG"/></ac:link>, '
        '<ac:link><ri:attachment ri:filename="plan.pdf"/><ac:plain-text-link-body><![CDATA[the plan]]>'
        "</ac:plain-text-link-body></ac:link> and "
        '<ac:structured-macro ac:name="status"><ac:parameter ac:name="title">DONE</ac:parameter>'
        '</ac:structured-macro> <ac:emoticon ac:name="smile" ac:emoji-fallback="🙂"/></p>'
        "</ac:layout-cell><ac:layout-cell><ac:task-list>"
        "<ac:task><ac:task-id>1</ac:task-id><ac:task-status>complete</ac:task-status>"
        "<ac:task-body>ship it</ac:task-body></ac:task>"
        "<ac:task><ac:task-status>incomplete</ac:task-status><ac:task-body>tell "
        '<ac:link><ri:user ri:account-id="557058"/></ac:link> the team '
        '<time datetime="2024-06-01"/></ac:task-body></ac:task></ac:task-list>'
        '<p><ac:image><ri:attachment ri:filename="diagram.png"/></ac:image></p>'
        "</ac:layout-cell></ac:layout-section></ac:layout>"
    )
    assert storage_to_markdown(body) == (
        "## Left\n\nSee Rollback, the plan and [DONE] 🙂\n\n- [x] ship it\n- [ ] tell the team 2024-06-01\n"
    )


def test_bodies_that_are_not_well_formed_are_read_anyway() -> None:
    recovered = storage_to_markdown("<p>unclosed <b>bold<p>next &unknown; &amp; done")
    assert " ".join(recovered.replace("*", "").split()) == "unclosed bold next &unknown; & done"
    assert storage_to_markdown("") == ""
    assert storage_to_markdown("   ") == ""
    assert storage_to_markdown("plain words, no tags") == "plain words, no tags\n"


def test_entities_and_doctypes_are_never_expanded() -> None:
    body = (
        '<!DOCTYPE x [<!ENTITY secret SYSTEM "file:///etc/passwd"><!ENTITY lol "lol">]>'
        "<p>&secret; &lol; fine</p>"
    )
    text = storage_to_markdown(body)
    assert "root:" not in text
    assert "lol lol" not in text
