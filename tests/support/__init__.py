"""Test support: servers and helpers the tests start (not tests themselves)."""
