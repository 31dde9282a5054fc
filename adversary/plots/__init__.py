"""Figures of case studies, drawn with matplotlib's object API (no display needed)."""
