"""The file types the extractor knows: their MIME types, extensions and names for users.

Source code and configuration files get the MIME type `text/x-<language>`, so the language
travels with the type (`language_of`).
"""

from __future__ import annotations

TEXT = "text/plain"
MARKDOWN = "text/markdown"
HTML = "text/html"
PDF = "application/pdf"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
CSV = "text/csv"
TSV = "text/tab-separated-values"
JSON = "application/json"
JSONL = "application/x-ndjson"
EPUB = "application/epub+zip"
ODT = "application/vnd.oasis.opendocument.text"
ODP = "application/vnd.oasis.opendocument.presentation"
CODE_PREFIX = "text/x-"
TABLES = frozenset((CSV, TSV))
"""Types whose text is a header line and one row a line, chunked by `tables.chunk_table`."""
CELL_SEPARATOR = " | "
"""Between the cells of a table's lines."""

SUPPORTED = "text, Markdown, HTML, PDF, Word, PowerPoint, EPUB, OpenDocument text, CSV, JSON and source code"
SUPPORTED_DESCRIPTION = f"I read {SUPPORTED}."

_LANGUAGES_BY_EXTENSION = {
    "py": "python", "pyi": "python", "js": "javascript", "mjs": "javascript",
    "cjs": "javascript", "jsx": "jsx", "ts": "typescript", "mts": "typescript",
    "tsx": "tsx", "java": "java", "go": "go", "rs": "rust", "rb": "ruby", "php": "php",
    "c": "c", "h": "c", "cpp": "cpp", "cc": "cpp", "cxx": "cpp", "hpp": "cpp", "hh": "cpp",
    "hxx": "cpp", "cs": "csharp", "kt": "kotlin", "kts": "kotlin", "swift": "swift",
    "scala": "scala", "sh": "shell", "bash": "shell", "zsh": "shell", "fish": "shell",
    "ps1": "powershell", "bat": "batch", "cmd": "batch", "sql": "sql", "yaml": "yaml",
    "yml": "yaml", "toml": "toml", "ini": "ini", "cfg": "ini", "conf": "conf",
    "properties": "properties", "env": "dotenv", "xml": "xml", "xsd": "xml", "xsl": "xml",
    "css": "css", "scss": "scss", "sass": "sass", "less": "less", "vue": "vue",
    "svelte": "svelte", "r": "r", "m": "objective-c", "mm": "objective-c", "lua": "lua",
    "pl": "perl", "pm": "perl", "ex": "elixir", "exs": "elixir", "erl": "erlang",
    "hs": "haskell", "clj": "clojure", "cljs": "clojure", "edn": "clojure", "dart": "dart",
    "fs": "fsharp", "ml": "ocaml", "jl": "julia", "groovy": "groovy", "gradle": "groovy",
    "tf": "terraform", "hcl": "hcl", "proto": "protobuf", "graphql": "graphql",
    "gql": "graphql", "zig": "zig", "nim": "nim", "elm": "elm", "vim": "vim",
    "cmake": "cmake", "mk": "make", "dockerfile": "dockerfile",
}  # fmt: skip

_LANGUAGES_BY_FILENAME = {
    "dockerfile": "dockerfile", "containerfile": "dockerfile", "makefile": "make",
    "gnumakefile": "make", "cmakelists.txt": "cmake", "gemfile": "ruby", "rakefile": "ruby",
    "jenkinsfile": "groovy", "vagrantfile": "ruby", "procfile": "yaml",
}  # fmt: skip

_DOCUMENTS_BY_EXTENSION = {
    "txt": TEXT, "text": TEXT, "log": TEXT, "rst": TEXT, "adoc": TEXT, "org": TEXT,
    "md": MARKDOWN, "markdown": MARKDOWN, "mdown": MARKDOWN, "mkd": MARKDOWN,
    "html": HTML, "htm": HTML, "xhtml": HTML, "pdf": PDF, "docx": DOCX, "pptx": PPTX,
    "csv": CSV, "tsv": TSV, "tab": TSV, "json": JSON, "jsonl": JSONL, "ndjson": JSONL,
    "epub": EPUB, "odt": ODT, "odp": ODP,
}  # fmt: skip

_MIME_ALIASES = {
    TEXT: TEXT, MARKDOWN: MARKDOWN, "text/x-markdown": MARKDOWN, HTML: HTML,
    "application/xhtml+xml": HTML, PDF: PDF, "application/x-pdf": PDF, DOCX: DOCX,
    PPTX: PPTX, CSV: CSV, "application/csv": CSV, TSV: TSV, JSON: JSON, "text/json": JSON,
    JSONL: JSONL, "application/jsonl": JSONL, "application/x-jsonlines": JSONL,
    "application/jsonlines": JSONL, "text/javascript": "text/x-javascript",
    "application/javascript": "text/x-javascript", "application/typescript": "text/x-typescript",
    "text/x-python-script": "text/x-python", "text/x-java-source": "text/x-java",
    "text/x-csrc": "text/x-c", "text/x-chdr": "text/x-c", "text/x-c++src": "text/x-cpp",
    "text/x-c++hdr": "text/x-cpp", "application/x-sh": "text/x-shell",
    "text/x-shellscript": "text/x-shell", "text/x-sh": "text/x-shell",
    "application/x-php": "text/x-php", "application/sql": "text/x-sql",
    "application/x-yaml": "text/x-yaml", "application/yaml": "text/x-yaml",
    "text/yaml": "text/x-yaml", "application/toml": "text/x-toml", EPUB: EPUB, ODT: ODT, ODP: ODP,
    "application/xml": "text/x-xml", "text/xml": "text/x-xml", "text/css": "text/x-css",
}  # fmt: skip

LEGACY_OFFICE_EXTENSIONS = frozenset({"doc", "dot", "ppt", "pps", "pot", "xls", "xlt", "msg"})
OOXML_EXTENSIONS = frozenset({"docx", "docm", "dotx", "pptx", "pptm", "ppsx", "xlsx", "xlsm"})

_KINDS = {
    TEXT: "a text file", MARKDOWN: "a Markdown file", HTML: "an HTML page", PDF: "a PDF",
    DOCX: "a Word document", PPTX: "a PowerPoint file", CSV: "a CSV file",
    TSV: "a TSV file", JSON: "a JSON file", JSONL: "a JSON Lines file", EPUB: "an EPUB book",
    ODT: "an OpenDocument text", ODP: "an OpenDocument presentation",
}  # fmt: skip

_CODE_LANGUAGES = frozenset(_LANGUAGES_BY_EXTENSION.values()) | frozenset(_LANGUAGES_BY_FILENAME.values())


def extension_of(name: str) -> str:
    """The lower-case extension of `name` without the dot, or '' when it has none."""
    base = name.rsplit("/", 1)[-1]
    stem, dot, extension = base.rpartition(".")
    return extension.lower() if dot and stem else ""


def type_from_name(name: str) -> str | None:
    """The MIME type `name` implies by its extension or well-known file name, else None."""
    base = name.rsplit("/", 1)[-1].lower()
    language = _LANGUAGES_BY_FILENAME.get(base)
    if language is not None:
        return CODE_PREFIX + language
    extension = extension_of(name)
    language = _LANGUAGES_BY_EXTENSION.get(extension)
    if language is not None:
        return CODE_PREFIX + language
    return _DOCUMENTS_BY_EXTENSION.get(extension)


def type_from_mime(mime_type: str | None) -> str | None:
    """The canonical supported type for a declared MIME type, else None (unknown or generic)."""
    if not mime_type:
        return None
    essence = mime_type.split(";", 1)[0].strip().lower()
    if essence in _MIME_ALIASES:
        return _MIME_ALIASES[essence]
    if essence.startswith(CODE_PREFIX) and essence[len(CODE_PREFIX) :] in _CODE_LANGUAGES:
        return essence
    return None


def language_of(mime_type: str) -> str | None:
    """The programming or configuration language of a `text/x-<language>` type, else None."""
    if not mime_type.startswith(CODE_PREFIX):
        return None
    language = mime_type[len(CODE_PREFIX) :]
    return language if language in _CODE_LANGUAGES else None


def describe(mime_type: str) -> str:
    """How a user would name a file of this type: 'a PDF', 'a Python file', …"""
    language = language_of(mime_type)
    if language is not None:
        return f"a {language} file"
    return _KINDS.get(mime_type, "a file")
