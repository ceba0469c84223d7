"""``recallops db``: schema migrations."""

import typer

app = typer.Typer(help="Database schema.", no_args_is_help=True)


@app.command()
def upgrade() -> None:
    """Apply every pending migration to the configured database."""
    from incidents.database import make_engine
    from incidents.database import upgrade as apply_migrations
    from web.app.settings import Settings

    settings = Settings()
    engine = make_engine(settings.database_url)
    apply_migrations(engine)
    engine.dispose()
    typer.echo(f"database at head: {engine.url.render_as_string(hide_password=True)}")
