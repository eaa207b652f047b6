"""The Lindenfield Board: a small social network where a rumour spreads (a kit world; see README.md)."""
