"""Worlds: the rules kit, the LLM game master, and the worlds that ship with the package, one folder each."""
