"""`faithscreen db ...` (placeholder, being written)."""
