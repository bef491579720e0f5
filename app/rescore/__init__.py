"""Re-scoring: stored raw replies read again with the current parser and re-decided with the
current policy and evidence checks, without calling a model (issue 6)."""
