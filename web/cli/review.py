"""``recallops review``: the drafts an import made, read and decided from the terminal; and the free-form
part of ``recallops import`` (read, extract, queue, optionally accept all, then a report)."""

from __future__ import annotations

import getpass
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, cast

import typer

from web.cli.common import ALLOW_OTHER_MEMORY, cli_session, memory_guard, refuse, run
from web.cli.text import hanging

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from incidents.drafts.models import Draft, DraftState
    from web.app.drafts import ImportReport

app = typer.Typer(help="Review imported drafts before they reach memory.", no_args_is_help=True)


def import_free_form(
    files: list[tuple[Path, str]], paths: list[Path], *, actor: str, accept_all: bool, accept_revisions: bool
) -> bool:
    """Draft every document of ``files`` (found under ``paths``, each with the name it is shown by); True
    when a file was unreadable or a draft not accepted."""
    from memory.service import MemoryUnavailable, read_files
    from web.app.container import Container
    from web.app.drafts import accept_all as accept_drafts
    from web.app.drafts import import_documents
    from web.cli.history import progress_bar
    from web.cli.memory import drain

    if not files:
        named = ", ".join(str(p) for p in paths)
        refuse(f"no file to import in {named} (folders are read through; hidden files are skipped)")

    async def work() -> tuple[ImportReport, int]:
        container = Container.build()
        try:
            with progress_bar() as progress:
                task = progress.add_task("reading and extracting", total=len(files))
                report = import_documents(
                    sessions=container.sessions,
                    reads=read_files(files),
                    actor=actor,
                    on_progress=lambda _read: progress.advance(task, 1),
                )
                if accept_all and report.draft_ids:
                    accepting = progress.add_task("accepting drafts", total=len(report.draft_ids))
                    report = accept_drafts(
                        sessions=container.sessions,
                        report=report,
                        actor=actor,
                        revisions_too=accept_revisions,
                        on_progress=lambda n: progress.advance(accepting, n),
                    )
            if not report.accepted:
                return report, 0
            try:
                await drain(container)
            except MemoryUnavailable as exc:
                typer.echo(
                    f"memory unavailable: {exc}; `recallops memory sync` finishes the writes", err=True
                )
            with container.sessions() as db:
                return report, _waiting(db, _became(db, report.draft_ids))
        finally:
            await container.aclose()

    report, waiting = run(work())
    _print_report(report, waiting)
    return bool(report.unreadable or report.not_accepted)


def _print_report(report: ImportReport, waiting: int) -> None:
    typer.echo(
        f"files read {report.files}, documents {report.documents}, new drafts {report.drafts}, "
        f"already imported {report.unchanged}, near-duplicates {report.near_duplicates}, "
        f"revisions {report.revisions}, unreadable {len(report.unreadable)}"
    )
    if report.superseded:
        typer.echo(
            f"superseded by a later version of their file (rejected): drafts "
            f"{', '.join(str(n) for n in report.superseded)}"
        )
    if report.drafts:
        typer.echo(
            "fields filled: " + ", ".join(f"{k} {v}/{report.drafts}" for k, v in report.filled.items())
        )
    for bad in report.unreadable:
        typer.echo(f"  unreadable {bad.name}: {bad.reason}")
    if report.accepted or report.not_accepted:
        held = len(report.not_accepted)
        in_memory = report.accepted - waiting
        typer.echo(f"accepted {report.accepted} (written to memory: {in_memory}), left for review {held}")
        _queued(waiting)
        for refusal in report.not_accepted:
            typer.echo(f"  draft {refusal.draft} ({refusal.source}): {'; '.join(refusal.reasons)}")
        if report.not_accepted:
            typer.echo(_fill_hint("N", "fill what is missing"))
    elif report.draft_ids:
        typer.echo(
            f"{len(report.draft_ids)} drafts wait for review: `recallops review list`, or the /review page"
        )


def _became(db: Session, draft_ids: list[int]) -> list[str]:
    """The incidents those of these drafts that were accepted became."""
    from sqlalchemy import select

    from incidents.drafts.models import Draft

    accepted = select(Draft.incident_id).where(Draft.id.in_(draft_ids), Draft.state == "accepted")
    return list(db.scalars(accepted))


def _waiting(db: Session, incident_ids: list[str]) -> int:
    """Accepted records memory does not hold yet: a running service's worker delivers them as this
    command does, so what this process delivered says nothing of what is still owed."""
    from incidents.resolution import outbox

    return outbox.unsynced(db_session=db, document_ids=incident_ids)


def _queued(waiting: int) -> None:
    if waiting > 0:
        typer.echo(
            f"{waiting} accepted records are not in memory yet: they wait in the memory outbox, which "
            "the running service delivers, or `recallops memory sync` (it says why a write fails)"
        )


def _revision(draft: Draft) -> str:
    return f"revision of {draft.revises} ({draft.revision_reason})" if draft.revises else ""


def _line(draft: Draft) -> str:
    flag = f"  near-duplicate of {draft.near_duplicate}" if draft.near_duplicate else ""
    if draft.revises and draft.state == "pending":
        flag += f"  {_revision(draft)}"
    missing = f"  missing: {', '.join(draft.missing)}" if draft.missing and draft.state == "pending" else ""
    return f"{draft.id:>5}  {draft.state:<8}  {draft.fill_rate:>4.0%}  {draft.source_name}{missing}{flag}"


@app.command("list")
def list_command(
    state: str = typer.Option("pending", "--state", help="pending, accepted, rejected or all."),
    limit: int = typer.Option(100, "--limit", min=1, max=10_000, help="List at most this many, by number."),
) -> None:
    """Drafts with their fill rate (share of the post-mortem fields found) and what is missing."""
    from incidents.drafts import service as drafts
    from incidents.drafts.models import DRAFT_STATES

    if state != "all" and state not in DRAFT_STATES:
        raise typer.BadParameter(
            f"{state!r} is none of {', '.join(DRAFT_STATES)} or all", param_hint="--state"
        )
    with cli_session() as db:
        wanted = None if state == "all" else cast("DraftState", state)
        found = drafts.list_drafts(db_session=db, state=wanted, limit=limit)
        counts = drafts.counts(db_session=db)
        for draft in found:
            typer.echo(_line(draft))
    typer.echo(", ".join(f"{n} {s}" for s, n in counts.items()))
    if not any(counts.values()):
        typer.echo("no drafts yet: `recallops import PATH...` drafts post-mortems and tools' exports")


def _load(db: Session, draft_id: int) -> Draft:
    from incidents.drafts import service as drafts

    draft = drafts.get(db_session=db, draft_id=draft_id)
    if draft is None:
        refuse(f"no draft {draft_id}: `recallops review list --state all` lists them")
    return draft


def _all_exist(draft_ids: list[int]) -> None:
    """Refuse the whole command when one of the drafts named does not exist, before any is decided: a
    typo among several ids decides nothing rather than half of them."""
    with cli_session() as db:
        for draft_id in draft_ids:
            _load(db, draft_id)


@app.command("show")
def show(draft_id: int = typer.Argument(..., help="The draft's number (from `review list`).")) -> None:
    """A draft's fields, each with the source text it was taken from."""
    from incidents.drafts.service import DRAFTED

    with cli_session() as db:
        draft = _load(db, draft_id)
        typer.echo(_line(draft))
        typer.echo(f"source: {draft.source_name} ({draft.source_kind}); {_becomes(draft)}")
        for name in DRAFTED:
            field = draft.fields.get(name) or {}
            value = str(field.get("value") or "")
            spans = field.get("spans") or []
            where = ", ".join(f"{s}-{e}" for s, e in spans) or str(field.get("origin") or "")
            typer.echo(f"\n{name} [{where if value else 'not found'}]")
            if value:
                typer.echo(hanging(textwrap.indent(value, "  ")))
        if draft.reason:
            typer.echo(f"\nrejected: {draft.reason}")


def _becomes(draft: Draft) -> str:
    if draft.state == "accepted":
        return f"accepted as {draft.incident_id}"
    if draft.revises:
        return (
            f"{_revision(draft)}: accepting replaces its post-mortem; "
            f"`--as-new` files it as {draft.incident_id} instead"
        )
    return f"will be {draft.incident_id}"


def _actor(by: str) -> str:
    return by.strip() or f"cli:{getpass.getuser()}"


def _fill_hint(draft: str, what: str) -> str:
    """How to complete a draft from here: the one wording of that advice, for one draft or any."""
    return (
        f"{what} with `recallops review edit {draft} --set FIELD=TEXT` (or on /review/{draft}), "
        f"then `recallops review accept {draft}`"
    )


def _assignments(values: list[str]) -> dict[str, str]:
    fields: dict[str, str] = {}
    for value in values:
        name, sep, text = value.partition("=")
        if not sep or not name.strip():
            raise typer.BadParameter(f"{value!r} is not FIELD=TEXT", param_hint="--set")
        fields[name.strip()] = text
    return fields


@app.command("edit")
def edit(
    draft_id: int = typer.Argument(..., help="The draft's number (from `review list`)."),
    values: list[str] = typer.Option(
        ..., "--set", help="FIELD=TEXT, the field as you want it kept (repeatable; see `review show`)."
    ),
) -> None:
    """Write a pending draft's fields yourself: what the extraction missed or got wrong. An edited field
    keeps no link to the source text: it is yours now."""
    from incidents.drafts import service as drafts

    fields = _assignments(values)
    try:
        with cli_session() as db:
            draft = _load(db, draft_id)
            changed = drafts.edit(db_session=db, draft=draft, values=fields)
            missing = list(draft.missing)
            db.commit()
    except drafts.DraftRefused as exc:
        refuse(f"draft {draft_id} not edited: {exc}")
    typer.echo(f"draft {draft_id}: {', '.join(changed) or 'nothing'} changed")
    if missing:
        typer.echo(f"still missing: {', '.join(missing)}")
    else:
        typer.echo(f"complete: `recallops review accept {draft_id}` puts it into memory")


@app.command("accept")
def accept(
    draft_ids: list[int] = typer.Argument(..., help="Drafts to accept."),
    by: str = typer.Option("", "--by", help="Who accepts (kept with the record); default: the OS user."),
    as_new: bool = typer.Option(
        False,
        "--as-new",
        help="File a revision as a new incident instead of replacing the record it revises "
        "(another outage written in a reused file).",
    ),
    allow_other_memory: bool = ALLOW_OTHER_MEMORY,
) -> None:
    """Accept drafts into memory as imported history (a draft with required fields missing is refused).
    A revision of an incident replaces that incident's post-mortem, keeping the earlier version on its
    timeline."""
    from incidents.drafts import service as drafts
    from web.app.container import Container
    from web.cli.memory import drain

    _all_exist(draft_ids)
    memory_guard(writes=True, allowed=allow_other_memory)
    refused = 0
    accepted: list[str] = []
    for draft_id in draft_ids:
        try:
            missing: list[str] = []
            with cli_session() as db:
                draft = _load(db, draft_id)
                missing = list(draft.missing) if draft.state == "pending" else []
                revises = None if as_new else draft.revises
                incident = drafts.accept(db_session=db, draft=draft, actor=_actor(by), as_new=as_new)
                revised = f", replacing its post-mortem (a revision of {revises})" if revises else ""
                typer.echo(f"draft {draft_id} accepted as {incident.public_id}{revised}")
                accepted.append(incident.public_id)
        except drafts.DraftRefused as exc:
            refused += 1
            typer.echo(f"error: draft {draft_id} not accepted: {exc}", err=True)
            if missing:
                typer.echo("  " + _fill_hint(str(draft_id), f"write {', '.join(missing)}"), err=True)

    async def sync() -> int:
        container = Container.build()
        try:
            await drain(container)
            with container.sessions() as db:
                return _waiting(db, accepted)
        finally:
            await container.aclose()

    if accepted:
        waiting = run(sync())
        typer.echo(f"written to memory: {len(accepted) - waiting}")
        _queued(waiting)
    if refused:
        raise typer.Exit(code=1)


@app.command("reject")
def reject(
    draft_ids: list[int] = typer.Argument(..., help="Drafts to reject."),
    reason: str = typer.Option(..., "--reason", help="Why (kept with the draft)."),
    by: str = typer.Option("", "--by", help="Who rejects; default: the OS user."),
) -> None:
    """Keep drafts out of memory, saying why; importing the same file again leaves them rejected."""
    from incidents.drafts import service as drafts

    _all_exist(draft_ids)
    failed = False
    for draft_id in draft_ids:
        try:
            with cli_session() as db:
                drafts.reject(db_session=db, draft=_load(db, draft_id), actor=_actor(by), reason=reason)
            typer.echo(f"draft {draft_id} rejected")
        except drafts.DraftRefused as exc:
            failed = True
            typer.echo(f"error: draft {draft_id}: {exc}", err=True)
    if failed:
        raise typer.Exit(code=1)
