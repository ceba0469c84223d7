"""An extraction as a draft import row: what a person reviews, edits and accepts into memory.

The row has the keys of ``memory.history.HistoryRow``; a field the extraction left empty is an empty
string, so the row validates (``HistoryRow.model_validate``) only once a person has filled the
required fields the extraction names as missing.
"""

import re

from memory.extraction.document import SourceDocument
from memory.extraction.extract import Extraction
from memory.template import FIELDS

_NOT_ID = re.compile(r"[^A-Za-z0-9._-]+")
MAX_ID = 64


def incident_id_for(document: SourceDocument) -> str:
    """A stable id from the document's name and content: the same file always drafts the same id."""
    stem = document.name.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    slug = _NOT_ID.sub("-", stem).strip("-")[: MAX_ID - 9] or "imported"
    return f"{slug}-{document.content_hash[:8]}"


def draft_row(
    document: SourceDocument, extraction: Extraction, incident_id: str | None = None
) -> dict[str, str]:
    """The import row the extraction drafts, with ``incident_id`` (by default from the document)."""
    row = {
        "incident_id": incident_id or incident_id_for(document),
        "service": extraction.service.value,
        "title": extraction.title.value,
    }
    row.update({f.name: extraction.fields[f.name].value for f in FIELDS})
    return row
