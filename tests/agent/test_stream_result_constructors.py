"""`StreamedRunResult`, `StreamedRunResultSync` and `AgentStream` built by hand with pydantic-ai 2.x's keyword
constructors (as 2.x's own tests and code that wraps a run do), next to the way `Agent.run_stream` makes them."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, get_args

import pytest

from edgewise.agent import Agent, AgentRunResult, UsageLimitExceeded, UserError
from edgewise.agent._agent_graph import GraphAgentState
from edgewise.agent._output import TextOutputProcessor, TextOutputSchema
from edgewise.agent._warnings import PydanticAIDeprecationWarning
from edgewise.agent.capabilities import CombinedCapability
from edgewise.agent.messages import (
    AgentStreamEvent,
    EnqueuedMessagesEvent,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    PartStartEvent,
    TextPart,
)
from edgewise.agent.models import CompletedStreamedResponse, ModelRequestParameters
from edgewise.agent.models.test import TestModel
from edgewise.agent.result import AgentStream, StreamedRunResult, StreamedRunResultSync
from edgewise.agent.tool_manager import ToolManager
from edgewise.agent.tools import RunContext
from edgewise.agent.toolsets import FunctionToolset
from edgewise.agent.usage import RequestUsage, RunUsage, UsageLimits

pytestmark = pytest.mark.anyio


def text_schema() -> TextOutputSchema[str]:
    return TextOutputSchema[str](
        text_processor=TextOutputProcessor(), allows_deferred_tools=False, allows_image=False, allows_none=False
    )


def run_context(**fields: Any) -> RunContext[None]:
    return RunContext(deps=None, model=TestModel(), usage=RunUsage(requests=1), **fields)


def agent_stream(
    text: str = 'hello world', *, ctx: RunContext[None] | None = None, **extra: Any
) -> AgentStream[None, str]:
    """An `AgentStream` made as pydantic-ai 2.x's dataclass is: every field by its keyword."""
    response = CompletedStreamedResponse(
        ModelResponse(parts=[TextPart(text)], model_name='test', usage=RequestUsage(output_tokens=3)),
        model_request_parameters=ModelRequestParameters(allow_text_output=True),
        replay_events=True,
    )
    return AgentStream(
        _raw_stream_response=response,
        _output_schema=text_schema(),
        _model_request_parameters=ModelRequestParameters(),
        _output_validators=[],
        _run_ctx=ctx or run_context(run_id='run-1', conversation_id='conv-1', metadata={'source': 'run-context'}),
        _usage_limits=extra.pop('_usage_limits', None),
        _tool_manager=ToolManager(toolset=FunctionToolset()),
        _root_capability=CombinedCapability([]),
        **extra,
    )


async def finished_run(metadata: dict[str, Any] | None = None) -> AgentRunResult[str]:
    return await Agent(TestModel(custom_output_text='final'), metadata=metadata).run('hi')


def request() -> ModelRequest:
    return ModelRequest.user_text_prompt('hi')


# -- AgentStream ----------------------------------------------------------------------------------------------------


async def test_agent_stream_from_keywords_reads_the_response() -> None:
    stream = agent_stream()

    assert [text async for text in stream.stream_text(debounce_by=None)] == ['hello world']
    assert await stream.get_output() == 'hello world'
    assert stream.response.parts == [TextPart('hello world')]
    assert stream.run_id == 'run-1'
    assert stream.conversation_id == 'conv-1'
    assert stream.usage.requests == 2  # the run's request so far, and this one
    assert stream.usage.output_tokens == 3


async def test_agent_stream_from_keywords_takes_metadata_from_the_run_context() -> None:
    assert agent_stream().metadata == {'source': 'run-context'}


async def test_agent_stream_metadata_getter_wins_over_the_run_context() -> None:
    assert agent_stream(_metadata_getter=lambda: {'source': 'getter'}).metadata == {'source': 'getter'}


async def test_agent_stream_without_run_ids_gets_ids_of_its_own() -> None:
    stream = agent_stream(ctx=run_context())

    assert stream.run_id
    assert stream.conversation_id
    assert stream.metadata is None


async def test_agent_stream_takes_the_buffered_events_first() -> None:
    buffered: list[AgentStreamEvent] = [EnqueuedMessagesEvent(enqueue_id='queued', messages=())]
    stream = agent_stream(_event_stream_buffer_getter=lambda: buffered, _max_tokens_getter=lambda: 100)

    events: list[object] = [event async for event in stream]

    assert events[0] == EnqueuedMessagesEvent(enqueue_id='queued', messages=())
    assert isinstance(events[1], PartStartEvent)
    assert buffered == []


async def test_agent_stream_from_keywords_checks_the_token_limits() -> None:
    stream = agent_stream(_usage_limits=UsageLimits(output_tokens_limit=1))

    with pytest.raises(UsageLimitExceeded, match='output_tokens_limit'):
        await stream.get_output()


def test_agent_stream_needs_a_response_and_a_context() -> None:
    with pytest.raises(TypeError, match='streamed response and the run context'):
        AgentStream()  # type: ignore[call-overload]


def test_agent_stream_refuses_both_forms_at_once() -> None:
    stream = agent_stream()
    with pytest.raises(TypeError, match="either a response and a run's context, or pydantic-ai's keywords"):
        AgentStream(stream.raw_response, _run_ctx=run_context())  # type: ignore[call-overload]


# -- StreamedRunResult of a finished run ----------------------------------------------------------------------------


async def test_streamed_run_result_of_a_run_result_answers_from_it() -> None:
    run = await finished_run(metadata={'from': 'run-result'})
    streamed = StreamedRunResult(all_messages=run.all_messages(), new_message_index=1, run_result=run)

    assert isinstance(streamed, StreamedRunResult)
    assert repr(streamed).endswith(f'_on_complete=None, _run_result={run!r}, is_complete=False)')
    assert streamed.metadata == {'from': 'run-result'}
    assert streamed.run_id == run.run_id
    assert streamed.conversation_id == run.conversation_id
    assert streamed.usage == run.usage
    assert streamed.response == run.response
    assert streamed.timestamp == run.timestamp
    assert streamed.all_messages() == run.all_messages()
    assert streamed.new_messages() == run.all_messages()[1:]
    assert await streamed.validate_response_output(run.response) == 'final'
    assert not streamed.is_complete
    assert await streamed.get_output() == 'final'
    assert streamed.is_complete
    assert repr(streamed).endswith('is_complete=True)')


async def test_streamed_run_result_of_a_run_result_streams_its_output_once() -> None:
    run = await finished_run()

    texts = StreamedRunResult(run.all_messages(), 0, run_result=run)
    assert [text async for text in texts.stream_text()] == ['final']
    assert texts.is_complete

    outputs = StreamedRunResult(run.all_messages(), 0, run_result=run)
    assert [output async for output in outputs.stream_output()] == ['final']
    assert outputs.is_complete

    responses = StreamedRunResult(run.all_messages(), 0, run_result=run)
    assert [response async for response in responses.stream_response()] == [run.response]
    assert responses.is_complete
    assert responses.all_messages() == run.all_messages()  # a finished run's response is in the messages already


async def test_streamed_run_result_of_a_structured_run_result_has_no_text() -> None:
    run = await Agent(TestModel(), output_type=int).run('hi')
    streamed = StreamedRunResult(run.all_messages(), 0, run_result=run)

    with pytest.raises(UserError, match=r'stream_text\(\) can only be used with text responses'):
        [text async for text in streamed.stream_text()]


async def test_cancelling_a_finished_run_result_only_marks_it_cancelled() -> None:
    run = await finished_run()
    streamed = StreamedRunResult(run.all_messages(), 0, run_result=run)

    await streamed.cancel()

    assert streamed.cancelled
    assert not streamed.is_complete
    assert streamed.all_messages() == run.all_messages()


def test_a_run_result_without_run_state_has_no_ids() -> None:
    state = GraphAgentState(metadata={'from': 'state'})
    state.message_history.append(ModelResponse(parts=[TextPart('final')]))
    with_state = StreamedRunResult(all_messages=[], new_message_index=0, run_result=AgentRunResult('x', _state=state))
    assert with_state.run_id == state.run_id
    assert with_state.metadata == {'from': 'state'}

    streamed = StreamedRunResult(all_messages=[], new_message_index=0, run_result=AgentRunResult('x'))
    with pytest.raises(UserError, match='has no `run_id`'):
        _ = streamed.run_id
    with pytest.raises(UserError, match='has no `conversation_id`'):
        _ = streamed.conversation_id


def test_output_tool_return_content_is_refused() -> None:
    streamed = StreamedRunResult(all_messages=[], new_message_index=0, run_result=AgentRunResult('x'))

    with pytest.raises(UserError, match='`output_tool_return_content` is not supported'):
        streamed.all_messages(output_tool_return_content='done')
    with pytest.raises(UserError, match='`output_tool_return_content` is not supported'):
        streamed.new_messages_json(output_tool_return_content='done')


# -- StreamedRunResult of an AgentStream ----------------------------------------------------------------------------


async def test_streamed_run_result_of_a_stream_records_the_response_and_completes_once() -> None:
    completions: list[str] = []

    async def on_complete() -> None:
        completions.append('done')

    messages: list[ModelMessage] = [request()]
    streamed = StreamedRunResult(messages, 0, stream_response=agent_stream(), on_complete=on_complete)

    assert streamed.metadata == {'source': 'run-context'}
    assert [text async for text in streamed.stream_text(debounce_by=None)] == ['hello world']
    assert streamed.is_complete
    assert await streamed.get_output() == 'hello world'
    assert completions == ['done']
    recorded = streamed.all_messages()
    assert recorded is messages
    assert len(recorded) == 2
    assert isinstance(recorded[1], ModelResponse)
    assert recorded[1].parts == [TextPart('hello world')]
    assert (recorded[1].run_id, recorded[1].conversation_id) == ('run-1', 'conv-1')
    assert streamed.new_messages() == recorded
    assert streamed.run_id == 'run-1'
    assert streamed.conversation_id == 'conv-1'
    assert streamed.usage.output_tokens == 3
    assert streamed.timestamp == streamed.response.timestamp


async def test_streamed_run_result_of_a_stream_streams_output_and_responses() -> None:
    outputs = StreamedRunResult([request()], 1, stream_response=agent_stream())
    assert [output async for output in outputs.stream_output(debounce_by=None)][-1] == 'hello world'
    assert outputs.is_complete
    assert [m.parts for m in outputs.new_messages()] == [[TextPart('hello world')]]

    responses = StreamedRunResult([request()], 1, stream_response=agent_stream())
    snapshots = [response async for response in responses.stream_response(debounce_by=None)]
    assert snapshots[-1].parts == [TextPart('hello world')]
    assert responses.new_messages() == [snapshots[-1]]
    assert await responses.validate_response_output(snapshots[-1]) == 'hello world'


async def test_streamed_run_result_of_a_stream_gets_the_output() -> None:
    streamed = StreamedRunResult([request()], 1, stream_response=agent_stream('whole'))

    assert await streamed.get_output() == 'whole'
    assert streamed.is_complete
    assert [m.parts for m in streamed.new_messages()] == [[TextPart('whole')]]


async def test_cancelling_a_stream_records_its_response() -> None:
    streamed = StreamedRunResult([request()], 1, stream_response=agent_stream())

    await streamed.cancel()

    assert streamed.cancelled
    assert streamed.is_complete
    assert len(streamed.new_messages()) == 1


async def test_stream_responses_is_deprecated_but_pairs_the_snapshots() -> None:
    streamed = StreamedRunResult([request()], 1, stream_response=agent_stream())

    with pytest.warns(PydanticAIDeprecationWarning, match='stream_responses'):
        pairs = [pair async for pair in streamed.stream_responses(debounce_by=None)]

    assert pairs[-1][0].parts == [TextPart('hello world')]
    assert pairs[-1][1] is True


async def test_a_result_given_nothing_has_no_metadata_and_nothing_to_read() -> None:
    streamed: StreamedRunResult[None, str] = StreamedRunResult(
        all_messages=[], new_message_index=0, stream_response=None, on_complete=None
    )

    assert streamed.metadata is None
    with pytest.raises(UserError, match='neither a `stream_response` nor a `run_result`'):
        await streamed.get_output()
    with pytest.raises(UserError, match='neither a `stream_response` nor a `run_result`'):
        _ = streamed.response


# -- the way `Agent.run_stream` makes it, and the sync wrapper ------------------------------------------------------


async def test_a_result_made_from_an_agent_run_by_keyword_still_drives_the_run() -> None:
    agent = Agent(TestModel(custom_output_text='driven'))
    async with agent.iter('hi') as run:
        streamed = StreamedRunResult(agent_run=run)
        await streamed.start()
        assert await streamed.get_output() == 'driven'
        await streamed.aclose()
    assert type(streamed) is StreamedRunResult


async def test_given_results_need_no_start_or_close() -> None:
    run = await finished_run()
    streamed = StreamedRunResult(run.all_messages(), 0, run_result=run)

    await streamed.start()
    await streamed.aclose()

    assert await streamed.get_output() == 'final'


def test_sync_result_over_a_hand_made_result() -> None:
    run = Agent(TestModel(custom_output_text='final'), metadata={'sync': 'metadata'}).run_sync('hi')
    streamed = StreamedRunResult(all_messages=run.all_messages(), new_message_index=0, run_result=run)

    @asynccontextmanager
    async def run_stream_cm() -> AsyncIterator[StreamedRunResult[None, str]]:
        yield streamed

    with StreamedRunResultSync(run_stream_cm=run_stream_cm()) as sync_result:
        assert sync_result.metadata == {'sync': 'metadata'}
        assert sync_result.get_output() == 'final'
        assert sync_result.is_complete


def test_the_streamed_results_take_the_deps_type_then_the_output_type() -> None:
    # pydantic-ai's order (`StreamedRunResult[AgentDepsT, OutputDataT]`), subscripted at run time as annotations
    # that are evaluated (a pydantic model's field, `get_type_hints`) do.
    for cls in (StreamedRunResult, StreamedRunResultSync):
        assert [p.__name__ for p in cls.__dict__['__parameters__']] == ['AgentDepsT', 'OutputDataT']
    assert get_args(StreamedRunResult[None, str]) == (type(None), str)
    assert get_args(StreamedRunResultSync[None, int]) == (type(None), int)
