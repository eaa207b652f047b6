"""Catalogs: the Path catalog (value systems rating kinds of acts) and scenarios (which world, validated once)."""
