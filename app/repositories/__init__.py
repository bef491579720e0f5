"""All SQL lives here: plain async functions taking the session first.

Repositories flush but never commit: the unit of work (the request dependency, the job
runner) commits once.
"""
