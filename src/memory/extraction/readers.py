"""Reading what a team has into source documents: post-mortem files, folders of them, tools' exports.

Free-form post-mortems (Markdown, plain text, HTML pages exported from Confluence or Google Docs) are
one document per file; PagerDuty's and incident.io's CSV or JSON exports are one document per
incident (``memory.extraction.exports``). The kind comes from the extension, checked against the
content (an ``.html`` file without markup is read as text, a file without an extension is sniffed).

A file that cannot be read yields an ``Unreadable`` with the reason (binary, not UTF-8, empty, too
large, malformed CSV or JSON, an export of an unknown tool, an unsupported type) and no documents at
all: a file is read whole or not at all, so nothing of it is half-imported.
"""

import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import yaml

from memory.extraction.document import SourceDocument
from memory.extraction.exports import NotAnExport, csv_headers, from_csv, from_json
from memory.extraction.html_text import html_to_text

MAX_FILE_BYTES = 20 * 1024 * 1024
MAX_DOCUMENT_CHARS = 1_000_000  # one post-mortem; an export holds many and is bounded by the file

SUFFIXES = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".text": "text",
    ".html": "html",
    ".htm": "html",
    ".csv": "csv",
    ".json": "json",
}
_LABELED = (".jsonl", ".ndjson")
_SIGNATURES = {b"%PDF": "a PDF", b"PK\x03\x04": "a zip archive (.docx, .xlsx?)", b"\x89PNG": "a PNG image"}


@dataclass(frozen=True)
class Unreadable:
    """A file that gave no document, and why, in words a person can act on."""

    name: str
    reason: str


@dataclass(frozen=True)
class FileRead:
    """One file's documents, or why it has none."""

    name: str
    documents: tuple[SourceDocument, ...]
    unreadable: Unreadable | None = None


class UnreadableFile(ValueError):
    """Raised inside the reader; the message is the ``Unreadable`` reason."""


def is_labeled_history(path: Path) -> bool:
    """RecallOps' own labeled JSONL rows, which skip extraction and review (``memory.history``)."""
    return path.suffix.lower() in _LABELED


def collect(paths: Sequence[Path]) -> list[tuple[Path, str]]:
    """Every file under ``paths`` with the name it is shown by (relative to the folder given), sorted.
    Hidden files and folders are skipped, as a checkout's ``.git`` is."""
    found: list[tuple[Path, str]] = []
    for root in paths:
        if root.is_dir():
            for path in sorted(root.rglob("*")):
                relative = path.relative_to(root)
                if path.is_file() and not any(part.startswith(".") for part in relative.parts):
                    found.append((path, f"{root.name}/{relative.as_posix()}"))
        else:
            found.append((root, root.name))
    return found


def read_files(files: Sequence[tuple[Path, str]]) -> Iterator[FileRead]:
    """Each file read in turn (the caller shows progress between them)."""
    for path, name in files:
        try:
            data = _bytes(path)
        except OSError as exc:
            yield FileRead(name, (), Unreadable(name, f"cannot be opened: {exc.strerror or exc}"))
            continue
        yield read_bytes(name, data)


def _bytes(path: Path) -> bytes:
    with path.open("rb") as handle:
        return handle.read(MAX_FILE_BYTES + 1)


def read_bytes(name: str, data: bytes) -> FileRead:
    """The documents of one file's bytes, or the reason it has none."""
    try:
        return FileRead(name, tuple(_documents(name, data)))
    except UnreadableFile as exc:
        return FileRead(name, (), Unreadable(name, str(exc)))


def _decode(data: bytes) -> str:
    if len(data) > MAX_FILE_BYTES:
        raise UnreadableFile(f"larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB; split it")
    for signature, what in _SIGNATURES.items():
        if data.startswith(signature):
            raise UnreadableFile(f"binary file ({what}); export the post-mortem as Markdown, text or HTML")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            text = data.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise UnreadableFile(f"not valid UTF-16 despite its byte order mark (byte {exc.start})") from exc
    else:
        if b"\x00" in data[:8192]:
            raise UnreadableFile("binary file (NUL bytes); export the post-mortem as Markdown, text or HTML")
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise UnreadableFile(
                f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}); save it as UTF-8"
            ) from exc
    if "\x00" in text:
        raise UnreadableFile("contains NUL characters, which cannot be stored")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        raise UnreadableFile("empty file")
    return text


def _sniff(text: str) -> str:
    head = text.lstrip()[:1024].lower()
    if head.startswith(("{", "[")):
        return "json"
    if head.startswith(("<!doctype html", "<html")) or "<body" in head:
        return "html"
    return "text"


def _kind(name: str, text: str) -> str:
    suffix = Path(name.split("#", 1)[0]).suffix.lower()
    if not suffix:
        return _sniff(text)
    if suffix not in SUFFIXES:
        known = ", ".join(sorted(SUFFIXES))
        raise UnreadableFile(f"unsupported file type {suffix} (read: {known}; labeled history: .jsonl)")
    kind = SUFFIXES[suffix]
    if kind == "html" and _sniff(text) != "html" and "<" not in text:
        return "text"
    return kind


def _documents(name: str, data: bytes) -> list[SourceDocument]:
    text = _decode(data)
    kind = _kind(name, text)
    try:
        if kind == "json":
            return from_json(name, _json(text))
        if kind == "csv":
            return from_csv(name, text, csv_headers(text))
    except NotAnExport as exc:
        raise UnreadableFile(str(exc)) from exc
    meta: dict[str, str] = {}
    if kind == "html":
        text, title = html_to_text(text)
        if title:
            meta["page_title"] = title
        if not text:
            raise UnreadableFile("HTML page without any text")
    elif kind == "markdown":
        text, meta = _front_matter(text)
    if len(text) > MAX_DOCUMENT_CHARS:
        raise UnreadableFile(f"longer than {MAX_DOCUMENT_CHARS:,} characters for one post-mortem; split it")
    digest = hashlib.sha256(text.encode()).hexdigest()
    return [SourceDocument(name=name, kind=kind, text=text, content_hash=digest, meta=meta)]


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except RecursionError as exc:
        raise UnreadableFile("malformed JSON: nested too deeply") from exc
    except json.JSONDecodeError as exc:
        raise UnreadableFile(f"malformed JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from exc


_META_KEYS = {"title": "title", "service": "service", "date": "started_at", "started_at": "started_at"}


def _front_matter(text: str) -> tuple[str, dict[str, str]]:
    """A Markdown file's YAML front matter (``title``, ``service``, ``date``) as meta, and the rest."""
    if not text.startswith("---\n"):
        return text, {}
    end = text.find("\n---\n", 4)
    if end < 0:
        return text, {}
    try:
        loaded = yaml.safe_load(text[4:end])
    except yaml.YAMLError:
        return text, {}
    if not isinstance(loaded, dict):
        return text, {}
    meta = {
        _META_KEYS[str(k).lower()]: (v.isoformat() if isinstance(v, date) else str(v)).strip()
        for k, v in loaded.items()
        if str(k).lower() in _META_KEYS and v is not None and str(v).strip()
    }
    return text[end + 5 :].lstrip("\n"), meta
