"""API keys and access roles: who is calling, and what they may do.

`principal` and `keys` are pure; `dependencies` is the FastAPI side.
"""
