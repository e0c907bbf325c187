"""The status of a node snapshot: the bottom layer, shared by the exceptions and the persistence contract."""

from __future__ import annotations as _annotations

from typing import Literal

__all__ = ('SnapshotStatus',)

SnapshotStatus = Literal['created', 'pending', 'running', 'success', 'error']
"""The status of a node snapshot.

- `'created'`: stored, not yet run.
- `'pending'`: handed out by `load_next`, not yet run.
- `'running'`: its node is running.
- `'success'`: its node ran and returned the next node or the end.
- `'error'`: its node raised.
"""
