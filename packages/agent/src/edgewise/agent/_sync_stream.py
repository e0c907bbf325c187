"""pydantic-ai's private path of the synchronous stream bridge, kept for ported code and tests.

The bridge lives in `_streaming.sync_bridge`.
"""

from ._streaming.sync_bridge import SyncStreamBridge

__all__ = ('SyncStreamBridge',)
