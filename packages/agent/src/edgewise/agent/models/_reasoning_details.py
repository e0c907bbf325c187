"""Structured reasoning (`reasoning_details`) of Chat Completions servers that send it (OpenRouter, Snowflake Cortex):
each item read as a thinking part, sent back as the item it came from, and read off a stream.
"""

from __future__ import annotations as _annotations

from collections.abc import Mapping
from typing import Any

from ..messages import ModelResponse, ModelResponsePart, ModelResponseStreamEvent, PartStartEvent, ThinkingPart
from .openai import OpenAIStreamedResponse

__all__ = (
    'REASONING_FIELDS',
    'ReasoningDetailsStreamedResponse',
    'from_reasoning_detail',
    'into_reasoning_detail',
    'sent_back_detail',
    'with_reasoning_details',
)

REASONING_FIELDS = ('reasoning', 'reasoning_content')
"""The plain reasoning fields, which repeat the text of the details when both come."""

_DETAIL_KEYS = ('format', 'index', 'type')  # what a reasoning detail keeps in `ThinkingPart.provider_details`
_DETAIL_CONTENT = {'reasoning.text': 'text', 'reasoning.summary': 'summary'}  # where a detail's text is


def from_reasoning_detail(detail: Mapping[str, Any], provider_name: str) -> ThinkingPart:
    """A `reasoning_details` item as a thinking part (encrypted reasoning: empty, with the data as signature)."""
    kind = detail.get('type')
    content = detail.get(_DETAIL_CONTENT.get(str(kind), ''), '') or ''
    signature = detail.get('data') if kind == 'reasoning.encrypted' else detail.get('signature')
    return ThinkingPart(
        content,
        id=detail.get('id'),
        signature=signature,
        provider_name=provider_name,
        provider_details={key: detail.get(key) for key in _DETAIL_KEYS},
    )


def sent_back_detail(part: ThinkingPart, accepted: bool) -> dict[str, Any] | None:
    """The `reasoning_details` item to send a thinking part back as: only for a part read from one, whose signed or
    encrypted data the receiving API verifies (`accepted`, from `Model.accepts_stateless_artifacts`); `None` for
    others (sent back as the profile says)."""
    if not accepted or not part.provider_details or 'type' not in part.provider_details:
        return None
    return into_reasoning_detail(part)


def with_reasoning_details(response: ModelResponse, data: Mapping[str, Any], system: str) -> ModelResponse:
    """`response` (parsed from the completion `data`) with the message's `reasoning_details` as its first parts, in
    place of the thinking of the plain reasoning field, which holds the same text (not for a refusal)."""
    details = (data['choices'][0].get('message') or {}).get('reasoning_details')
    if details and not (response.provider_details or {}).get('refusal'):
        parts: list[ModelResponsePart] = [from_reasoning_detail(d, system) for d in details]
        parts += [p for p in response.parts if not (isinstance(p, ThinkingPart) and p.id in REASONING_FIELDS)]
        response.parts = parts
    return response


def into_reasoning_detail(part: ThinkingPart) -> dict[str, Any]:
    """A thinking part read from `reasoning_details`, as the item it came from."""
    details = part.provider_details or {}
    kind = details['type']
    detail: dict[str, Any] = {'id': part.id, 'format': details.get('format'), 'index': details.get('index')}
    detail['type'] = kind
    if kind == 'reasoning.encrypted':
        detail['data'] = part.signature or ''
    elif kind == 'reasoning.summary':
        detail['summary'] = part.content
    else:
        detail['text'] = part.content
        detail['signature'] = part.signature
    return detail


class ReasoningDetailsStreamedResponse(OpenAIStreamedResponse):
    """A streamed Chat Completions response whose deltas may carry `reasoning_details`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._detail_parts: dict[int, ThinkingPart] = {}  # part index -> the fields of its reasoning detail

    def _chunk(self, chunk: dict[str, Any]) -> list[ModelResponseStreamEvent]:
        events: list[ModelResponseStreamEvent] = []
        choices: list[Any] = chunk.get('choices') or []
        delta = choices[0].get('delta') if choices else None
        if isinstance(delta, dict) and (details := delta.get('reasoning_details')):
            for i, detail in enumerate(details):
                if (event := self._detail_event(i, detail)) is not None:
                    events.append(event)
            # The plain reasoning field repeats the details' text.
            delta = {k: v for k, v in delta.items() if k not in REASONING_FIELDS}
            chunk = {**chunk, 'choices': [{**choices[0], 'delta': delta}, *choices[1:]]}
        events.extend(super()._chunk(chunk))
        return events

    def _detail_event(self, i: int, detail: Mapping[str, Any]) -> ModelResponseStreamEvent | None:
        part = from_reasoning_detail(detail, self._provider_name)
        event = self._parts_manager.thinking_delta(
            ('reasoning_detail', detail.get('type'), i), part.content, part.signature
        )
        if isinstance(event, PartStartEvent):
            self._detail_parts[event.index] = part
            event.part = part
        return event

    def get(self) -> ModelResponse:
        """The response so far, its reasoning details' thinking parts with their ids and details."""
        response = super().get()
        for index, fields in self._detail_parts.items():
            part = response.parts[index]
            if isinstance(part, ThinkingPart):
                part.id, part.provider_name = fields.id, fields.provider_name
                part.provider_details = fields.provider_details
        return response
