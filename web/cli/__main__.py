from web.cli import app

app(prog_name="recallops")
