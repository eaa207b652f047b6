"""Brindle Green: a village readying its harvest fair before the day (a kit world; see README.md)."""
