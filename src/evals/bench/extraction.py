"""``recallops bench import``: how close does extraction come to what people wrote from the same text?

Each corpus record whose free-form text is in the documents folder (one file per record, named by its
id with ``/`` replaced by ``__``, ``.txt``) is extracted without a model, and four fields are compared
with the record's curated field, the one the retrieval protocol imports (``corpus.import_row``):
symptom with ``summary``, error signature with ``manifestation``, root cause with
``root_cause.details``, resolution steps with ``mitigation.details``.

Per field and document, token overlap (lower-cased words, counted with multiplicity) gives precision
and recall; the figures are means over the documents whose curated field has text: recall and F1
count an empty extraction as 0, precision is over the documents where the field was filled, and the
fill rate says how often that was. Every figure is also given for two fixed halves of the documents
(a rule is adopted only when it holds on both), with a bootstrap 95% interval of the F1 mean.
"""

import random
import re
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evals.bench.corpus import NOT_RECORDED, REQUIRED, import_row, load_corpus, stored_id
from evals.bench.enough import TooLittle
from evals.bench.ranking import folds
from memory.extraction.document import SourceDocument, from_text
from memory.extraction.draft import draft_row
from memory.extraction.extract import ExtractedField, Extraction, extract
from memory.history import MAX_TEXT

COMPARED = ("symptom", "error_signature", "root_cause", "resolution_steps")
_TOKEN = re.compile(r"[a-z0-9]+")
BOOTSTRAP_SAMPLES = 2000
BOOTSTRAP_SEED = 7


def file_name(record_id: str) -> str:
    return record_id.replace("/", "__") + ".txt"


def load_documents(corpus: Sequence[Mapping[str, Any]], folder: Path) -> dict[str, SourceDocument]:
    """The free-form text of each corpus record that has one in ``folder``, by record id."""
    found: dict[str, SourceDocument] = {}
    for record in corpus:
        path = folder / file_name(record["id"])
        if path.is_file():
            found[record["id"]] = from_text(path.name, path.read_text(encoding="utf-8"))
    return found


def free_form_row(record: Mapping[str, Any], document: SourceDocument) -> tuple[dict[str, str], bool]:
    """The record as the importer drafts it from its free-form text and a person accepts it unread
    (accept-all): the extraction's draft under the record's id, a required field it left empty as the
    protocol's gap marker. True when the text gave no date and the record's was taken instead."""
    row = draft_row(document, extract(document), incident_id=stored_id(record["id"]))
    row["service"] = row["service"] or "unknown"
    dated = bool(row["timestamp"])
    row["timestamp"] = row["timestamp"] or import_row(record)["timestamp"]
    for name in REQUIRED:
        row[name] = row[name] or NOT_RECORDED
    return {key: value[:MAX_TEXT] for key, value in row.items()}, not dated


@dataclass(frozen=True)
class FreeFormBank:
    """The rows of a bank built from the free-form texts, and how it was built."""

    rows: list[dict[str, str]]
    from_text: int  # records drafted from their text
    curated: int  # records with no text, imported from their curated fields
    dated_from_record: int  # drafts whose text gave no date

    def counts(self) -> dict[str, int]:
        return {
            "from_text": self.from_text,
            "curated": self.curated,
            "dated_from_record": self.dated_from_record,
        }


def free_form_bank(corpus: Sequence[Mapping[str, Any]], folder: Path) -> FreeFormBank:
    """Every corpus record drafted from its text in ``folder``; one without a text keeps its curated
    row, so both banks hold the same incidents and only the fields' source differs."""
    documents = load_documents(corpus, folder)
    rows: list[dict[str, str]] = []
    undated = 0
    for record in corpus:
        document = documents.get(record["id"])
        if document is None:
            rows.append(import_row(record))
            continue
        row, guessed = free_form_row(record, document)
        rows.append(row)
        undated += guessed
    return FreeFormBank(rows, len(documents), len(corpus) - len(documents), undated)


def tokens(text: str) -> Counter[str]:
    return Counter(_TOKEN.findall(text.lower()))


def overlap(extracted: str, curated: str) -> tuple[float, float]:
    """Token precision and recall of ``extracted`` against ``curated`` (0 when either is empty)."""
    got, want = tokens(extracted), tokens(curated)
    common = sum((got & want).values())
    if not common:
        return 0.0, 0.0
    return common / sum(got.values()), common / sum(want.values())


def f1(precision: float, recall: float) -> float:
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def curated(record: Mapping[str, Any]) -> dict[str, str]:
    """The record's compared fields as the retrieval protocol imports them, a gap as empty."""
    row = import_row(record)
    return {name: "" if row[name] == NOT_RECORDED else row[name] for name in COMPARED}


@dataclass(frozen=True)
class Comparison:
    """One document's field: whether it was filled, and its precision and recall."""

    filled: bool
    precision: float
    recall: float

    @property
    def f1(self) -> float:
        return f1(self.precision, self.recall)


def compare(extraction: Extraction, record: Mapping[str, Any]) -> dict[str, Comparison]:
    """Each compared field that the record's curators filled."""
    return compare_text(extraction.fields, curated(record))


def compare_text(got: Mapping[str, ExtractedField], expected: Mapping[str, str]) -> dict[str, Comparison]:
    """Each field of ``expected`` that has text, by token overlap with the extracted value."""
    return {
        name: Comparison(bool(got[name].value), *overlap(got[name].value, want))
        for name, want in expected.items()
        if want
    }


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def interval(values: Sequence[float]) -> tuple[float, float]:
    """Bootstrap 95% interval of the mean (resampled by document)."""
    if not values:
        return 0.0, 0.0
    rng = random.Random(BOOTSTRAP_SEED)
    means = sorted(_mean(rng.choices(values, k=len(values))) for _ in range(BOOTSTRAP_SAMPLES))
    return means[int(0.025 * BOOTSTRAP_SAMPLES)], means[int(0.975 * BOOTSTRAP_SAMPLES) - 1]


def field_scores(comparisons: Sequence[Comparison]) -> dict[str, Any]:
    filled = [c for c in comparisons if c.filled]
    f1s = [c.f1 for c in comparisons]
    low, high = interval(f1s)
    return {
        "precision": round(_mean([c.precision for c in filled]), 4),
        "recall": round(_mean([c.recall for c in comparisons]), 4),
        "f1": round(_mean(f1s), 4),
        "f1_95": [round(low, 4), round(high, 4)],
        "fill_rate": round(len(filled) / len(comparisons), 4) if comparisons else 0.0,
        "documents": len(comparisons),
    }


def scores(
    per_document: Mapping[str, Mapping[str, Comparison]], ids: Sequence[str], names: Sequence[str] = COMPARED
) -> dict[str, Any]:
    return {
        name: field_scores([per_document[i][name] for i in ids if name in per_document[i]]) for name in names
    }


def run_import_bench(corpus_path: Path, documents: Path) -> dict[str, Any]:
    """Every field's figures over all documents and each half, the fill rate of every template field,
    and how fast extraction ran; ``ValueError`` when no document is one of the corpus, ``TooLittle``
    when no record with a document has a curated field to compare with."""
    corpus = load_corpus(corpus_path)
    found = load_documents(corpus, documents)
    if not found:
        raise ValueError(
            f"no document in {documents} is named after a corpus id (e.g. {file_name(corpus[0]['id'])})"
        )
    records = {r["id"]: r for r in corpus}
    started = time.perf_counter()
    extractions = {i: extract(doc) for i, doc in found.items()}
    elapsed = time.perf_counter() - started
    per_document = {i: compare(e, records[i]) for i, e in extractions.items()}
    if not any(per_document.values()):  # every figure would be 0 over no document, as if measured
        raise TooLittle(
            f"none of the {len(found)} records with a document in {documents} has a curated field to compare "
            f"with ({', '.join(COMPARED)}): at least one is needed"
        )
    ids = sorted(found)
    return {
        "documents": len(found),
        "corpus": len(corpus),
        "fields": scores(per_document, ids),
        "halves": [scores(per_document, half) for half in folds(ids, 2)],
        **fill_rates(list(extractions.values())),
        "documents_per_s": round(len(found) / elapsed, 1) if elapsed else None,
    }


def fill_rates(extractions: Sequence[Extraction]) -> dict[str, Any]:
    """How often each template field, and the service, was filled."""
    return {
        "fill_rate": {
            name: round(sum(e[name].filled for e in extractions) / len(extractions), 4)
            for name in extractions[0].fields
        },
        "service_fill_rate": round(sum(e.service.filled for e in extractions) / len(extractions), 4),
    }


def markdown(result: Mapping[str, Any]) -> str:
    heading = (
        f"{result['documents']} of {result['corpus']} corpus records have a document; "
        f"extraction ran at {result['documents_per_s']} documents/s, no model."
    )
    return "\n".join([heading, "", field_table(result), "", fill_line(result)])


def field_table(result: Mapping[str, Any]) -> str:
    """Each compared field's figures, pooled and on each half, as a Markdown table."""
    lines = [
        "| field | precision | recall | F1 | F1 95% | fill rate | F1 half 1 | F1 half 2 | documents |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, s in result["fields"].items():
        halves = [h[name]["f1"] for h in result["halves"]]
        lines.append(
            f"| {name} | {s['precision']:.3f} | {s['recall']:.3f} | {s['f1']:.3f} | "
            f"{s['f1_95'][0]:.3f}–{s['f1_95'][1]:.3f} | {s['fill_rate']:.3f} | "
            f"{halves[0]:.3f} | {halves[1]:.3f} | {s['documents']} |"
        )
    return "\n".join(lines)


def fill_line(result: Mapping[str, Any]) -> str:
    filled = ", ".join(f"{name} {rate:.2f}" for name, rate in result["fill_rate"].items())
    return f"Fill rate of every template field: {filled}; service {result['service_fill_rate']:.2f}."
