"""Builds the parts of a streamed response from deltas, and the events that describe each step.

Text and JSON arguments are kept as lists of pieces and joined only when a complete part is needed (at its
end, or for `get`), so a response of n chunks costs O(n), not O(n^2) as re-concatenating the text would.
"""

from __future__ import annotations as _annotations

from collections.abc import Hashable
from dataclasses import dataclass, field, replace
from typing import Any

from .._messages.model_messages import (
    ModelResponsePart,
    NativeToolCallPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    generate_tool_call_id,
)
from ..exceptions import UnexpectedModelBehavior
from .events import (
    PartDeltaEvent,
    PartStartEvent,
    TextPartDelta,
    ThinkingPartDelta,
    ToolCallPartDelta,
)

__all__ = ('PartsManager',)


@dataclass(eq=False)
class _Building:
    """A part being streamed: its kind, its fixed fields and the pieces of its growing content."""

    kind: str
    pieces: list[str] = field(default_factory=list)
    tool_name: str = ''
    tool_call_id: str | None = None
    dict_args: dict[str, Any] | None = None
    signature: str | None = None
    index: int = -1  # the part's index once it has started (a tool call starts when its name is known)
    whole: ModelResponsePart | None = None  # a part that arrives in one piece (a file)
    native: NativeToolCallPart | None = None  # for a call of a provider's tool: its fixed fields

    def build(self) -> ModelResponsePart:
        if self.whole is not None:
            return self.whole
        content = ''.join(self.pieces)
        if len(self.pieces) > 1:
            self.pieces[:] = [content]  # later joins start from the joined text
        if self.kind == 'text':
            return TextPart(content)
        if self.kind == 'thinking':
            return ThinkingPart(content, signature=self.signature)
        args: str | dict[str, Any] | None = self.dict_args if self.dict_args is not None else (content or None)
        if self.native is not None:
            return replace(self.native, args=args)
        return ToolCallPart(self.tool_name, args, self.tool_call_id or generate_tool_call_id())


class PartsManager:
    """The parts of one streamed response, keyed by the model's own ids for them (`vendor_part_id`)."""

    def __init__(self) -> None:
        self._parts: list[_Building] = []
        self._by_vendor_id: dict[Hashable, _Building] = {}

    def text_delta(self, vendor_part_id: Hashable, content: str) -> PartStartEvent | PartDeltaEvent | None:
        """Append text to the text part `vendor_part_id` (started if new); `None` for empty text."""
        if not content:
            return None
        part = self._by_vendor_id.get(vendor_part_id)
        if part is None or part.kind != 'text':
            part = self._start(vendor_part_id, _Building('text', [content]))
            return PartStartEvent(index=part.index, part=TextPart(content))
        part.pieces.append(content)
        return PartDeltaEvent(index=part.index, delta=TextPartDelta(content))

    def text_start(self, vendor_part_id: Hashable) -> PartStartEvent:
        """Start an empty text part `vendor_part_id` (its text comes in later deltas)."""
        part = self._start(vendor_part_id, _Building('text'))
        return PartStartEvent(index=part.index, part=TextPart(''))

    def thinking_delta(
        self, vendor_part_id: Hashable, content: str | None = None, signature: str | None = None
    ) -> PartStartEvent | PartDeltaEvent | None:
        """Append reasoning (or set the signature) of the thinking part `vendor_part_id` (started if new)."""
        if not content and signature is None:
            return None
        part = self._by_vendor_id.get(vendor_part_id)
        if part is None or part.kind != 'thinking':
            part = self._start(vendor_part_id, _Building('thinking', [content or ''], signature=signature))
            return PartStartEvent(index=part.index, part=ThinkingPart(content or '', signature=signature))
        if content:
            part.pieces.append(content)
        if signature is not None:
            part.signature = signature
        return PartDeltaEvent(
            index=part.index, delta=ThinkingPartDelta(content_delta=content, signature_delta=signature)
        )

    def tool_call_delta(
        self,
        vendor_part_id: Hashable,
        tool_name: str | None = None,
        args: str | dict[str, Any] | None = None,
        tool_call_id: str | None = None,
    ) -> PartStartEvent | PartDeltaEvent | None:
        """Add to the tool call `vendor_part_id`: a piece of its name, of its arguments, or its id.

        The part starts (a `PartStartEvent`) once its name is known; pieces before that are kept.

        Raises:
            UnexpectedModelBehavior: JSON text and dict arguments are mixed in one call.
        """
        part = self._by_vendor_id.get(vendor_part_id)
        if part is None or part.kind not in ('tool-call', 'builtin-tool-call'):
            part = _Building('tool-call')
            self._by_vendor_id[vendor_part_id] = part
        started = part.index != -1
        if tool_name:
            part.tool_name += tool_name
        if tool_call_id:
            part.tool_call_id = tool_call_id
        if isinstance(args, str) and args:
            if part.dict_args is not None:
                raise UnexpectedModelBehavior(f'Tool call {part.tool_name!r}: JSON text added to dict arguments')
            part.pieces.append(args)
        elif isinstance(args, dict):
            if part.pieces:
                raise UnexpectedModelBehavior(f'Tool call {part.tool_name!r}: dict added to JSON text arguments')
            part.dict_args = {**(part.dict_args or {}), **args}
        if started:
            if not (tool_name or args or tool_call_id):
                return None
            delta = ToolCallPartDelta(tool_name_delta=tool_name or None, args_delta=args or None,
                                      tool_call_id=tool_call_id)  # fmt: skip
            return PartDeltaEvent(index=part.index, delta=delta)
        if not part.tool_name:
            return None
        if part.tool_call_id is None:
            part.tool_call_id = generate_tool_call_id()
        self._start(vendor_part_id, part)
        return PartStartEvent(index=part.index, part=part.build())

    def whole_part(self, vendor_part_id: Hashable, part: ModelResponsePart) -> PartStartEvent:
        """Add a part that arrives complete (a file the model made, a provider's tool call or result).

        A `NativeToolCallPart` added here may still get argument pieces from `tool_call_delta` under the same
        `vendor_part_id` (arguments a provider streams).
        """
        if isinstance(part, NativeToolCallPart):
            building = _Building('builtin-tool-call', tool_name=part.tool_name, native=part)
            if isinstance(part.args, dict):
                building.dict_args = part.args
            elif part.args:
                building.pieces.append(part.args)
            self._start(vendor_part_id, building)
        else:
            self._start(vendor_part_id, _Building(kind=part.part_kind, whole=part))
        return PartStartEvent(index=len(self._parts) - 1, part=part)

    def handle_part(self, *, vendor_part_id: Hashable | None, part: ModelResponsePart) -> PartStartEvent:
        """Add a part that arrives complete, or replace the part of the same kind the model gave the same
        `vendor_part_id` (pydantic-ai's name for adding a whole part; `None`: always a new part)."""
        if vendor_part_id is not None:
            found = self._by_vendor_id.get(vendor_part_id)
            if found is not None and found.whole is not None and found.kind == part.part_kind:
                found.whole = part
                return PartStartEvent(index=found.index, part=part)
        else:
            vendor_part_id = object()  # a key of its own
        return self.whole_part(vendor_part_id, part)

    def get_parts(self) -> list[ModelResponsePart]:
        """The parts so far, complete as received (tool calls whose name never came are left out)."""
        return [part.build() for part in self._parts]

    def get_part(self, index: int) -> ModelResponsePart:
        """The part at `index` as received so far."""
        return self._parts[index].build()

    def _start(self, vendor_part_id: Hashable, part: _Building) -> _Building:
        part.index = len(self._parts)
        self._parts.append(part)
        self._by_vendor_id[vendor_part_id] = part
        return part
