"""The helper names pydantic-ai's AG-UI adapter keeps in its private `_utils` module, for code (and tests)
written against them."""

from __future__ import annotations as _annotations

import re

from ...exceptions import UserError
from ._event_stream import NATIVE_TOOL_CALL_PREFIX
from ._sdk import DEFAULT_AG_UI_VERSION

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

_VERSION = re.compile(r'\d+(\.\d+)*')


def detect_ag_ui_version() -> str:
    """The version of the installed AG-UI SDK."""
    return DEFAULT_AG_UI_VERSION


def parse_ag_ui_version(version: str) -> tuple[int, ...]:
    """A version string as a tuple of numbers (`'0.1.13'` is `(0, 1, 13)`; a pre-release suffix is dropped).

    Raises:
        UserError: the string does not start with a dotted number.
    """
    found = _VERSION.match(version)
    if found is None:
        raise UserError(f'AG-UI version {version!r}: give a dotted number such as `1.0.0`.')
    return tuple(int(part) for part in found.group(0).split('.'))
