"""`amphoreus`: the command line. Each module holds the commands of one part (data, bench, train, the Scepter's
view); `main` assembles them. User errors print one line and exit 2 (`console.py`)."""

from amphoreus_graph.cli.main import app

__all__ = ["app"]
