"""
A file larger than memory
=========================

Every measure of fastcdl is a function of the bucket table, and two tables over the same
binning merge exactly. So a file is read in chunks of rows (pyarrow's CSV reader, 2^20 rows at a
time by default), each chunk becomes a table, and the tables add up: memory holds one chunk and
the table, whatever the file's length (``fastcdl.io.CHUNK_ROWS`` rows at a time). Here a file of
two million rows is written to a temporary folder and read back in two chunks.
"""

# %%
import os
import tempfile

import numpy as np

import fastcdl as fc
import fastcdl.io

rng = np.random.default_rng(0)
path = os.path.join(tempfile.mkdtemp(), "scores.csv")
part_tables = []
with open(path, "w") as fh:
    fh.write("y,p\n")
    for _ in range(4):  # written in four parts: the writer never holds the whole file either
        p = rng.integers(0, 101, 500_000) / 100
        y = (rng.random(500_000) < p**1.2).astype(int)
        np.savetxt(fh, np.column_stack([y, p]), fmt=["%d", "%.2f"], delimiter=",")
        part_tables.append(fc.bucket_stats(y, p))  # to check the reader against below

fs = fastcdl.io.read_file(path)
print(f"{fs.n_rows} rows in {fs.stats.n_buckets} buckets")
print(f"CDL = {fc.cdl(fs.stats):.4f}, ECE = {fc.ece(fs.stats):.4f}")

# %%
# It prints::
#
#     2000000 rows in 101 buckets
#     CDL = 0.0050, ECE = 0.0450
#
# The tables of the four parts, added, are the file's table: the same counts in every bucket,
# so the same CDL to the last bit.
whole = part_tables[0] + part_tables[1] + part_tables[2] + part_tables[3]
print("same counts:", bool((whole.counts == fs.stats.counts).all() and (whole.positives == fs.stats.positives).all()))
print("same CDL:", fc.cdl(whole) == fc.cdl(fs.stats))

# %%
# It prints::
#
#     same counts: True
#     same CDL: True
#
# The reliability diagram of the file's table, and ``fc.summary`` of the path reads it the same
# way (``fastcdl metrics scores.csv`` on the command line).
import matplotlib.pyplot as plt

from fastcdl.plot import ReliabilityDisplay

fig, ax = plt.subplots(figsize=(5.6, 6.6), layout="constrained")
ReliabilityDisplay.from_stats(fs.stats, band="wilson", ax=ax, name="two million rows, read in chunks")
