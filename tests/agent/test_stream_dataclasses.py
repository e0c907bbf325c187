"""`AgentStream` and `StreamedRunResult` are dataclasses, as in pydantic-ai 2.68: `dataclasses.fields` names 2.68's
fields in its order, `dataclasses.replace` makes another one of the fields, `==` compares them (so neither is
hashable) and the repr shows the fields 2.68's repr shows. `StreamedRunResultSync` is a plain class there, and here."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from edgewise.agent import Agent, AgentRunResult, ModelRequestNode, UserError
from edgewise.agent._output import TextOutputProcessor, TextOutputSchema
from edgewise.agent.capabilities import CombinedCapability
from edgewise.agent.messages import ModelMessage, ModelRequest, ModelResponse, TextPart
from edgewise.agent.models import CompletedStreamedResponse, ModelRequestParameters
from edgewise.agent.models.test import TestModel
from edgewise.agent.result import AgentStream, StreamedRunResult, StreamedRunResultSync
from edgewise.agent.tool_manager import ToolManager
from edgewise.agent.tools import RunContext
from edgewise.agent.toolsets import FunctionToolset
from edgewise.agent.usage import RunUsage, UsageLimits

from ._streaming_helpers import streamed

pytestmark = pytest.mark.anyio

# pydantic-ai 2.68's fields, in its order (those of its constructors; `AgentStream`'s `init=False` fields hold 2.68's
# own machinery and are not matched).
AGENT_STREAM_FIELDS = [
    '_raw_stream_response',
    '_output_schema',
    '_model_request_parameters',
    '_output_validators',
    '_run_ctx',
    '_carried_workspace_ref',
    '_model_id',
    '_usage_limits',
    '_tool_manager',
    '_root_capability',
    '_metadata_getter',
    '_event_stream_buffer_getter',
    '_max_tokens_getter',
]
AGENT_STREAM_HIDDEN = [
    '_run_ctx',  # (shown by 2.68: its deps may hold secrets)
    '_carried_workspace_ref',
    '_model_id',
    '_tool_manager',  # (shown by 2.68: it holds the run context)
    '_metadata_getter',
    '_event_stream_buffer_getter',
    '_max_tokens_getter',
]
RESULT_FIELDS = [
    '_all_messages',
    '_new_message_index',
    '_stream_response',
    '_on_complete',
    '_run_result',
    'is_complete',
]


def response_stream(text: str = 'hello') -> CompletedStreamedResponse:
    return CompletedStreamedResponse(
        ModelResponse(parts=[TextPart(text)], model_name='test'),
        model_request_parameters=ModelRequestParameters(allow_text_output=True),
        replay_events=True,
    )


def agent_stream(raw: CompletedStreamedResponse | None = None, **extra: Any) -> AgentStream[Any, str]:
    """An `AgentStream` made with pydantic-ai 2.x's keywords."""
    fields: dict[str, Any] = {
        '_raw_stream_response': raw or response_stream(),
        '_output_schema': TextOutputSchema[str](
            text_processor=TextOutputProcessor(), allows_deferred_tools=False, allows_image=False, allows_none=False
        ),
        '_model_request_parameters': ModelRequestParameters(),
        '_output_validators': [],
        '_run_ctx': RunContext(deps=None, model=TestModel(), usage=RunUsage(), run_id='run-1', conversation_id='c-1'),
        '_usage_limits': None,
        '_tool_manager': ToolManager(toolset=FunctionToolset()),
        '_root_capability': CombinedCapability([]),
    }
    return AgentStream(**{**fields, **extra})


def values(instance: Any) -> dict[str, Any]:
    return {field.name: getattr(instance, field.name) for field in dataclasses.fields(instance)}


# -- the classes ----------------------------------------------------------------------------------------------------


def test_agent_stream_is_a_keyword_only_dataclass_with_the_fields_of_2_68() -> None:
    assert dataclasses.is_dataclass(AgentStream)
    fields = dataclasses.fields(AgentStream)
    assert [f.name for f in fields] == AGENT_STREAM_FIELDS
    assert [f.name for f in fields if not f.repr] == AGENT_STREAM_HIDDEN
    assert all(f.kw_only for f in fields)
    params = AgentStream.__dataclass_params__  # type: ignore[attr-defined]
    assert (params.eq, params.frozen, params.order) == (True, False, False)
    assert AgentStream.__hash__ is None


def test_streamed_run_result_is_a_dataclass_with_the_fields_of_2_68() -> None:
    assert dataclasses.is_dataclass(StreamedRunResult)
    fields = dataclasses.fields(StreamedRunResult)
    assert [f.name for f in fields] == RESULT_FIELDS
    assert [f.name for f in fields if not f.init] == ['is_complete']
    assert [f.name for f in fields if not f.repr] == ['_all_messages']  # (2.68 shows the whole history)
    assert fields[-1].default is False
    assert StreamedRunResult.__match_args__ == tuple(RESULT_FIELDS[:-1])
    params = StreamedRunResult.__dataclass_params__  # type: ignore[attr-defined]
    assert (params.eq, params.frozen, params.order) == (True, False, False)
    assert StreamedRunResult.__hash__ is None


def test_streamed_run_result_sync_is_a_plain_class_as_in_2_68() -> None:
    assert not dataclasses.is_dataclass(StreamedRunResultSync)


# -- AgentStream ----------------------------------------------------------------------------------------------------


async def test_an_agent_stream_made_with_keywords_keeps_them_as_its_fields() -> None:
    raw = response_stream()
    limits = UsageLimits(request_limit=3)
    stream = agent_stream(raw, _usage_limits=limits, _model_id='test:model')

    fields = values(stream)
    assert fields['_raw_stream_response'] is raw
    assert fields['_usage_limits'] is limits
    assert fields['_model_id'] == 'test:model'
    assert fields['_run_ctx'].run_id == 'run-1'
    assert fields['_carried_workspace_ref'] is None
    assert fields['_metadata_getter'] is None
    assert fields['_event_stream_buffer_getter']() == []
    assert fields['_max_tokens_getter']() is None


async def test_an_agent_streams_repr_shows_the_fields_2_68_shows() -> None:
    stream = agent_stream(_model_id='hidden-model-id')
    text = repr(stream)
    assert text.startswith(f'AgentStream(_raw_stream_response={stream._raw_stream_response!r}, _output_schema=')
    assert text.endswith(f', _root_capability={stream._root_capability!r})')
    shown = [name for name in AGENT_STREAM_FIELDS if f'{name}=' in text]
    assert shown == [name for name in AGENT_STREAM_FIELDS if name not in AGENT_STREAM_HIDDEN]
    assert 'hidden-model-id' not in text


async def test_agent_streams_compare_by_their_fields_and_are_not_hashable() -> None:
    stream = agent_stream()
    assert stream == stream
    assert stream != agent_stream()  # another response stream
    with pytest.raises(TypeError, match='unhashable'):
        hash(stream)


async def test_replace_makes_another_stream_of_the_same_fields_which_reads_the_response() -> None:
    stream = agent_stream()
    other = dataclasses.replace(stream, _model_id='other-model')

    assert isinstance(other, AgentStream)
    assert other is not stream
    assert values(other) == {**values(stream), '_model_id': 'other-model'}
    assert other != stream
    assert dataclasses.replace(stream) == stream
    assert await other.get_output() == 'hello'
    assert other.run_id == 'run-1'


async def test_a_stream_a_run_makes_has_the_fields_of_its_run() -> None:
    agent = Agent(streamed(['Hel', 'lo']), name='streamer')
    limits = UsageLimits(request_limit=5)
    async with agent.iter('go', usage_limits=limits, model_settings={'max_tokens': 77}) as run:
        node = await run.next()
        assert isinstance(node, ModelRequestNode)
        async with node.stream(run.ctx) as stream:
            fields = values(stream)
            assert fields['_raw_stream_response'] is stream.raw_response
            assert fields['_model_request_parameters'] is stream.raw_response.model_request_parameters
            assert fields['_usage_limits'] is limits
            assert fields['_run_ctx'].run_id == run.run_id
            assert fields['_run_ctx'].messages == run.all_messages()
            assert fields['_max_tokens_getter']() == 77
            assert fields['_event_stream_buffer_getter']() == []
            assert repr(stream).startswith('AgentStream(_raw_stream_response=')
            # another stream of the same response, with the run's fields
            copy = dataclasses.replace(stream)
            assert copy == stream
            assert await copy.get_output() == 'Hello'
            assert copy.run_id == run.run_id


# -- StreamedRunResult ----------------------------------------------------------------------------------------------


async def test_a_run_streams_result_has_the_fields_of_2_68_from_its_run() -> None:
    history: list[ModelMessage] = [ModelRequest.user_text_prompt('before'), ModelResponse(parts=[TextPart('ok')])]
    agent = Agent(streamed(['Hel', 'lo']))
    async with agent.run_stream('hi', message_history=history) as result:
        assert not result.is_complete
        assert values(result)['is_complete'] is False
        assert await result.get_output() == 'Hello'
        fields = values(result)

    assert fields['_all_messages'] == result.all_messages()
    assert fields['_new_message_index'] == 2
    stream = fields['_stream_response']
    assert isinstance(stream, AgentStream)
    assert stream.response.parts == [TextPart('Hello')]
    assert fields['_on_complete'] is None
    assert fields['_run_result'] is None
    assert fields['is_complete'] is True
    shown = ', '.join(f'{name}={value!r}' for name, value in fields.items() if name != '_all_messages')
    assert repr(result) == f'StreamedRunResult({shown})'


async def test_a_run_streams_result_is_not_hashable_and_equals_itself_only() -> None:
    agent = Agent(TestModel(custom_output_text='one'))
    async with agent.run_stream('hi') as first:
        await first.get_output()
    async with agent.run_stream('hi') as second:
        await second.get_output()
    assert first == first
    assert first != second  # other messages, another stream
    with pytest.raises(TypeError, match='unhashable'):
        hash(first)


async def test_replace_on_a_run_streams_result_gives_a_result_of_its_fields() -> None:
    agent = Agent(TestModel(custom_output_text='done'))
    async with agent.run_stream('hi') as result:
        assert await result.get_output() == 'done'
    messages = result.all_messages()
    stream = result._stream_response
    assert stream is not None
    # a copy of the messages: a result made of a stream adds the response to the list it is given
    copy = dataclasses.replace(result, _all_messages=messages[:-1])

    assert isinstance(copy, StreamedRunResult)
    assert type(copy) is not type(result)
    assert not copy.is_complete
    assert await copy.get_output() == 'done'
    assert copy.is_complete
    assert copy.all_messages() == messages
    assert result.all_messages() == messages  # the run's own are left as they were


async def test_results_made_with_2x_arguments_compare_by_their_fields() -> None:
    run = await Agent(TestModel(custom_output_text='final')).run('hi')
    messages = run.all_messages()
    made = StreamedRunResult(messages, 1, run_result=run)

    assert made == StreamedRunResult(messages, 1, run_result=run)
    assert made != StreamedRunResult(messages, 0, run_result=run)
    assert values(made) == {
        '_all_messages': messages,
        '_new_message_index': 1,
        '_stream_response': None,
        '_on_complete': None,
        '_run_result': run,
        'is_complete': False,
    }
    await made.get_output()
    assert made.is_complete
    assert made != StreamedRunResult(messages, 1, run_result=run)  # `is_complete` is compared too
    assert repr(made) == (
        'StreamedRunResult(_new_message_index=1, _stream_response=None, '
        f'_on_complete=None, _run_result={run!r}, is_complete=True)'
    )


async def test_replace_changes_the_fields_given_and_refuses_is_complete() -> None:
    run = await Agent(TestModel(custom_output_text='final')).run('hi')
    made = StreamedRunResult(run.all_messages(), 1, run_result=run)

    whole = dataclasses.replace(made, _new_message_index=0)
    assert isinstance(whole, StreamedRunResult)
    assert whole.new_messages() == run.all_messages()
    assert made.new_messages() == run.all_messages()[1:]
    with pytest.raises(ValueError, match='is_complete'):
        dataclasses.replace(made, is_complete=True)


async def test_replace_with_a_stream_reads_the_stream_given() -> None:
    run = await Agent(TestModel(custom_output_text='final')).run('hi')
    made = StreamedRunResult(run.all_messages(), 1, run_result=run)
    other = dataclasses.replace(made, _run_result=None, _stream_response=agent_stream(response_stream('streamed')))
    assert await other.get_output() == 'streamed'
    nothing = dataclasses.replace(made, _run_result=None)
    with pytest.raises(UserError, match='neither a `stream_response` nor a `run_result`'):
        await nothing.get_output()
    assert isinstance(other.result, AgentRunResult)


async def test_the_reprs_leave_out_the_run_deps_and_history() -> None:
    agent = Agent(streamed(['Hel', 'lo']), deps_type=dict)
    async with agent.run_stream('the secret question', deps={'api_key': 'sk-SECRET'}) as result:
        stream = result._stream_response
        assert stream is not None
        assert 'sk-SECRET' not in repr(stream)
        assert 'sk-SECRET' not in repr(result)
        assert 'the secret question' not in repr(result)
        assert await result.get_output() == 'Hello'
