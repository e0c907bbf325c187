"""The helper names pydantic-ai's Vercel AI adapter keeps in its private `_utils` module, for code (and tests)
written against them: provider metadata under the `pydantic_ai` key, and the approvals a chat answered."""

from __future__ import annotations as _annotations

from collections.abc import Iterator, Sequence
from typing import Any

from ._messages import approval_responses
from ._metadata import METADATA_KEY, read_metadata
from .request_types import ProviderMetadata, ToolApprovalResponded, UIMessage

__all__ = ('dump_provider_metadata', 'iter_tool_approval_responses', 'load_provider_metadata')


def dump_provider_metadata(wrapper_key: str | None = METADATA_KEY, **fields: Any) -> dict[str, Any] | None:
    """The fields that are set, under `wrapper_key` (or bare when it is `None`); `None` when none is set."""
    kept = {key: value for key, value in fields.items() if value is not None}
    if not kept:
        return None
    return {wrapper_key: kept} if wrapper_key else kept


def load_provider_metadata(provider_metadata: ProviderMetadata | None) -> dict[str, Any]:
    """Edgewise's (and pydantic-ai's) fields of a part's provider metadata."""
    return read_metadata(provider_metadata)


def iter_tool_approval_responses(messages: Sequence[UIMessage]) -> Iterator[tuple[str, ToolApprovalResponded]]:
    """`(tool call id, answer)` of each answered approval of the assistant's messages."""
    return iter(approval_responses(messages))
