"""Saltmere Bay: a shared fishery that collapses when over-fished (a kit world; see README.md)."""
