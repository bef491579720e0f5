"""`faithscreen parse`: read replies with the contract parser (placeholder, being written)."""
