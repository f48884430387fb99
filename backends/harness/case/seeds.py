"""Seeds derived from names: a case's input seed from (session seed, case) and a sharded
run's default seed from its identity. Stable across processes and machines, so every
flow, worker and shard that derives a seed from the same names gets the same one."""

from __future__ import annotations

import hashlib


def derive_seed(session_seed: int, case: str) -> int:
    """Stable across processes and machines (unlike hash()), distinct per case."""
    digest = hashlib.md5(case.encode("utf-8")).digest()
    return (int.from_bytes(digest[:8], "little") + session_seed) % (2**31 - 1)
