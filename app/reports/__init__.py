"""Reports: what was stored, summed up (pure statistics and the summary built from rows)."""
