"""API keys: generated here, shown once, stored only as a hash. Pure.

A key is "fs_" + 32 random bytes (URL-safe base64). It is stored as its SHA-256 hex digest:
a fast hash is enough because the key carries 256 bits of randomness, so neither a
dictionary nor brute force can find it; slow hashes (bcrypt, argon2) exist to protect
low-entropy passwords, and would cost every request tens of milliseconds for nothing here.
"""

from __future__ import annotations

import hashlib
import re
import secrets

KEY_MARK = "fs_"
# The key's first characters, kept in clear so people can tell keys apart in lists.
PREFIX_LENGTH = 10
# token_urlsafe(32) is 43 characters of the URL-safe alphabet.
_KEY_SHAPE = re.compile(r"fs_[A-Za-z0-9_-]{43}")


def generate_key() -> str:
    return KEY_MARK + secrets.token_urlsafe(32)


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def key_prefix(key: str) -> str:
    return key[:PREFIX_LENGTH]


def well_formed(key: str) -> bool:
    """True for a string shaped like a key we issue (the lookup decides if it is one)."""
    return _KEY_SHAPE.fullmatch(key) is not None
