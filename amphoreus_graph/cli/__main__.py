"""`python -m amphoreus_graph.cli`: the same as the `amphoreus` command."""

from amphoreus_graph.cli.main import app

app()
