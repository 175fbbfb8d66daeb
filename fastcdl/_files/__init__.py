"""Reading files of predictions: formats and sources, columns, text cells (fastcdl.io is the front door)."""
