"""Helpers for conform.v1 in its canonical JSON mapping: reading the fields
the harness sends (64-bit integers arrive as strings, bytes as base64,
defaults omitted) and writing Blob/Data values."""

import base64
import hashlib

MAX_INLINE = 1 << 20   # Data carries bytes up to 1 MiB, sha256 above


def u64(obj, key):
    """An integer field, 0 when absent (JSON gives 64-bit ones as strings)."""
    v = obj.get(key)
    return int(v) if v is not None else 0


def b64(obj, key):
    v = obj.get(key)
    if not v:
        return b""
    v = v.replace("-", "+").replace("_", "/")
    return base64.b64decode(v + "=" * (-len(v) % 4))


def enc64(b):
    return base64.b64encode(b).decode("ascii")


def blob(obj):
    """A Blob's bytes: literal data, or a fill expanded here (the pattern
    repeated, then cut to length)."""
    if obj is None:
        return b""
    fill = obj.get("fill")
    if fill is not None:
        length = u64(fill, "length")
        pattern = b64(fill, "pattern")
        if not pattern:
            return bytes(length)
        reps = length // len(pattern) + 1
        return (pattern * reps)[:length]
    return b64(obj, "data")


def data(b):
    """A Data answer: the length always, the bytes up to 1 MiB, the SHA-256
    above."""
    out = {}
    if len(b):
        out["length"] = str(len(b))
    if len(b) > MAX_INLINE:
        out["sha256"] = enc64(hashlib.sha256(b).digest())
    elif b:
        out["bytes"] = enc64(b)
    return out

