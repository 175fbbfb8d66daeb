"""How rounds become bucket tables: tabulation, outcome keys, the sample-size check, binary views of k classes."""
