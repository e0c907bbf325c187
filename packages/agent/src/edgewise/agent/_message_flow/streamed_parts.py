"""Builds the parts of a streamed response from deltas, and the events that describe each step.

Text and JSON arguments are kept as lists of pieces and joined only when a complete part is needed (at its
end, or for `get`), so a response of n chunks costs O(n), not O(n^2) as re-concatenating the text would.

`PartsManager` answers to two vocabularies: Edgewise's models call the short methods (`text_delta`,
`tool_call_delta`, ...), each giving one event or none; code written for pydantic-ai 2.x calls its
`ModelResponsePartsManager` methods (`handle_text_delta`, `handle_thinking_delta`, ...), which
`edgewise.agent._parts_manager` exposes under pydantic-ai's names.
"""

from __future__ import annotations as _annotations

from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from .._messages.citations import Citation
from .._messages.model_messages import (
    ModelResponsePart,
    NativeToolCallPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    generate_tool_call_id,
)
from .._tools.definition import ToolDefinition
from ..exceptions import UnexpectedModelBehavior
from .events import (
    ModelResponseStreamEvent,
    PartDeltaEvent,
    PartStartEvent,
    TextPartDelta,
    ThinkingPartDelta,
    ToolCallPartDelta,
)

__all__ = ('PartsManager',)

_Details = dict[str, Any] | Callable[[dict[str, Any] | None], dict[str, Any]] | None


class _RequestTools(Protocol):
    """What the manager reads of a request's `ModelRequestParameters` (defined on a floor above this one)."""

    @property
    def function_tools(self) -> Sequence[ToolDefinition]: ...


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
    id: str | None = None
    provider_name: str | None = None
    provider_details: dict[str, Any] | None = None
    tool_kind: str | None = None
    citations: list[Citation] | None = None  # of a text part

    def build(self) -> ModelResponsePart:
        if self.whole is not None:
            return self.whole
        content = ''.join(self.pieces)
        if len(self.pieces) > 1:
            self.pieces[:] = [content]  # later joins start from the joined text
        details = dict(self.provider_details) if self.provider_details is not None else None
        if self.kind == 'text':
            return TextPart(content, id=self.id, provider_name=self.provider_name, provider_details=details,
                            citations=self.citations)  # fmt: skip
        if self.kind == 'thinking':
            return ThinkingPart(content, id=self.id, signature=self.signature, provider_name=self.provider_name,
                                provider_details=details)  # fmt: skip
        args: str | dict[str, Any] | None = self.dict_args if self.dict_args is not None else (content or None)
        if self.native is not None:
            return replace(self.native, args=args)
        part = ToolCallPart(self.tool_name, args, self.tool_call_id or generate_tool_call_id(), id=self.id,
                            provider_name=self.provider_name, provider_details=details)  # fmt: skip
        return ToolCallPart.narrow_type(part, tool_kind=self.tool_kind) if self.tool_kind else part

    def add_metadata(self, provider_name: str | None, provider_details: _Details) -> None:
        if provider_name is not None:
            self.provider_name = provider_name
        if callable(provider_details):
            self.provider_details = provider_details(self.provider_details)
        elif provider_details is not None:
            self.provider_details = {**(self.provider_details or {}), **provider_details}


def _building_of(part: ModelResponsePart) -> _Building:
    """A part given whole, as a building that later deltas can extend."""
    if not isinstance(part, TextPart | ThinkingPart | ToolCallPart | NativeToolCallPart):
        return _Building(part.part_kind, whole=part)
    meta = {'id': part.id, 'provider_name': part.provider_name, 'provider_details': part.provider_details}
    if isinstance(part, TextPart):
        return _Building('text', [part.content], citations=part.citations, **meta)  # type: ignore[arg-type]
    if isinstance(part, ThinkingPart):
        return _Building('thinking', [part.content], signature=part.signature, **meta)  # type: ignore[arg-type]
    if isinstance(part, ToolCallPart):
        building = _Building('tool-call', tool_name=part.tool_name, tool_call_id=part.tool_call_id,
                             tool_kind=part.tool_kind, **meta)  # type: ignore[arg-type]  # fmt: skip
    else:
        building = _Building('builtin-tool-call', tool_name=part.tool_name, native=part)
    if isinstance(part.args, dict):
        building.dict_args = part.args
    elif part.args:
        building.pieces.append(part.args)
    return building


class PartsManager:
    """The parts of one streamed response, keyed by the model's own ids for them (`vendor_part_id`)."""

    def __init__(self, model_request_parameters: _RequestTools | None = None) -> None:
        """Start an empty response.

        Args:
            model_request_parameters: The request's parameters: a streamed call of a function tool whose
                definition has a `tool_kind` is made that kind's typed part (a `load_capability` call, ...).
        """
        self.model_request_parameters = model_request_parameters
        self._parts: list[_Building] = []
        self._by_vendor_id: dict[Hashable, _Building] = {}
        tools = model_request_parameters.function_tools if model_request_parameters is not None else ()
        self._tool_kinds = {tool.name: tool.tool_kind for tool in tools if tool.tool_kind is not None}

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
            # Each delta names the call it adds to (the part's id, the model's or a generated one), as in 2.x.
            delta = ToolCallPartDelta(tool_name_delta=tool_name or None, args_delta=args or None,
                                      tool_call_id=tool_call_id or part.tool_call_id)  # fmt: skip
            return PartDeltaEvent(index=part.index, delta=delta)
        if not part.tool_name:
            return None
        if part.tool_call_id is None:
            part.tool_call_id = generate_tool_call_id()
        if self._tool_kinds:
            part.tool_kind = self._tool_kinds.get(part.tool_name)
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
            if found is not None and found.index != -1 and type(found.build()) is type(part):
                self._replace(found, part)
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

    # pydantic-ai 2.x's names (`ModelResponsePartsManager`), for ported models and streamed responses.

    def handle_text_delta(
        self,
        *,
        vendor_part_id: Hashable | None,
        content: str,
        id: str | None = None,
        provider_name: str | None = None,
        provider_details: dict[str, Any] | None = None,
        thinking_tags: tuple[str, str] | None = None,
        ignore_leading_whitespace: bool = False,
        citations: list[Citation] | None = None,
    ) -> Iterator[ModelResponseStreamEvent]:
        """Add text to the text part `vendor_part_id` (`None`: the last part, if it is text), or start one.

        `citations` replace the text part's (as `TextPartDelta.citations_delta`). With `thinking_tags`, a delta
        that is exactly the opening tag starts a thinking part that takes the
        following deltas, up to the closing tag. With `ignore_leading_whitespace`, a new part is not started by
        whitespace alone.

        Raises:
            UnexpectedModelBehavior: the part `vendor_part_id` is not text (nor thinking within `thinking_tags`).
        """
        part = self._latest('text') if vendor_part_id is None else self._by_vendor_id.get(vendor_part_id)
        if part is not None and vendor_part_id is not None:
            if thinking_tags and part.kind == 'thinking':
                if content == thinking_tags[1]:
                    del self._by_vendor_id[vendor_part_id]  # the next delta starts a new part
                    return
                name = provider_name if provider_name != part.provider_name else None
                part.add_metadata(provider_name, provider_details)
                if content:
                    part.pieces.append(content)
                delta = ThinkingPartDelta(content_delta=content, provider_name=name, provider_details=provider_details)
                yield PartDeltaEvent(index=part.index, delta=delta)
                return
            if part.kind != 'text':
                raise UnexpectedModelBehavior(f'Cannot apply a text delta to {part.build()!r}')
        if thinking_tags and content == thinking_tags[0]:
            thinking = _Building('thinking', provider_name=provider_name, provider_details=provider_details)
            self._start(object() if vendor_part_id is None else vendor_part_id, thinking)
            yield PartStartEvent(index=thinking.index, part=thinking.build())
            return
        if part is None:
            if ignore_leading_whitespace and (not content or content.isspace()):
                return
            text = _Building('text', [content], id=id, provider_name=provider_name, provider_details=provider_details,
                             citations=citations)  # fmt: skip
            self._start(object() if vendor_part_id is None else vendor_part_id, text)
            yield PartStartEvent(index=text.index, part=text.build())
            return
        name = provider_name if provider_name != part.provider_name else None
        part.add_metadata(provider_name, provider_details)
        if content:
            part.pieces.append(content)
        if citations is not None:
            part.citations = citations
        text_delta = TextPartDelta(
            content, provider_name=name, provider_details=provider_details, citations_delta=citations
        )
        yield PartDeltaEvent(index=part.index, delta=text_delta)

    def handle_thinking_delta(
        self,
        *,
        vendor_part_id: Hashable | None,
        content: str | None = None,
        id: str | None = None,
        signature: str | None = None,
        provider_name: str | None = None,
        provider_details: _Details = None,
    ) -> Iterator[ModelResponseStreamEvent]:
        """Add reasoning (a signature, provider data) to the thinking part `vendor_part_id` (`None`: the last
        part, if it is thinking), or start one. `provider_details` is a dict to merge or a function of the part's
        current details giving the new ones.

        Raises:
            UnexpectedModelBehavior: the part is not thinking, or a new part would have nothing in it.
        """
        part = self._latest('thinking') if vendor_part_id is None else self._by_vendor_id.get(vendor_part_id)
        if part is None:
            if content is None and signature is None and provider_details is None:
                raise UnexpectedModelBehavior(
                    'Cannot create a ThinkingPart with no content, signature, or provider_details'
                )
            thinking = _Building('thinking', [content or ''], signature=signature, id=id, provider_name=provider_name)
            thinking.add_metadata(None, provider_details)
            self._start(object() if vendor_part_id is None else vendor_part_id, thinking)
            yield PartStartEvent(index=thinking.index, part=thinking.build())
            return
        if part.kind != 'thinking':
            raise UnexpectedModelBehavior(f'Cannot apply a thinking delta to {part.build()!r}')
        if content is None and signature is None and provider_name is None and provider_details is None:
            return
        name = provider_name if provider_name != part.provider_name else None
        part.add_metadata(provider_name, provider_details)
        if signature is not None:
            part.signature = signature
        if content:
            part.pieces.append(content)
        delta = ThinkingPartDelta(content_delta=content, signature_delta=signature, provider_name=name,
                                  provider_details=provider_details)  # fmt: skip
        yield PartDeltaEvent(index=part.index, delta=delta)

    def handle_tool_call_delta(
        self,
        *,
        vendor_part_id: Hashable | None,
        tool_name: str | None = None,
        args: str | dict[str, Any] | None = None,
        tool_call_id: str | None = None,
        provider_name: str | None = None,
        provider_details: dict[str, Any] | None = None,
    ) -> ModelResponseStreamEvent | None:
        """Add to the tool call `vendor_part_id` (`None` without a `tool_name`: the last tool call); as
        `tool_call_delta`, the part starts once its name is known.

        Raises:
            UnexpectedModelBehavior: the part is not a tool call, or JSON text and dict arguments are mixed.
        """
        if vendor_part_id is None:
            latest = self._parts[-1] if self._parts and tool_name is None else None
            found = latest if latest is not None and latest.kind in ('tool-call', 'builtin-tool-call') else None
            vendor_part_id = object()  # a key of its own, for the last tool call or a new one
            if found is not None:
                self._by_vendor_id[vendor_part_id] = found
        else:
            found = self._by_vendor_id.get(vendor_part_id)
            if found is not None and found.kind not in ('tool-call', 'builtin-tool-call'):
                raise UnexpectedModelBehavior(f'Cannot apply a tool call delta to {found.build()!r}')
        event = self.tool_call_delta(vendor_part_id, tool_name, args, tool_call_id)
        building = self._by_vendor_id[vendor_part_id]
        if provider_name is not None or provider_details is not None:
            name = provider_name if provider_name != building.provider_name else None
            building.add_metadata(provider_name, provider_details)
            if isinstance(event, PartDeltaEvent):
                event.delta = replace(event.delta, provider_name=name, provider_details=provider_details)  # type: ignore[arg-type]
            elif isinstance(event, PartStartEvent):
                event.part = building.build()
            elif building.index != -1:
                delta = ToolCallPartDelta(
                    tool_call_id=building.tool_call_id, provider_name=name, provider_details=provider_details
                )
                event = PartDeltaEvent(index=building.index, delta=delta)
        return event

    def handle_tool_call_part(
        self,
        *,
        vendor_part_id: Hashable | None,
        tool_name: str,
        args: str | dict[str, Any] | None,
        tool_call_id: str | None = None,
        id: str | None = None,
        provider_name: str | None = None,
        provider_details: dict[str, Any] | None = None,
    ) -> ModelResponseStreamEvent:
        """Add a whole tool call, or replace the tool call `vendor_part_id`."""
        part = ToolCallPart(tool_name, args, tool_call_id or generate_tool_call_id(), id=id,
                            provider_name=provider_name, provider_details=provider_details)  # fmt: skip
        kind = self._tool_kinds.get(tool_name)
        return self.handle_part(vendor_part_id=vendor_part_id, part=ToolCallPart.narrow_type(part, tool_kind=kind))

    def get_part_by_vendor_id(self, vendor_id: Hashable) -> ModelResponsePart | ToolCallPartDelta | None:
        """The part the model calls `vendor_id` as received so far (a `ToolCallPartDelta` for a tool call whose
        name has not come yet), or `None`."""
        part = self._by_vendor_id.get(vendor_id)
        if part is None:
            return None
        if part.index == -1:
            args = part.dict_args if part.dict_args is not None else (''.join(part.pieces) or None)
            return ToolCallPartDelta(tool_name_delta=part.tool_name or None, args_delta=args,
                                     tool_call_id=part.tool_call_id)  # fmt: skip
        return part.build()

    def apply_event(self, event: ModelResponseStreamEvent) -> None:
        """Apply an event of a stream being replayed (keyed by part index), so `get_parts` shows it."""
        if isinstance(event, PartStartEvent):
            self.handle_part(vendor_part_id=event.index, part=event.part)
        elif isinstance(event, PartDeltaEvent):
            current = self.get_part_by_vendor_id(event.index)
            if current is None or isinstance(current, ToolCallPartDelta):
                raise UnexpectedModelBehavior(f'A delta for part {event.index}, which has not started')
            self.handle_part(vendor_part_id=event.index, part=event.delta.apply(current))

    def _latest(self, kind: str) -> _Building | None:
        return self._parts[-1] if self._parts and self._parts[-1].kind == kind else None

    def _replace(self, old: _Building, part: ModelResponsePart) -> None:
        # In place, so that every vendor id of the part keeps pointing at it.
        index = old.index
        old.__dict__.update(_building_of(part).__dict__)
        old.index = index

    def _start(self, vendor_part_id: Hashable, part: _Building) -> _Building:
        part.index = len(self._parts)
        self._parts.append(part)
        self._by_vendor_id[vendor_part_id] = part
        return part
