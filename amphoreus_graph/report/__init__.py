"""`amphoreus report RUN`: one self-contained HTML page of a run (timeline, trust, alignment, memory, transcript)."""

from amphoreus_graph.report.model import RunReport, load_run
from amphoreus_graph.report.render import render_report, write_report

__all__ = ["RunReport", "load_run", "render_report", "write_report"]
