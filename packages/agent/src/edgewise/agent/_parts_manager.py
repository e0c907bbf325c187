"""pydantic-ai's private path of the parts manager of streamed responses, for ported code and tests:
`ModelResponsePartsManager` is `edgewise.agent._message_flow.streamed_parts.PartsManager`, which answers to
pydantic-ai 2.x's method names (`handle_text_delta`, `handle_thinking_delta`, `handle_tool_call_delta`,
`handle_tool_call_part`, `handle_part`, `get_parts`, `get_part_by_vendor_id`, `apply_event`)."""

from collections.abc import Hashable

from ._message_flow.streamed_parts import PartsManager as ModelResponsePartsManager

__all__ = ('ModelResponsePartsManager', 'VendorId')

VendorId = Hashable
"""The model's own id of a part of its streamed response (an index, an item id)."""
