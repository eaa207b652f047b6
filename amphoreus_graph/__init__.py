"""amphoreus-graph: a society of LLM agents living by Paths, orchestrated by LangGraph."""
