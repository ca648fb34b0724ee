"""Chunking: structure, window fit, overlap and offsets, with the real MiniLM tokenizer.

Run as a module to measure throughput: `python -m tests.knowledge.indexing.test_chunking [MB]`.
"""

from __future__ import annotations

import random
import re
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from itertools import pairwise

import pytest

from knowledge.backends.wordpieces import count_by_words, split_word_pieces, tokenizer
from knowledge.indexing.chunking import ChunkSpec, TextChunk, chunk_text, count_word_pieces
from tests.support.timing import own_heap

HEADING_LINE = re.compile(r"^#{1,6} ")


def pieces(text: str) -> int:
    """The reference count: the tokenizer itself, nothing remembered."""
    return len(tokenizer().encode(text, add_special_tokens=False).ids)


@lru_cache(maxsize=1)
def vocabulary() -> tuple[list[str], list[float]]:
    """Whole English words from the model's vocabulary, with Zipf-like cumulative weights."""
    vocab = tokenizer().get_vocab()
    words = sorted((w for w in vocab if w.isalpha() and w.isascii() and len(w) > 2), key=vocab.__getitem__)
    cumulative, total = [], 0.0
    for rank in range(len(words)):
        total += 1 / (rank + 20)
        cumulative.append(total)
    return words, cumulative


class Writer:
    """Markdown like the extractors produce: headings, prose, lists, code, tables, links."""

    def __init__(self, seed: int) -> None:
        self.rnd = random.Random(seed)

    def words(self, n: int) -> list[str]:
        words, weights = vocabulary()
        chosen = self.rnd.choices(words, cum_weights=weights, k=n)
        if self.rnd.random() < 0.3:  # a rare word the vocabulary splits into pieces
            chosen[self.rnd.randrange(n)] = "".join(self.rnd.choices("bcdfghklmnprstvz", k=9))
        return chosen

    def sentence(self) -> str:
        words = self.words(self.rnd.randint(4, 28))
        if self.rnd.random() < 0.1:
            words.insert(1, f"[{words[1]}](https://example.com/{words[0]}/{words[-1]})")
        if self.rnd.random() < 0.1:
            words.append(f"`{words[0]}_{words[-1]}()`")
        return " ".join(words).capitalize() + self.rnd.choice(".....?!")

    def prose(self, sentences: int) -> str:
        return " ".join(self.sentence() for _ in range(sentences))

    def paragraph(self) -> str:
        return self.prose(self.rnd.randint(1, 9))

    def many(self, make: Callable[[Writer], str], n: int, between: str) -> str:
        return between.join(make(self) for _ in range(n))

    def bullets(self) -> str:
        marks = ["- ", "* ", "1. "]
        mark = self.rnd.choice(marks)
        return "\n".join(mark + self.sentence() for _ in range(self.rnd.randint(2, 9)))

    def code(self) -> str:
        lines = [f"# {' '.join(self.words(4))}"]
        for _ in range(self.rnd.randint(2, 20)):
            a, b = self.words(2)
            lines.append(f"{'    ' * self.rnd.randint(0, 2)}{a} = {b}({a!r}, {self.rnd.randint(0, 999)})")
        return "```python\n" + "\n".join(lines) + "\n```"

    def table(self) -> str:
        rows = [" | ".join(self.words(4)) for _ in range(self.rnd.randint(2, 12))]
        return "\n".join([rows[0], "--- | --- | --- | ---", *rows[1:]])

    def block(self) -> str:
        kind = self.rnd.choices([self.paragraph, self.bullets, self.code, self.table], [12, 3, 2, 1])[0]
        return kind()

    def document(self, size: int) -> str:
        parts: list[str] = []
        length, level = 0, 1
        while length < size:
            level = max(1, min(4, level + self.rnd.choice([-1, 0, 0, 1])))
            heading = "#" * level + " " + " ".join(self.words(self.rnd.randint(1, 6))).title()
            section = [heading, *(self.block() for _ in range(self.rnd.randint(0, 7)))]
            parts.extend(section)
            length += sum(len(p) + 2 for p in section)
        return "\n\n".join(parts)


def markdown(size: int, seed: int = 1) -> str:
    return Writer(seed).document(size)


def assert_well_formed(text: str, chunks: list[TextChunk], title: str, spec: ChunkSpec) -> None:
    """The invariants every chunking keeps."""
    assert [c.position for c in chunks] == list(range(len(chunks)))
    for chunk in chunks:
        assert pieces(chunk.embedding_text(title)) + 2 <= spec.max_tokens
        assert chunk.text.strip() and chunk.text == chunk.text.rstrip()  # indentation may stay
        assert text[chunk.start : chunk.start + len(chunk.text)] == chunk.text
    starts = [c.start for c in chunks]
    assert starts == sorted(starts)


def uncovered(text: str, chunks: list[TextChunk]) -> str:
    """Non-space text that no chunk holds, heading lines aside."""
    covered = bytearray(len(text))
    for chunk in chunks:
        covered[chunk.start : chunk.start + len(chunk.text)] = b"\x01" * len(chunk.text)
    lost: list[str] = []
    for line in re.finditer(r".+", text):
        if HEADING_LINE.match(line[0]):
            continue
        lost.extend(ch for at, ch in enumerate(line[0], line.start()) if not covered[at] and not ch.isspace())
    return "".join(lost)


LONG_TITLE = " ".join(f"volume{n} of the collected minutes" for n in range(60))
CASES = {
    "markdown": (markdown(40_000, seed=3), "Operations Handbook"),
    "long paragraph": (Writer(4).prose(400), ""),
    "word-less line": ("x" * 60_000, "Blob"),
    "punctuation line": ("-=" * 4_000, ""),
    "base64 and urls": (
        "\n".join(
            f"https://example.com/{'a1b2c3' * n}/path?q={n} " + "QUJDRA" * 40 * n for n in range(1, 40)
        ),
        "",
    ),
    "lists": (Writer(5).many(Writer.bullets, 60, "\n"), "Checklist"),
    "code": (Writer(6).many(Writer.code, 60, "\n\n"), ""),
    "cjk": ("# 概要\n\n" + "東京は日本の首都です。人口は約千四百万人です。" * 400, "日本"),
    "mixed scripts": (
        "# Ünïcödé\n\n" + " ".join("naïve café 😀 Ελληνικά русский 한국어 עברית العربية" for _ in range(300)),
        "",
    ),
    "long title": (markdown(8_000, seed=7), LONG_TITLE),
    "long heading path": (
        "\n\n".join(
            f"{'#' * n} " + " ".join(Writer(n).words(120)) + "\n\n" + Writer(n).paragraph()
            for n in range(1, 7)
        ),
        "Deep",
    ),
    "control characters": ("alpha\x0bbeta\x0cgamma\x1c delta\x85 epsilon\u2028zeta\u3000eta " * 300, ""),
}
SPECS = [ChunkSpec(), ChunkSpec(max_tokens=128, overlap_tokens=8), ChunkSpec(overlap_tokens=0, min_chars=0)]


@pytest.mark.parametrize("spec", SPECS, ids=["default", "small window", "no overlap"])
@pytest.mark.parametrize("case", CASES)
def test_every_chunk_fits_the_window_and_points_into_the_text(case: str, spec: ChunkSpec) -> None:
    text, title = CASES[case]
    chunks = chunk_text(text, title=title, spec=spec)
    assert chunks
    assert_well_formed(text, chunks, title, spec)


@pytest.mark.parametrize("case", CASES)
def test_no_text_is_lost(case: str) -> None:
    text, title = CASES[case]
    chunks = chunk_text(text, title=title, spec=ChunkSpec(min_chars=0))
    assert uncovered(text, chunks) == ""


def test_heading_paths_nest_and_reset() -> None:
    body = "Some text that is long enough to be kept as a chunk of its own."
    text = "\n\n".join(
        [body, "# A", body, "## B", body, "### C", body, "## B2", body, "# D", body, "#### E", body]
    )
    assert [c.heading for c in chunk_text(text)] == ["", "A", "A > B", "A > B > C", "A > B2", "D", "D > E"]


def test_a_text_without_headings_has_an_empty_path() -> None:
    chunks = chunk_text(Writer(8).prose(100))
    assert len(chunks) > 1 and {c.heading for c in chunks} == {""}


def test_heading_lines_are_paths_not_text() -> None:
    body = "The body of the section, with enough words to be kept."
    chunks = chunk_text(f"# Guide\n## Install ##\n{body}\n## Empty\n\n## Use\n{body}")
    assert [(c.heading, c.text) for c in chunks] == [("Guide > Install", body), ("Guide > Use", body)]


def test_heading_markup_is_cleaned() -> None:
    body = "The body of the section, with enough words to be kept."
    [chunk] = chunk_text(f"## **Bold** `code` and [a link](https://example.com)\n{body}")
    assert chunk.heading == "Bold code and a link"
    [anchored] = chunk_text(f"## Query Parameters {{ #query-parameters }}\n{body}")  # FastAPI's docs
    assert anchored.heading == "Query Parameters"
    [braces] = chunk_text(f"## The {{name}} placeholder\n{body}")
    assert braces.heading == "The {name} placeholder", "braces that are no attribute list stay"


def test_hashes_in_code_blocks_and_hashtags_are_not_headings() -> None:
    code = "```sh\n# install it\npip install lore\n## not a heading either\n```"
    text = f"# Setup\n\n{code}\n\n#hashtag is text, and so is this line of the section.\n"
    [chunk] = chunk_text(text)
    assert chunk.heading == "Setup" and "# install it" in chunk.text and "#hashtag" in chunk.text


def test_an_unclosed_code_block_runs_to_the_end() -> None:
    text = (
        "# Top\n\nIntroduction to the code that follows below.\n\n```\n# comment\nmore code here and more\n"
    )
    assert {c.heading for c in chunk_text(text, spec=ChunkSpec(min_chars=0))} == {"Top"}


def test_windows_line_endings_are_understood() -> None:
    body = "Text of the section, long enough to be kept as a chunk."
    text = f"# One\r\n{body}\r\n```\r\n# code\r\n```\r\n## Two ##\r\n{body}\r\n"
    assert [c.heading for c in chunk_text(text)] == ["One", "One > Two"]


def test_a_line_without_spaces_is_cut_into_bounded_pieces() -> None:
    chunks = chunk_text("x" * 60_000)  # one [UNK] to the model, however long
    assert len(chunks) > 20 and max(len(c.text) for c in chunks) <= 8 * 256


def test_a_chunk_never_spans_two_sections() -> None:
    text = "\n\n".join(f"## Part {n}\n\n" + " ".join([f"marker{n}"] * 300) for n in range(6))
    chunks = chunk_text(text)
    for chunk in chunks:
        [marker] = set(re.findall(r"marker\d", chunk.text))
        assert chunk.heading == f"Part {marker[-1]}"
    assert len(chunks) > 6


def shared_pieces(text: str, chunks: list[TextChunk]) -> list[int]:
    """Word pieces each chunk repeats from the one before it in the same section."""
    return [
        pieces(text[b.start : a.start + len(a.text)]) if b.start < a.start + len(a.text) else 0
        for a, b in pairwise(chunks)
        if a.heading == b.heading
    ]


@pytest.mark.parametrize("overlap", [8, 32, 64])
def test_consecutive_chunks_of_a_section_overlap(overlap: int) -> None:
    text = markdown(60_000, seed=9)
    shared = shared_pieces(text, chunk_text(text, spec=ChunkSpec(overlap_tokens=overlap)))
    assert len(shared) > 20 and all(0 <= n <= overlap for n in shared)
    assert sum(n > 0 for n in shared) >= 0.95 * len(shared)  # none when the last word alone is over
    assert sum(shared) / len(shared) >= 0.75 * overlap


def test_without_overlap_chunks_follow_each_other() -> None:
    text = Writer(10).prose(300)
    chunks = chunk_text(text, spec=ChunkSpec(overlap_tokens=0))
    assert all(a.start + len(a.text) <= b.start for a, b in pairwise(chunks))


def test_chunks_fill_most_of_the_window() -> None:
    text = Writer(11).prose(600)
    sizes = [pieces(c.embedding_text("")) for c in chunk_text(text)[:-1]]
    assert sum(sizes) / len(sizes) > 0.7 * 254  # the splitter counting exactly fills ~0.8


def test_tiny_chunks_are_dropped_and_positions_stay_consecutive() -> None:
    long = Writer(12).prose(40)
    text = f"# One\nok\n\n# Two\n{long}\n\n# Three\n1.2.3\n\n# Four\n{long}"
    chunks = chunk_text(text)
    assert {c.heading for c in chunks} == {"Two", "Four"}
    assert [c.position for c in chunks] == list(range(len(chunks)))


UVICORN_BODY = '''# ASGI

## Requests & responses

### Reading the request body

You can stream the request body without blocking the asyncio task pool,
by fetching messages from the `receive` coroutine.

```python
async def read_body(receive):
    """
    Read and return the entire body from an incoming ASGI message.
    """
    body = b''
    more_body = True

    while more_body:
        message = await receive()
        body += message.get('body', b'')
        more_body = message.get('more_body', False)

    return body


async def app(scope, receive, send):
    """
    Echo the request body back in an HTTP response.
    """
    body = await read_body(receive)
    await send({
        'type': 'http.response.start',
        'status': 200,
        'headers': [
            (b'content-type', b'text/plain'),
            (b'content-length', str(len(body)).encode())
        ]
    })
    await send({
        'type': 'http.response.body',
        'body': body,
    })
```

### Streaming responses
'''
"""A section of Uvicorn's docs (BSD-3-Clause): its last span holds only the end of the
example cut off by the size limit."""


def test_the_small_end_of_a_section_cut_by_size_is_kept() -> None:
    chunks = chunk_text(UVICORN_BODY)
    assert uncovered(UVICORN_BODY, chunks) == "", "the end of the example: `'body': body,`, `})`"
    assert chunks[-1].heading == "ASGI > Requests & responses > Reading the request body"
    assert chunks[-1].text.endswith("'body': body,\n    })\n```")
    assert chunk_text("# One\nok\n\n# Two\nThe second section is long enough to be kept.") == [
        TextChunk(0, "Two", "The second section is long enough to be kept.", 16)
    ], "a section of a few characters is still dropped"


def test_a_small_document_keeps_one_chunk() -> None:
    [chunk] = chunk_text("# Notes\n\nship it", title="Standup")
    assert (chunk.position, chunk.heading, chunk.text, chunk.start) == (0, "Notes", "ship it", 9)


def test_a_document_of_headings_only_keeps_its_text() -> None:
    [chunk] = chunk_text("# Release notes\n## 2024")
    assert (chunk.heading, chunk.text) == ("", "# Release notes\n## 2024")


@pytest.mark.parametrize("text", ["", " ", "\n\n\t \n", "\u3000\u2028"])
def test_empty_or_blank_text_has_no_chunks(text: str) -> None:
    assert chunk_text(text) == []


def test_chunking_is_deterministic() -> None:
    text, title = CASES["markdown"]
    assert chunk_text(text, title=title) == chunk_text(text, title=title)


def test_embedding_text_puts_title_and_path_first() -> None:
    chunk = TextChunk(0, "Install > Linux", "Run the script.", 0)
    assert chunk.embedding_text("Guide") == "Guide — Install > Linux\nRun the script."
    assert chunk.embedding_text("") == "Install > Linux\nRun the script."
    assert TextChunk(0, "", "Run it.", 0).embedding_text("Guide\n  v2") == "Guide v2\nRun it."
    assert TextChunk(0, "", "Run it.", 0).embedding_text("") == "Run it."


def test_embedding_text_does_not_repeat_the_title() -> None:
    assert TextChunk(0, "Guide > Install", "x", 0).embedding_text("guide") == "Guide > Install\nx"
    assert TextChunk(0, "Guide", "x", 0).embedding_text("Guide") == "Guide\nx"
    assert TextChunk(0, "Guidelines", "x", 0).embedding_text("Guide") == "Guide — Guidelines\nx"


def test_a_long_prefix_is_cut_to_a_quarter_of_the_window() -> None:
    text = TextChunk(0, "Part", "Body.", 0).embedding_text(LONG_TITLE)
    prefix = text.split("\n")[0]
    assert prefix.endswith("…") and prefix.startswith("volume0 of the collected")
    assert pieces(prefix) <= 256 // 4


def test_count_word_pieces_counts_without_specials_or_the_file_limit() -> None:
    assert count_word_pieces("") == 0
    assert count_word_pieces("hello world") == 2
    assert count_word_pieces("tokenization") == pieces("tokenization") > 1
    assert count_word_pieces("lore " * 1000) == 1000  # the tokenizer file truncates at 128


def test_counting_by_words_agrees_with_the_tokenizer() -> None:
    rnd = random.Random(13)
    spaces = [chr(c) for c in range(0x3001) if chr(c).isspace()]
    alphabet = [
        *"abcXYZ.,;'\"-_()[]{}#*`~!?",
        *"\x00\x01\x7f\x9f\xad\xa0éüñÅ東京日本한국어😀\u200b\u200d\u0301\u2019\u201c\u2014\ufffd\ufeffİﬁ½",
        *spaces,
        "hello",
        "tokenization",
        "naïve",
        "https://example.com/a?b=c",
        "x" * 150,
    ]
    for _ in range(3000):
        text = "".join(rnd.choices(alphabet, k=rnd.randint(0, 40)))
        assert count_by_words(text) == pieces(text), repr(text)
    text, _ = CASES["markdown"]
    assert count_by_words(text) == pieces(text)


def test_last_resort_cuts_fit_when_counted_alone() -> None:
    text = " ".join(["tokenization internationalisation"] * 50)
    cuts = split_word_pieces(text, 7)
    assert all(pieces(cut) <= 7 for _, cut in cuts)
    assert all(text[at : at + len(cut)] == cut for at, cut in cuts)
    assert "".join(cut for _, cut in cuts).replace(" ", "") == text.replace(" ", "")


def test_the_tokenizer_is_the_wordpiece_the_counting_assumes() -> None:
    model = tokenizer().model
    assert (type(model).__name__, model.continuing_subword_prefix, model.max_input_chars_per_word) == (
        "WordPiece",
        "##",
        100,
    )


def test_threads_chunk_alike() -> None:
    texts = [markdown(30_000, seed=seed) for seed in range(20, 26)]
    alone = [chunk_text(t, title="T") for t in texts]
    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(lambda t: chunk_text(t, title="T"), texts)) == alone


@pytest.mark.parametrize(
    "fields", [{"max_tokens": 64}, {"overlap_tokens": 200}, {"overlap_tokens": -1}, {"min_chars": -1}]
)
def test_impossible_specs_are_refused(fields: dict[str, int]) -> None:
    with pytest.raises(ValueError, match="use"):
        ChunkSpec(**fields)


def test_a_megabyte_is_chunked_in_well_under_a_few_seconds() -> None:
    text = markdown(1_000_000, seed=14)
    chunk_text(text[:50_000])  # loads the tokenizer
    with own_heap():
        started = time.process_time()  # CPU time: a loaded machine slows the wall clock, not the work
        chunks = chunk_text(text, title="Speed")
        assert time.process_time() - started < 4.0  # splitting by the tokenizer itself took minutes
    assert len(chunks) > 1000


def benchmark(megabytes: float) -> None:
    """Print chunking throughput on generated Markdown, with a cold and a warm word cache."""
    text = markdown(int(megabytes * 1_000_000), seed=99)
    size = len(text.encode()) / 1e6
    chunk_text("Load the tokenizer before the clock starts.")
    for run in ("cold", "warm"):
        started = time.perf_counter()
        chunks = chunk_text(text, title="Benchmark")
        elapsed = time.perf_counter() - started
        print(f"{run}: {size:.1f} MB in {elapsed:.2f} s = {size / elapsed:.2f} MB/s, {len(chunks)} chunks")


if __name__ == "__main__":
    benchmark(float(sys.argv[1]) if len(sys.argv) > 1 else 5.0)
