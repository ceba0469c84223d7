"""Importing free-form history: files read, fields extracted, drafts queued for review, and deciding them.

Each file is read whole (``memory.extraction.readers``); each of its documents not drafted before
(content hash) is extracted and queued as a draft in its own transaction, so a run stopped half-way
keeps what it drafted and the next run drafts only the rest (``incidents.drafts.drafting`` makes
each draft and flags near-duplicates). A changed version of a document drafted before revises the
incident its accepted version became, and supersedes its pending one (``incidents.drafts.revisions``).
Nothing reaches memory here: accepting owes memory the record through the memory outbox, which the
worker (or ``recallops memory sync``) delivers.
"""

from collections.abc import Callable, Iterable, Sequence

from pydantic import BaseModel
from sqlalchemy.orm import Session, sessionmaker

from incidents.database import transaction
from incidents.drafts import revisions
from incidents.drafts import service as drafts
from incidents.drafts.drafting import Seen, draft_of
from incidents.drafts.models import Draft
from incidents.locking import serialized_writes
from memory.service import FileRead, SourceDocument


class UnreadableReport(BaseModel):
    name: str
    reason: str


class Refusal(BaseModel):
    draft: int
    source: str
    reasons: list[str]


class ImportReport(BaseModel):
    """What an import did: files read, drafts made, fields filled, what was refused and why."""

    files: int = 0
    documents: int = 0
    drafts: int = 0
    unchanged: int = 0  # documents drafted by an earlier import
    near_duplicates: int = 0
    revisions: int = 0  # drafts that would replace the record of an incident imported before
    superseded: list[int] = []  # pending drafts a later version of their document replaced
    filled: dict[str, int] = {}  # per drafted field, over the new drafts
    unreadable: list[UnreadableReport] = []
    draft_ids: list[int] = []
    accepted: int = 0
    not_accepted: list[Refusal] = []


def import_documents(
    *,
    sessions: sessionmaker[Session],
    reads: Iterable[FileRead],
    actor: str,
    on_progress: Callable[[FileRead], None] | None = None,
) -> ImportReport:
    """Draft every new document of ``reads``; ``draft_ids`` are the pending drafts of these files."""
    report = ImportReport(filled={name: 0 for name in drafts.DRAFTED})
    seen = Seen()
    with sessions() as db:
        for label, text in drafts.comparable_texts(db_session=db):
            seen.add(label, text)
        services = drafts.team_services(db_session=db)
    pending: list[str] = []
    for read in reads:
        report.files += 1
        if read.unreadable is not None:
            report.unreadable.append(UnreadableReport(name=read.name, reason=read.unreadable.reason))
        report.documents += len(read.documents)
        with transaction(sessions) as db, serialized_writes(db):
            known = drafts.known_hashes(db_session=db, hashes=(d.content_hash for d in read.documents))
            for document in read.documents:
                pending.append(document.content_hash)
                if document.content_hash in known:
                    report.unchanged += 1
                    continue
                known.add(document.content_hash)
                _draft(db, document, seen, actor, report, services)
            db.commit()
        if on_progress is not None:
            on_progress(read)
    with sessions() as db:
        report.draft_ids = drafts.pending_ids(db_session=db, hashes=pending)
    return report


def _draft(
    db: Session,
    document: SourceDocument,
    seen: Seen,
    actor: str,
    report: ImportReport,
    services: Sequence[str],
) -> None:
    """One new document drafted: a revision of what its source was accepted as, superseding the pending
    drafts of its earlier versions; counted in the report."""
    revised = revisions.of_source(db_session=db, source_name=document.name)
    typed = revisions.typed_of_source(db_session=db, source_name=document.name)
    older = revisions.pending_of_source(db_session=db, source_name=document.name)
    for draft in older:
        seen.drop(f"draft {draft.id}")
    new = draft_of(document, seen, revised, typed, services)
    row = drafts.add(db_session=db, draft=new, actor=actor)
    revisions.supersede(db_session=db, older=older, by=row, actor=actor)
    seen.add(f"draft {row.id}", drafts.comparison_text(new.fields))
    report.drafts += 1
    report.near_duplicates += new.near_duplicate is not None
    report.revisions += new.revises is not None
    report.superseded += [draft.id for draft in older]
    for name in drafts.DRAFTED:
        report.filled[name] += bool(drafts.value(row, name))


def accept_all(
    *,
    sessions: sessionmaker[Session],
    report: ImportReport,
    actor: str,
    revisions_too: bool = False,
    on_progress: Callable[[int], None] | None = None,
) -> ImportReport:
    """Accept each pending draft of the import in its own transaction; a draft with required fields
    missing, flagged as a near-duplicate, or (unless ``revisions_too``) revising an incident's record,
    stays pending for a person, with the reason reported."""
    for draft_id in report.draft_ids:
        with transaction(sessions) as db, serialized_writes(db):
            draft = drafts.get(db_session=db, draft_id=draft_id)
            if draft is None:
                continue
            reasons = _held_back(draft, revisions_too)
            if not reasons:
                try:
                    drafts.accept(db_session=db, draft=draft, actor=actor)
                except drafts.DraftRefused as exc:
                    reasons = exc.reasons
            if reasons:
                report.not_accepted.append(Refusal(draft=draft.id, source=draft.source_name, reasons=reasons))
                db.rollback()
            else:
                db.commit()
                report.accepted += 1
        if on_progress is not None:
            on_progress(1)
    return report


def _held_back(draft: Draft, revisions_too: bool) -> list[str]:
    reasons = (
        [f"required fields not found in the source: {', '.join(draft.missing)}"] if draft.missing else []
    )
    if draft.near_duplicate:
        reasons.append(f"near-duplicate of {draft.near_duplicate}; compare them on its page")
    if draft.revises and not revisions_too:
        reasons.append(
            f"revision of {draft.revises} ({draft.revision_reason}); accepting it replaces that record, "
            "compare them on its page"
        )
    return reasons
