"""The streamed parts manager under pydantic-ai 2.x's names (`edgewise.agent._parts_manager.ModelResponsePartsManager`):
`handle_text_delta`, `handle_thinking_delta`, `handle_tool_call_delta`, `handle_tool_call_part`, `handle_part`,
`get_part_by_vendor_id` and `apply_event`, as ported models and streamed responses call them."""

from __future__ import annotations

from typing import Any

import pytest

from edgewise.agent._parts_manager import ModelResponsePartsManager
from edgewise.agent.exceptions import UnexpectedModelBehavior
from edgewise.agent.messages import (
    CompactionPart,
    LoadCapabilityCallPart,
    PartDeltaEvent,
    PartStartEvent,
    SpeechPart,
    SpeechPartDelta,
    TextPart,
    TextPartDelta,
    ThinkingPart,
    ThinkingPartDelta,
    ToolCallPart,
    ToolCallPartDelta,
)
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.tools import ToolDefinition


def _manager() -> ModelResponsePartsManager:
    return ModelResponsePartsManager(model_request_parameters=ModelRequestParameters())


def test_text_deltas_start_and_grow_a_part_per_vendor_id() -> None:
    manager = _manager()
    assert list(manager.handle_text_delta(vendor_part_id=0, content='Hel', provider_name='p')) == [
        PartStartEvent(index=0, part=TextPart('Hel', provider_name='p'))
    ]
    assert list(
        manager.handle_text_delta(vendor_part_id=0, content='lo', provider_name='p', provider_details={'a': 1})
    ) == [PartDeltaEvent(index=0, delta=TextPartDelta('lo', provider_details={'a': 1}))]
    # Without a vendor id a delta goes to the last part if it is text.
    list(manager.handle_text_delta(vendor_part_id=None, content='!'))
    assert manager.get_parts() == [TextPart('Hello!', provider_name='p', provider_details={'a': 1})]
    # Whitespace alone does not start a part when asked so.
    assert list(manager.handle_text_delta(vendor_part_id=1, content='  ', ignore_leading_whitespace=True)) == []
    manager.handle_tool_call_part(vendor_part_id='t', tool_name='f', args={})
    with pytest.raises(UnexpectedModelBehavior, match='Cannot apply a text delta to'):
        list(manager.handle_text_delta(vendor_part_id='t', content='x'))


def test_thinking_tags_in_text_make_a_thinking_part() -> None:
    manager = _manager()
    tags = ('<think>', '</think>')
    events = [
        event
        for content in ('<think>', 'hmm', '</think>', 'answer')
        for event in manager.handle_text_delta(vendor_part_id='c', content=content, thinking_tags=tags)
    ]
    assert [type(e).__name__ for e in events] == ['PartStartEvent', 'PartDeltaEvent', 'PartStartEvent']
    assert manager.get_parts() == [ThinkingPart('hmm'), TextPart('answer')]


def test_thinking_deltas_take_details_or_a_function_of_them() -> None:
    manager = _manager()
    with pytest.raises(UnexpectedModelBehavior, match='Cannot create a ThinkingPart with no content'):
        list(manager.handle_thinking_delta(vendor_part_id='t'))
    list(manager.handle_thinking_delta(vendor_part_id='t', content='reason', provider_details={'raw': ['']}))

    def more(details: dict[str, Any] | None) -> dict[str, Any]:
        return {'raw': [*(details or {}).get('raw', []), 'tok']}

    (event,) = manager.handle_thinking_delta(
        vendor_part_id='t', content=' more', signature='sig', provider_details=more
    )
    assert isinstance(event, PartDeltaEvent)
    assert isinstance(event.delta, ThinkingPartDelta)
    assert callable(event.delta.provider_details)
    assert list(manager.handle_thinking_delta(vendor_part_id='t')) == []  # nothing to add
    assert manager.get_parts() == [ThinkingPart('reason more', signature='sig', provider_details={'raw': ['', 'tok']})]
    list(manager.handle_thinking_delta(vendor_part_id=None, content='!'))  # the last part is thinking
    assert manager.get_parts()[0].content == 'reason more!'  # type: ignore[union-attr]
    list(manager.handle_text_delta(vendor_part_id='x', content='text'))
    with pytest.raises(UnexpectedModelBehavior, match='Cannot apply a thinking delta to'):
        list(manager.handle_thinking_delta(vendor_part_id='x', content='no'))


def test_tool_call_deltas_start_the_call_once_named_and_promote_typed_calls() -> None:
    tools = [ToolDefinition(name='load_capability', tool_kind='capability-load')]
    manager = ModelResponsePartsManager(model_request_parameters=ModelRequestParameters(function_tools=tools))
    assert manager.handle_tool_call_delta(vendor_part_id=1, args='{"id": ') is None
    assert manager.get_part_by_vendor_id(1) == ToolCallPartDelta(args_delta='{"id": ')
    started = manager.handle_tool_call_delta(vendor_part_id=1, tool_name='load_capability', tool_call_id='c1')
    assert isinstance(started, PartStartEvent)
    assert isinstance(started.part, LoadCapabilityCallPart)
    delta = manager.handle_tool_call_delta(
        vendor_part_id=None, args='"x"}', provider_name='p', provider_details={'k': 1}
    )
    assert delta == PartDeltaEvent(
        index=0,
        delta=ToolCallPartDelta(args_delta='"x"}', tool_call_id='c1', provider_name='p', provider_details={'k': 1}),
    )
    (part,) = manager.get_parts()
    assert isinstance(part, LoadCapabilityCallPart)
    assert part.args == '{"id": "x"}'
    assert part.provider_details == {'k': 1}
    meta = manager.handle_tool_call_delta(vendor_part_id=1, provider_name='q')
    assert meta == PartDeltaEvent(index=0, delta=ToolCallPartDelta(tool_call_id='c1', provider_name='q'))
    # A named call without a vendor id is a new call.
    new = manager.handle_tool_call_delta(
        vendor_part_id=None, tool_name='other', args={'a': 1}, provider_details={'d': 2}
    )
    assert isinstance(new, PartStartEvent)
    assert isinstance(new.part, ToolCallPart)
    assert new.part == ToolCallPart('other', {'a': 1}, new.part.tool_call_id, provider_details={'d': 2})
    list(manager.handle_text_delta(vendor_part_id='text', content='hi'))
    with pytest.raises(UnexpectedModelBehavior, match='Cannot apply a tool call delta to'):
        manager.handle_tool_call_delta(vendor_part_id='text', args='x')
    assert manager.get_part_by_vendor_id('missing') is None


def test_whole_parts_replace_the_part_of_the_same_kind_and_vendor_id() -> None:
    manager = _manager()
    first = manager.handle_tool_call_part(vendor_part_id='c', tool_name='f', args='{}', tool_call_id='1')
    second = manager.handle_tool_call_part(vendor_part_id='c', tool_name='f', args='{"a": 1}', tool_call_id='1')
    assert first.index == second.index == 0  # type: ignore[union-attr]
    manager.handle_part(vendor_part_id='s', part=CompactionPart('one', provider_name='anthropic'))
    manager.handle_part(vendor_part_id='s', part=CompactionPart('two', provider_name='anthropic'))
    manager.handle_part(vendor_part_id=None, part=TextPart('a'))
    assert manager.get_parts() == [
        ToolCallPart('f', '{"a": 1}', '1'),
        CompactionPart('two', provider_name='anthropic'),
        TextPart('a'),
    ]


def test_replayed_events_rebuild_the_parts() -> None:
    source, replay = _manager(), _manager()
    events = [
        *source.handle_text_delta(vendor_part_id=0, content='Hi'),
        *source.handle_text_delta(vendor_part_id=0, content=' there'),
        PartStartEvent(index=1, part=SpeechPart(speaker='assistant', transcript='spo')),
        PartDeltaEvent(index=1, delta=SpeechPartDelta(transcript_delta='ken')),
    ]
    for event in events:
        replay.apply_event(event)
    assert replay.get_parts() == [TextPart('Hi there'), SpeechPart(speaker='assistant', transcript='spoken')]
    with pytest.raises(UnexpectedModelBehavior, match='A delta for part 5, which has not started'):
        replay.apply_event(PartDeltaEvent(index=5, delta=TextPartDelta('x')))
    # The text part grows again after a replacement.
    list(replay.handle_text_delta(vendor_part_id=0, content='!'))
    assert replay.get_parts()[0] == TextPart('Hi there!')


def test_replacing_keeps_every_kind_of_part_extendable() -> None:
    from edgewise.agent.messages import FinalResultEvent, NativeToolCallPart, PartEndEvent

    manager = _manager()
    manager.handle_part(vendor_part_id='t', part=ThinkingPart('a', signature='s'))
    manager.handle_part(vendor_part_id='t', part=ThinkingPart('b', signature='s'))
    assert list(manager.handle_thinking_delta(vendor_part_id='t', signature='s2')) == [
        PartDeltaEvent(index=0, delta=ThinkingPartDelta(signature_delta='s2'))
    ]
    native = NativeToolCallPart('web_search', '{"q": "x"}', 'n1', provider_name='openai')
    manager.handle_part(vendor_part_id='n', part=native)
    manager.handle_part(
        vendor_part_id='n', part=NativeToolCallPart('web_search', {'q': 'y'}, 'n1', provider_name='openai')
    )
    assert list(manager.handle_text_delta(vendor_part_id='x', content='')) == [
        PartStartEvent(index=2, part=TextPart(''))
    ]
    assert list(manager.handle_text_delta(vendor_part_id='x', content='')) == [
        PartDeltaEvent(index=2, delta=TextPartDelta(''))
    ]
    # Metadata of a call whose name has not come yet waits for it.
    assert manager.handle_tool_call_delta(vendor_part_id='later', provider_name='p') is None
    manager.apply_event(PartEndEvent(index=0, part=ThinkingPart('b')))  # nothing to apply
    manager.apply_event(FinalResultEvent(tool_name=None, tool_call_id=None))
    assert manager.get_parts() == [
        ThinkingPart('b', signature='s2'),
        NativeToolCallPart('web_search', {'q': 'y'}, 'n1', provider_name='openai'),
        TextPart(''),
    ]


def test_a_thinking_delta_with_a_function_of_the_details_serializes_them_as_null() -> None:
    import json

    import pydantic

    from edgewise.agent.messages import AgentStreamEvent

    manager = _manager()
    list(manager.handle_thinking_delta(vendor_part_id='t', content='a', provider_details={'raw': ['']}))
    (event,) = manager.handle_thinking_delta(vendor_part_id='t', content='b', provider_details=lambda details: {})
    adapter: pydantic.TypeAdapter[AgentStreamEvent] = pydantic.TypeAdapter(AgentStreamEvent)
    assert json.loads(adapter.dump_json(event))['delta']['provider_details'] is None
    plain = PartDeltaEvent(index=0, delta=ThinkingPartDelta(content_delta='c', provider_details={'k': [1]}))
    assert adapter.validate_json(adapter.dump_json(plain)) == plain
