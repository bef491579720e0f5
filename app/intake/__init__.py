"""Intake: validate a screening request, store the pair, and queue (or decide) it."""
