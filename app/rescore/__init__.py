"""Re-scoring: stored raw replies read again with the current parser and re-decided with the
current policy and evidence checks, without calling a model: what a parser or policy change
would have decided, measured on replies already paid for."""
