"""`faithscreen serve` (placeholder, being written)."""
