"""The real-file corpus of the extraction benchmark: files nobody on the team wrote, taken
from the test suites of public projects into a cache (never into the repository).

`python -m bench.realfiles --repos DIR --out DIR` builds it from local git repositories
(clones or mirrors, one folder per repository named `owner+name`, as `git` reads them with
`-C`): the selection in `SOURCES`, each file at most 3 MB, and `MANIFEST.tsv` (path, source
repository, original path, license, type). `corpus(folder)` lists what the benchmark reads:
with a manifest, its rows; without, every file under the folder, typed by extension.
Readability's test pages come with `expected.html`, the main content a reader should keep;
those are references (type `expected`), not corpus files.
"""

from __future__ import annotations

import argparse
import re
import subprocess
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

MANIFEST = "MANIFEST.tsv"
MAX_FILE_BYTES = 3_000_000
EXPECTED = "expected"
TYPES_BY_EXTENSION = {
    "pdf": "pdf", "docx": "docx", "pptx": "pptx", "html": "html", "htm": "html", "csv": "csv",
    "tsv": "csv", "json": "json", "txt": "text", "md": "text",
}  # fmt: skip
"""The types the figures are grouped by; anything else is `other` (images, archives,
spreadsheets, EPUB, ODF: files Lore reads or refuses by name)."""


@dataclass(frozen=True)
class Source:
    """A selection from one repository: paths matching `pattern`, every `every`-th of them."""

    repo: str
    slug: str
    license: str
    pattern: str
    every: int = 1
    max_bytes: int = MAX_FILE_BYTES


_PDFMINER_NONFREE = "no explicit license, freely distributable (samples/README)"
SOURCES = (
    Source("py-pdf/sample-files", "py-pdf-sample-files", "CC-BY-SA-4.0", r"\.(pdf|odt)$"),
    Source("pdfminer/pdfminer.six", "pdfminer.six", "MIT", r"^samples/(?!nonfree/).*\.pdf$"),
    Source("pdfminer/pdfminer.six", "pdfminer.six", _PDFMINER_NONFREE, r"^samples/nonfree/.*\.pdf$"),
    Source(
        "pymupdf/PyMuPDF", "PyMuPDF", "AGPL-3.0",
        r"^tests/resources/.*\.(pdf|docx|epub|xps|html|doc|jpg|svg|mobi|md)$", max_bytes=2_000_000,
    ),
    Source("python-openxml/python-docx", "python-docx", "MIT", r"test_files/.*\.(docx|gif)$"),
    Source("mwilliamson/python-mammoth", "python-mammoth", "BSD-2-Clause", r"^tests/test-data/.*\.docx$"),
    Source("scanny/python-pptx", "python-pptx", "MIT", r"test_files/.*\.(pptx|pptm|xlsx|docx)$"),
    Source(
        "mozilla/readability", "readability", "Apache-2.0 (pages: their sites' own terms)",
        r"^test/test-pages/[^/]+/(source\.html|expected\.html|expected-metadata\.json)$",
    ),
    Source(
        "frictionlessdata/frictionless-py", "frictionless-py", "MIT",
        r"^data/[^/]*\.(csv|tsv|xlsx|xls|ods|zip|gz|html|pdf)$", every=2,
    ),
    Source("frictionlessdata/frictionless-py", "frictionless-py", "MIT", r"^data/[^/]*\.json$", every=5),
    Source("maxogden/csv-spectrum", "csv-spectrum", "BSD-2-Clause", r"^csvs/"),
    Source(
        "vega/vega-datasets", "vega-datasets", "per dataset (the repository's datapackage.json)",
        r"^data/.*\.(csv|tsv|json)$|^data/7zip\.png$", max_bytes=2_100_000,
    ),
    Source("nst/JSONTestSuite", "JSONTestSuite", "MIT", r"^test_parsing/y_", every=3),
    Source("nst/JSONTestSuite", "JSONTestSuite", "MIT", r"^test_parsing/n_", every=6),
    Source("nst/JSONTestSuite", "JSONTestSuite", "MIT", r"^test_parsing/i_", every=2),
    Source("jawah/charset_normalizer", "charset_normalizer", "MIT", r"^data/sample-.*\.txt$"),
)  # fmt: skip


@dataclass(frozen=True)
class RealFile:
    """One corpus file: where it is, its type for the figures, and (for a readability test
    page) the expected main content next to it."""

    path: Path
    type: str
    expected: Path | None = None

    @property
    def group(self) -> str:
        """The figures' group: readability's test pages apart from other HTML."""
        return "html (readability)" if self.expected is not None else self.type


def type_of(name: str) -> str:
    extension = name.rsplit(".", 1)[-1].lower() if "." in Path(name).name else ""
    return TYPES_BY_EXTENSION.get(extension, "other")


def corpus(folder: Path) -> list[RealFile]:
    """The corpus files under `folder` in a stable order (empty when there is none)."""
    if not folder.is_dir():
        return []
    manifest = folder / MANIFEST
    if manifest.is_file():
        rows = [line.split("\t") for line in manifest.read_text().splitlines()[1:] if line.strip()]
        typed = [(folder / row[0], row[4]) for row in rows if len(row) >= 5 and row[4] != EXPECTED]
    else:
        typed = [
            (path, type_of(path.name))
            for path in sorted(folder.rglob("*"))
            if path.is_file() and not path.name.startswith((".", "expected")) and path.name != MANIFEST
        ]
    return [RealFile(path, kind, _expected(path)) for path, kind in typed if path.is_file()]


def _expected(path: Path) -> Path | None:
    expected = path.with_name("expected.html")
    return expected if path.name == "source.html" and expected.is_file() else None


# -- building the cache from git repositories -----------------------------------------------


def _git(repo: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=True).stdout


def _tree(repo: Path) -> Iterator[tuple[int, str]]:
    """(size, path) of each blob at HEAD; blobs a partial copy lacks are left out."""
    for line in _git(repo, "ls-tree", "-r", "-l", "HEAD").decode().splitlines():
        meta, path = line.split("\t", 1)
        size = meta.split()[3]
        if size.isdigit():
            yield int(size), path


def _local(repos: Path, name: str) -> Path:
    folder = repos / name.replace("/", "+")
    return folder / "repo" if (folder / "repo").is_dir() else folder


def build(repos: Path, out: Path) -> Counter[str]:
    """Copy the selection of each repository in `SOURCES` under `out`, write the manifest;
    the count of files of each type."""
    rows: list[tuple[str, str, str, str, str]] = []
    for source in SOURCES:
        repo = _local(repos, source.repo)
        chosen = sorted(
            path for size, path in _tree(repo) if re.search(source.pattern, path) and size <= source.max_bytes
        )
        for path in chosen[:: source.every]:
            destination = f"{source.slug}/{path}"
            target = out / destination
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(_git(repo, "show", f"HEAD:{path}"))
            kind = EXPECTED if path.endswith(("expected.html", "expected-metadata.json")) else type_of(path)
            rows.append((destination, source.repo, path, source.license, kind))
    lines = ["path\tsource_repo\toriginal_path\tlicense\ttype", *("\t".join(row) for row in sorted(rows))]
    (out / MANIFEST).write_text("\n".join(lines) + "\n")
    return Counter(row[4] for row in rows)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.realfiles", description=__doc__.split("\n\n")[0])
    parser.add_argument("--repos", type=Path, required=True, help="folder of owner+name git repositories")
    parser.add_argument("--out", type=Path, required=True, help="the cache folder to fill")
    args = parser.parse_args()
    counts = build(args.repos, args.out)
    print(", ".join(f"{kind} {n}" for kind, n in counts.most_common()))


if __name__ == "__main__":
    main()
