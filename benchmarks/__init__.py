"""Edgewise benchmarks: Edgewise against the anchor libraries, in one process, reported as ratios."""
