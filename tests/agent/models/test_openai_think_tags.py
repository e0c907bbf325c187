"""`<think>` tags in streamed Chat Completions content, split across chunks anywhere (every byte boundary)."""

from __future__ import annotations

import pytest

from edgewise.agent.messages import (
    PartDeltaEvent,
    PartStartEvent,
    TextPart,
    TextPartDelta,
    ThinkingPart,
    ThinkingPartDelta,
)
from edgewise.agent.profiles.openai import OpenAIModelProfile

from ._chat import PARAMS, delta, drain, mock_model, sse, sse_reply, user

pytestmark = pytest.mark.anyio

CONTENT = 'Before <think>weighing a < b</think>After, 1 < 2 and <thin'
EXPECTED = [
    TextPart('Before '),
    ThinkingPart('weighing a < b', id='content', provider_name='openai'),
    TextPart('After, 1 < 2 and <thin'),  # a tag's start left at the end of the stream is text after all
]


def _splits(content: str) -> list[list[str]]:
    """The content in two pieces cut at every position, and in pieces of one character each."""
    return [[content[:i], content[i:]] for i in range(1, len(content))] + [list(content)]


async def test_tags_split_at_every_byte_give_the_same_parts() -> None:
    for pieces in _splits(CONTENT):
        model, _ = mock_model(sse_reply(sse(*(delta(content=piece) for piece in pieces), delta('stop'))))
        stream = await drain(model, user('q'), None, PARAMS)
        assert stream.get().parts == EXPECTED, pieces


async def test_events_of_a_split_tag_carry_only_the_content_between_tags() -> None:
    model, _ = mock_model(sse_reply(sse(*(delta(content=c) for c in CONTENT), delta('stop'))))
    async with model.request_stream(user('q'), None, PARAMS) as stream:
        events = [event async for event in stream]
    pieces: list[str] = []
    for event in events:
        if isinstance(event, PartStartEvent) and isinstance(event.part, TextPart | ThinkingPart):
            pieces.append(event.part.content)
        elif isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
            pieces.append(event.delta.content_delta)
        elif isinstance(event, PartDeltaEvent) and isinstance(event.delta, ThinkingPartDelta):
            pieces.append(event.delta.content_delta or '')
    assert ''.join(pieces) == 'Before weighing a < bAfter, 1 < 2 and <thin'
    assert [e.event_kind for e in events].count('part_start') == 3


async def test_other_tags_of_a_profile_split_across_chunks() -> None:
    profile = OpenAIModelProfile(thinking_tags=('<reasoning>', '</reasoning>'))
    content = '<reasoning>step one</reasoning>Done.'
    for pieces in _splits(content):
        model, _ = mock_model(
            sse_reply(sse(*(delta(content=piece) for piece in pieces), delta('stop'))), profile=profile
        )
        stream = await drain(model, user('q'), None, PARAMS)
        assert stream.get().parts == [
            ThinkingPart('step one', id='content', provider_name='openai'),
            TextPart('Done.'),
        ], pieces
