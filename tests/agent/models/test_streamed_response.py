"""Streamed model responses: the events of FunctionModel and TestModel streams, and the response at the end."""

from __future__ import annotations

from typing import Any

import pytest
from inline_snapshot import snapshot

from edgewise.agent import UnexpectedModelBehavior, UserError
from edgewise.agent.messages import (
    FinalResultEvent,
    ModelRequest,
    ModelResponse,
    PartDeltaEvent,
    PartEndEvent,
    PartStartEvent,
    TextPart,
    TextPartDelta,
    ThinkingPart,
    ThinkingPartDelta,
    ToolCallPart,
    ToolCallPartDelta,
)
from edgewise.agent.models import ModelRequestParameters, StreamedResponse
from edgewise.agent.models.function import DeltaThinkingPart, DeltaToolCall, FunctionModel
from edgewise.agent.models.test import TestModel
from edgewise.agent.tools import ToolDefinition
from edgewise.agent.usage import RequestUsage

from .._streaming_helpers import StreamItem, streamed

pytestmark = pytest.mark.anyio

OUTPUT_TOOL = ToolDefinition(name='final_result', kind='output')


async def _events(model: FunctionModel | TestModel, params: ModelRequestParameters) -> tuple[list[Any], ModelResponse]:
    async with model.request_stream([ModelRequest.user_text_prompt('hi')], None, params) as response:
        events = [event async for event in response]
        assert response.complete
        return events, response.get()


async def test_text_then_a_tool_call_streams_part_starts_deltas_ends_and_one_final_result_event() -> None:
    model = streamed(
        [
            'hel',
            'lo',
            {0: DeltaToolCall(name='get', json_args='{"x":', tool_call_id='c1')},
            {0: DeltaToolCall(json_args='1}')},
        ]
    )
    events, response = await _events(model, ModelRequestParameters())
    assert events == snapshot(
        [
            PartStartEvent(index=0, part=TextPart(content='hel')),
            FinalResultEvent(tool_name=None, tool_call_id=None),
            PartDeltaEvent(index=0, delta=TextPartDelta(content_delta='lo')),
            PartEndEvent(index=0, part=TextPart(content='hello'), next_part_kind='tool-call'),
            PartStartEvent(
                index=1, part=ToolCallPart(tool_name='get', args='{"x":', tool_call_id='c1'), previous_part_kind='text'
            ),
            PartDeltaEvent(index=1, delta=ToolCallPartDelta(args_delta='1}', tool_call_id='c1')),
            PartEndEvent(index=1, part=ToolCallPart(tool_name='get', args='{"x":1}', tool_call_id='c1')),
        ]
    )
    assert response.parts == snapshot(
        [TextPart(content='hello'), ToolCallPart(tool_name='get', args='{"x":1}', tool_call_id='c1')]
    )
    assert response.usage == snapshot(RequestUsage(input_tokens=50, output_tokens=6))
    assert response.model_name == 'function::stream'


async def test_the_start_of_a_text_part_is_the_final_result_even_before_it_has_content() -> None:
    events, _ = await _events(streamed(['\n', ' ', 'ok']), ModelRequestParameters())
    assert [type(e).__name__ for e in events] == snapshot(
        ['PartStartEvent', 'FinalResultEvent', 'PartDeltaEvent', 'PartDeltaEvent', 'PartEndEvent']
    )
    params = ModelRequestParameters(output_tools=[OUTPUT_TOOL], output_mode='tool', allow_text_output=False)
    events, _ = await _events(streamed(['\n', {0: DeltaToolCall(name='get', json_args='{}')}]), params)
    assert [e for e in events if e.event_kind == 'final_result'] == []


async def test_a_deferred_tool_call_is_a_final_result_without_a_tool_name() -> None:
    external = ToolDefinition(name='ask_user', kind='external')
    params = ModelRequestParameters(function_tools=[external], allow_text_output=False)
    events, _ = await _events(streamed([{0: DeltaToolCall(name='ask_user', json_args='{}')}]), params)
    assert [e for e in events if e.event_kind == 'final_result'] == [
        FinalResultEvent(tool_name=None, tool_call_id=None)
    ]


async def test_an_output_tool_call_is_the_final_result_and_text_is_not_when_text_is_not_allowed() -> None:
    params = ModelRequestParameters(output_tools=[OUTPUT_TOOL], output_mode='tool', allow_text_output=False)
    items: list[StreamItem] = ['thinking aloud', {1: DeltaToolCall(name='final_', tool_call_id='c9')},
                               {1: DeltaToolCall(name='result', json_args='{}')}]  # fmt: skip
    events, response = await _events(streamed(items), params)
    assert events == snapshot(
        [
            PartStartEvent(index=0, part=TextPart(content='thinking aloud')),
            PartEndEvent(index=0, part=TextPart(content='thinking aloud'), next_part_kind='tool-call'),
            PartStartEvent(
                index=1, part=ToolCallPart(tool_name='final_', tool_call_id='c9'), previous_part_kind='text'
            ),
            PartDeltaEvent(
                index=1, delta=ToolCallPartDelta(tool_name_delta='result', args_delta='{}', tool_call_id='c9')
            ),
            PartEndEvent(index=1, part=ToolCallPart(tool_name='final_result', args='{}', tool_call_id='c9')),
        ]
    )
    assert response.parts == snapshot(
        [TextPart(content='thinking aloud'), ToolCallPart(tool_name='final_result', args='{}', tool_call_id='c9')]
    )


async def test_thinking_parts_stream_with_their_signature() -> None:
    items: list[StreamItem] = [
        {0: DeltaThinkingPart(content='let me ')},
        {0: DeltaThinkingPart(content='think', signature='sig')},
        'done',
    ]
    events, response = await _events(streamed(items), ModelRequestParameters())
    assert [e.delta for e in events if e.event_kind == 'part_delta'] == snapshot(
        [ThinkingPartDelta(content_delta='think', signature_delta='sig')]
    )
    assert response.parts == snapshot([ThinkingPart(content='let me think', signature='sig'), TextPart(content='done')])


async def test_test_model_streams_text_from_an_empty_start_word_by_word_and_tool_calls_whole() -> None:
    params = ModelRequestParameters(function_tools=[ToolDefinition(name='get')])
    events, response = await _events(TestModel(), params)
    assert events == snapshot(
        [
            PartStartEvent(
                index=0, part=ToolCallPart(tool_name='get', args={}, tool_call_id='pyd_ai_tool_call_id__get')
            ),
            PartEndEvent(index=0, part=ToolCallPart(tool_name='get', args={}, tool_call_id='pyd_ai_tool_call_id__get')),
        ]
    )
    events, response = await _events(TestModel(custom_output_text='one two  three'), ModelRequestParameters())
    assert [
        e.part if e.event_kind == 'part_start' else e.delta
        for e in events
        if e.event_kind in ('part_start', 'part_delta')
    ] == snapshot(
        [
            TextPart(content=''),
            TextPartDelta(content_delta='one '),
            TextPartDelta(content_delta='two '),
            TextPartDelta(content_delta=' '),
            TextPartDelta(content_delta='three'),
        ]
    )
    assert response.usage == snapshot(RequestUsage(input_tokens=51, output_tokens=4))
    assert response.provider_name == 'test'
    # A single word longer than two characters comes in two halves.
    events, response = await _events(TestModel(custom_output_text='hello'), ModelRequestParameters())
    assert [e.delta for e in events if e.event_kind == 'part_delta'] == [
        TextPartDelta(content_delta='he'),
        TextPartDelta(content_delta='llo'),
    ]


async def test_a_function_model_without_a_stream_function_cannot_stream() -> None:
    model = FunctionModel(lambda messages, info: ModelResponse(parts=[TextPart('x')]), model_name='plain')
    with pytest.raises(UserError, match="FunctionModel 'plain' has no `stream_function`"):
        async with model.request_stream([], None, ModelRequestParameters()):
            pass  # pragma: no cover


async def test_a_stream_function_yielding_something_else_is_a_user_error() -> None:
    with pytest.raises(UserError, match=r'yielded 42; expected `str`'):
        await _events(streamed([{0: 42}]), ModelRequestParameters())  # type: ignore[list-item]


async def test_json_text_and_dict_arguments_cannot_be_mixed_in_one_call() -> None:
    with pytest.raises(UnexpectedModelBehavior, match='dict added to JSON text arguments'):
        await _events(streamed([{0: DeltaToolCall(name='t', json_args='{')}, {0: DeltaToolCall(json_args={})}]),  # type: ignore[arg-type]
                      ModelRequestParameters())  # fmt: skip


async def test_leaving_a_stream_early_closes_the_stream_function_at_once() -> None:
    log: list[str] = []
    model = streamed(['a', 'b', 'c'], log=log)
    async with model.request_stream([], None, ModelRequestParameters()) as response:
        async for _ in response:
            break
        assert log == []
        assert not response.complete
    assert log == ['closed 1']


def test_deltas_apply_to_parts_as_pydantic_ai_applies_them() -> None:
    assert TextPartDelta('b').apply(TextPart('a')) == TextPart('ab')
    assert ThinkingPartDelta(content_delta='b', signature_delta='s').apply(ThinkingPart('a')) == ThinkingPart(
        'ab', signature='s'
    )
    assert ToolCallPartDelta(tool_name_delta='x', args_delta='1}', tool_call_id='c2').apply(
        ToolCallPart('t', '{"a":', 'c1')
    ) == ToolCallPart('tx', '{"a":1}', 'c2')
    assert ToolCallPartDelta(args_delta={'b': 2}).apply(ToolCallPart('t', {'a': 1}, 'c')) == ToolCallPart(
        't', {'a': 1, 'b': 2}, 'c'
    )
    with pytest.raises(ValueError, match='Cannot apply a TextPartDelta to ThinkingPart'):
        TextPartDelta('x').apply(ThinkingPart('a'))
    with pytest.raises(ValueError, match='Cannot apply a ThinkingPartDelta to TextPart'):
        ThinkingPartDelta(content_delta='x').apply(TextPart('a'))
    with pytest.raises(ValueError, match='Cannot apply a ToolCallPartDelta to TextPart'):
        ToolCallPartDelta(args_delta='x').apply(TextPart('a'))
    with pytest.raises(UnexpectedModelBehavior, match="Cannot apply JSON text to the dict arguments of tool 't'"):
        ToolCallPartDelta(args_delta='x').apply(ToolCallPart('t', {}, 'c'))
    with pytest.raises(UnexpectedModelBehavior, match="Cannot apply a dict to the JSON arguments of tool 't'"):
        ToolCallPartDelta(args_delta={}).apply(ToolCallPart('t', '{', 'c'))


def test_streamed_response_is_exported_from_models() -> None:
    assert StreamedResponse.__module__ == 'edgewise.agent.models._streamed_response'
    assert RequestUsage().input_tokens == 0


async def test_test_model_responses_name_their_provider_streamed_or_not() -> None:
    # As pydantic-ai 2.x (1.107 named the provider only on the streamed response).
    from edgewise.agent.messages import ModelRequest

    plain = await TestModel().request([ModelRequest.user_text_prompt('hi')], None, ModelRequestParameters())
    assert plain.provider_name == 'test'
    _, streamed = await _events(TestModel(), ModelRequestParameters())
    assert streamed.provider_name == 'test'


async def test_a_dataclass_subclass_takes_the_request_parameters_first_then_its_own_fields() -> None:
    from collections.abc import AsyncIterator
    from dataclasses import dataclass, field
    from datetime import datetime, timezone

    started = datetime(2026, 1, 2, tzinfo=timezone.utc)

    @dataclass
    class WordStream(StreamedResponse):
        words: list[str]
        _model_name: str = 'words'
        _timestamp: datetime = field(default=started)

        async def _get_event_iterator(self) -> AsyncIterator[Any]:
            for word in self.words:
                for event in self._parts_manager.handle_text_delta(vendor_part_id=0, content=word):
                    yield event

        @property
        def model_name(self) -> str:
            return self._model_name

    stream = WordStream(ModelRequestParameters(), ['one ', 'two'])
    events = [event async for event in stream]

    assert (stream.model_request_parameters, stream.final_result_event, len(events)) == (
        ModelRequestParameters(),
        FinalResultEvent(tool_name=None, tool_call_id=None),
        4,
    )
    assert stream.get() == ModelResponse(
        parts=[TextPart(content='one two')], model_name='words', timestamp=started, state='complete'
    )


async def test_a_subclass_timestamp_property_is_the_timestamp_of_the_response() -> None:
    from collections.abc import AsyncIterator
    from datetime import datetime, timezone

    fixed = datetime(2025, 5, 6, tzinfo=timezone.utc)

    class FixedTimeStream(StreamedResponse):
        async def _get_event_iterator(self) -> AsyncIterator[Any]:
            for event in self._parts_manager.handle_text_delta(vendor_part_id=0, content='x'):
                yield event

        @property
        def model_name(self) -> str:
            return 'fixed'

        @property
        def timestamp(self) -> datetime:
            return fixed

    stream = FixedTimeStream(ModelRequestParameters())

    assert (stream.get().timestamp, stream.get().state) == (fixed, 'incomplete')


async def test_a_dataclass_subclass_with_its_own_post_init_still_has_a_timestamp_and_parts() -> None:
    from collections.abc import AsyncIterator
    from dataclasses import dataclass

    @dataclass
    class PreparedStream(StreamedResponse):
        text: str

        def __post_init__(self) -> None:  # does not call the base's
            self.text = self.text.upper()

        async def _get_event_iterator(self) -> AsyncIterator[Any]:
            for event in self._parts_manager.handle_text_delta(vendor_part_id=0, content=self.text):
                yield event

        @property
        def model_name(self) -> str:
            return 'prepared'

    stream = PreparedStream(ModelRequestParameters(), 'hi')
    _ = [event async for event in stream]
    response = stream.get()

    assert (response.parts, response.timestamp is stream.timestamp) == ([TextPart(content='HI')], True)


async def test_the_provider_details_a_stream_sets_are_in_its_response() -> None:
    class Detailed(StreamedResponse):
        async def _get_event_iterator(self) -> Any:
            yield self._parts_manager.handle_part(vendor_part_id=0, part=TextPart('hi'))
            self.finish_reason = 'content_filter'
            self.provider_details = {'finish_reason': 'content_filter'}

        @property
        def model_name(self) -> str:
            return 'detailed'

        @property
        def provider_name(self) -> str:
            return 'test'

        @property
        def provider_url(self) -> str:
            return 'https://test.example'

    stream = Detailed(ModelRequestParameters())
    assert stream.get().provider_details is None
    async for _ in stream:
        pass
    response = stream.get()
    assert (response.finish_reason, response.provider_details) == (
        'content_filter',
        {'finish_reason': 'content_filter'},
    )
