"""The helper names pydantic-ai's AG-UI adapter keeps in its private `_utils` module, for code (and tests)
written against them."""

from __future__ import annotations as _annotations

from ._event_stream import NATIVE_TOOL_CALL_PREFIX
from ._sdk import DEFAULT_AG_UI_VERSION, parse_ag_ui_version

__all__ = (
    'BUILTIN_TOOL_CALL_ID_PREFIX',
    'REASONING_MESSAGE_ROLE',
    'detect_ag_ui_version',
    'parse_ag_ui_version',
)

BUILTIN_TOOL_CALL_ID_PREFIX = NATIVE_TOOL_CALL_PREFIX
"""The prefix of a native tool call's id on the wire."""

REASONING_MESSAGE_ROLE = 'reasoning'
"""The role of reasoning messages (AG-UI 1.0)."""


def detect_ag_ui_version() -> str:
    """The version of the installed AG-UI SDK."""
    return DEFAULT_AG_UI_VERSION
