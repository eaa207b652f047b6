"""The engine: the society and recurrence graphs, the run on disk (checkpoint, samples, chronicle, summary)."""
