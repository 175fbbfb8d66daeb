"""Decision tasks: the losses of a task on a table, and the worst task that certifies a CDL."""
