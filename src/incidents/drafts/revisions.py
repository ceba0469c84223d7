"""Which incident a changed document revises, and the pending drafts a later version supersedes.

A team that edits a post-mortem (a deeper look found another root cause) and imports it again means
the one outage: its new version is a revision of the incident the last accepted version of the same
source became, so accepting it replaces that record instead of filing a second, contradicting one.
A pending draft of the same source is superseded by the new version (rejected, naming it): only the
latest text is reviewed. A rejected draft stays rejected and revises nothing; its rejection was of
its own text. What a person typed into the latest accepted or pending version (a field the document
never said, such as the outcome) is kept for the new one where its text still says nothing
(``typed_of_source``): the person's words stand until the document says otherwise. Before accepting
a revision, its reviewer sees each post-mortem field as the record holds it beside the revision's
value (``compared``): what accepting replaces.
"""

from dataclasses import dataclass

from pydantic import ValidationError
from sqlalchemy import select
from sqlalchemy.orm import Session

from incidents.drafts.models import Draft
from incidents.drafts.service import row_of, value
from incidents.history import historical
from incidents.incident.models import Incident
from incidents.incident.service import get_by_public_id
from incidents.resolution.models import TEMPLATE
from incidents.resolution.service import get_resolution
from incidents.timeutil import utcnow
from memory.history import HistoryRow


@dataclass(frozen=True)
class Revised:
    incident_id: str
    reason: str


def _latest_of_source(*, db_session: Session, source_name: str, accepted_first: bool) -> Draft | None:
    """The latest accepted or pending draft of a source (a rejected one stands for nothing); with
    ``accepted_first``, the latest accepted one while there is one."""
    order = (Draft.state, Draft.id.desc()) if accepted_first else (Draft.id.desc(),)  # "accepted" < "pending"
    return db_session.scalars(
        select(Draft)
        .where(Draft.source_name == source_name[:500], Draft.state.in_(("accepted", "pending")))
        .order_by(*order)
    ).first()


def of_source(*, db_session: Session, source_name: str) -> Revised | None:
    """The incident an earlier version of this source was accepted as, or that a still pending
    version already revises."""
    earlier = _latest_of_source(db_session=db_session, source_name=source_name, accepted_first=True)
    if earlier is None:
        return None
    if earlier.state == "accepted":
        return Revised(earlier.incident_id, f"a new version of {source_name}")
    if earlier.revises is not None and earlier.revision_reason is not None:
        return Revised(earlier.revises, earlier.revision_reason)
    return None


@dataclass(frozen=True)
class Compared:
    """One post-mortem field of the revised record: its value now, and the revision's."""

    name: str
    current: str
    revised: str

    @property
    def changed(self) -> bool:
        return self.current != self.revised


def compared(*, db_session: Session, draft: Draft) -> list[Compared]:
    """Each field accepting the revision replaces, in the template's order, as the record holds it beside
    the value accepting would store (as an import row reads it, once the draft is valid); empty when
    the draft revises no stored record."""
    incident = get_by_public_id(db_session=db_session, public_id=draft.revises) if draft.revises else None
    resolution = get_resolution(db_session=db_session, incident_id=incident.id) if incident else None
    if resolution is None:
        return []
    try:
        revised = historical(HistoryRow.model_validate(row_of(draft))).template
    except ValidationError:
        revised = {name: value(draft, name) for name in TEMPLATE}
    return [Compared(name, getattr(resolution, name), revised[name]) for name in TEMPLATE]


def typed_of_source(*, db_session: Session, source_name: str) -> dict[str, str]:
    """The fields a person typed into the latest accepted or pending version of this source."""
    latest = _latest_of_source(db_session=db_session, source_name=source_name, accepted_first=False)
    if latest is None:
        return {}
    return {
        name: str(field["value"])
        for name, field in latest.fields.items()
        if field.get("origin") == "edited" and str(field.get("value") or "").strip()
    }


def accepted_incidents(*, db_session: Session) -> dict[str, str]:
    """The incidents accepted drafts became, with their services: the records a near-duplicate
    document would revise."""
    rows = db_session.execute(
        select(Incident.public_id, Incident.service)
        .join(Draft, Draft.incident_id == Incident.public_id)
        .where(Draft.state == "accepted")
    )
    return {public_id: service for public_id, service in rows}


def pending_of_source(*, db_session: Session, source_name: str) -> list[Draft]:
    """The pending drafts of a source, which a new version of it supersedes."""
    return list(
        db_session.scalars(
            select(Draft).where(Draft.source_name == source_name[:500], Draft.state == "pending")
        )
    )


def supersede(*, db_session: Session, older: list[Draft], by: Draft, actor: str) -> None:
    """Reject ``older`` as superseded by ``by``, a later version of their source."""
    for draft in older:
        draft.state, draft.decided_by, draft.decided_at = "rejected", actor[:255], utcnow()
        draft.reason = f"superseded by draft {by.id}, a later version of {by.source_name}"
    db_session.flush()
