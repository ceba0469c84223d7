"""``recallops token``: API tokens for alert senders, automation and dashboards."""

import json
from typing import Any

import typer

from web.cli.common import cli_session, refusing_session

app = typer.Typer(help="API tokens (bearer tokens with scopes).", no_args_is_help=True)


@app.command()
def create(
    name: str = typer.Option(..., help="Who uses it, e.g. alertmanager-prod; recorded as the actor."),
    scope: list[str] = typer.Option(
        ...,
        help=(
            "alerts:write (senders), incidents:write (acknowledge/resolve, import), "
            "history:replace (rewrite imported history), read. Repeatable."
        ),
    ),
) -> None:
    """Create a token and print its secret once (stdout); only a hash is kept."""
    from incidents.auth import tokens

    with refusing_session(tokens.TokenError) as session:
        issued = tokens.create_token(db_session=session, name=name, scopes=scope)
    typer.echo(f"token {name!r} created with scopes {', '.join(issued.token.scopes)}", err=True)
    typer.echo("store it now: it cannot be shown again", err=True)
    typer.echo(issued.secret)


@app.command("list")
def list_(
    all_: bool = typer.Option(False, "--all", help="Include revoked tokens."),
    as_json: bool = typer.Option(False, "--json", help="One JSON array."),
) -> None:
    """List tokens (never their secrets)."""
    from incidents.auth import tokens

    with cli_session() as session:
        rows: list[dict[str, Any]] = [
            {
                "name": t.name,
                "prefix": t.prefix,
                "scopes": t.scopes,
                "created_at": t.created_at.isoformat(),
                "last_used_at": t.last_used_at.isoformat() if t.last_used_at else None,
                "revoked_at": t.revoked_at.isoformat() if t.revoked_at else None,
            }
            for t in tokens.list_tokens(db_session=session, include_revoked=all_)
        ]
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    if not rows:
        typer.echo("no tokens; create one with: recallops token create --name NAME --scope read")
        return
    for row in rows:
        state = (
            f"revoked {row['revoked_at']}"
            if row["revoked_at"]
            else f"last used {row['last_used_at'] or 'never'}"
        )
        typer.echo(f"{row['name']:<32} {row['prefix']}…  {','.join(row['scopes']):<36} {state}")


@app.command()
def revoke(name: str = typer.Argument(..., help="The token's name.")) -> None:
    """Revoke a token: it stops working at once; its name stays taken."""
    from incidents.auth import tokens

    with refusing_session(tokens.TokenError) as session:
        tokens.revoke_token(db_session=session, name=name)
    typer.echo(f"token {name!r} revoked")
