"""Figures drawn from bucket tables: reliability diagrams, decision-loss curves, saving (fastcdl.plot is the front door)."""
