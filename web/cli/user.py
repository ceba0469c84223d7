"""``recallops user``: the people who sign in to the pages (engineers resolve, viewers read)."""

import sys

import typer

from web.cli.common import cli_session, refusing_session

app = typer.Typer(help="User accounts for the pages.", no_args_is_help=True)
USER = typer.Argument(..., help="The user's sign-in name (from `recallops user list`).")


def _new_password(generate: bool) -> tuple[str, bool]:
    """Prompt on a terminal; generate (and say so) when asked to or when nobody is there to type."""
    from incidents.auth import users

    if generate or not sys.stdin.isatty():
        return users.generate_password(), True
    return typer.prompt("Password", hide_input=True, confirmation_prompt=True), False


@app.command()
def add(
    name: str = typer.Argument(..., help="Sign-in name; it is also the name on timelines and resolutions."),
    role: str = typer.Option(..., help="engineer (acknowledge, resolve) or viewer (read only)."),
    password: str | None = typer.Option(None, help="Password; prompted for on a terminal, else generated."),
    generate: bool = typer.Option(False, "--generate", help="Generate a password and print it once."),
    sso: bool = typer.Option(
        False, "--sso", help="No password: signs in only through the trusted SSO header."
    ),
) -> None:
    """Create a user."""
    from incidents.auth import users

    if sso and (password or generate):
        raise typer.BadParameter(
            "accounts have no password: leave out --password and --generate", param_hint="--sso"
        )
    generated = False
    if not sso and password is None:
        password, generated = _new_password(generate)
    with refusing_session(users.UserError) as session:
        users.add_user(db_session=session, name=name, role=role, password=None if sso else password)
    typer.echo(f"user {name} added ({role}{', SSO only' if sso else ''})")
    if generated:
        typer.echo(f"password: {password}")


@app.command("list")
def list_() -> None:
    """List users, their roles and whether they can sign in."""
    from incidents.auth import users

    with cli_session() as session:
        rows = users.list_users(db_session=session)
    if not rows:
        typer.echo("no users; add one with: recallops user add NAME --role engineer")
        return
    for user in rows:
        state = "disabled" if user.disabled_at else ("sso" if user.password_hash is None else "active")
        typer.echo(f"{user.name}\t{user.role}\t{state}\t{user.created_at:%Y-%m-%d %H:%M}Z")


@app.command()
def passwd(
    name: str = USER,
    password: str | None = typer.Option(None, help="Prompted for on a terminal, else generated."),
    generate: bool = typer.Option(False, "--generate", help="Generate a password and print it once."),
) -> None:
    """Set a user's password; their open sessions end."""
    from incidents.auth import users

    new, generated = (password, False) if password else _new_password(generate)
    with refusing_session(users.UserError) as session:
        users.set_password(db_session=session, name=name, password=new)
    typer.echo(f"password set for {name}")
    if generated:
        typer.echo(f"password: {new}")


@app.command()
def role(
    name: str = USER,
    new_role: str = typer.Argument(..., metavar="ROLE", help="engineer or viewer"),
) -> None:
    """Change a user's role; it applies from their next request."""
    from incidents.auth import users

    with refusing_session(users.UserError) as session:
        users.set_role(db_session=session, name=name, role=new_role)
    typer.echo(f"{name} is now {new_role}")


@app.command()
def disable(name: str = USER) -> None:
    """Stop a user signing in; their open sessions end and their name stays on past records."""
    from incidents.auth import users

    with refusing_session(users.UserError) as session:
        users.disable_user(db_session=session, name=name)
    typer.echo(f"user {name} disabled")


@app.command()
def signout(name: str = USER) -> None:
    """Sign a user out everywhere: every open session of theirs ends at once, on every replica."""
    from incidents.auth import users

    with refusing_session(users.UserError) as session:
        ended = users.sign_out_everywhere(db_session=session, name=name)
    typer.echo(f"user {name} signed out of {ended} session{'s' if ended != 1 else ''}")
