"""pydantic-ai 2.x's module paths and base classes: `_warnings`, `_agent_graph`, `_utils`, `run`, `agent.abstract`,
and `models.CompletedStreamedResponse`."""

from __future__ import annotations

import threading
import warnings
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from datetime import datetime, timezone
from typing import Any

import pytest

import edgewise.agent
from edgewise.agent import Agent, PydanticAIDeprecationWarning, RunContext, UsageLimits, _agent_graph, _utils, run
from edgewise.agent._loop import agent_run, nodes
from edgewise.agent._run import result as run_result
from edgewise.agent._run.state import GraphAgentState
from edgewise.agent.agent import AbstractAgent, WrapperAgent
from edgewise.agent.agent.abstract import AbstractAgent as AbstractAgentFromModule
from edgewise.agent.exceptions import CostCalculationFailedWarning, CostNotFoundWarning
from edgewise.agent.messages import (
    FinalResultEvent,
    ModelResponse,
    PartEndEvent,
    PartStartEvent,
    TextPart,
    ThinkingPart,
    ToolCallPart,
)
from edgewise.agent.models import CompletedStreamedResponse, ModelRequestParameters
from edgewise.agent.models.test import TestModel
from edgewise.agent.result import StreamedRunResultSync
from edgewise.agent.toolsets import AbstractToolset
from edgewise.agent.usage import RequestUsage

pytestmark = pytest.mark.anyio


# _warnings


def test_the_deprecation_warning_is_caught_as_a_deprecation_and_as_a_user_warning() -> None:
    assert issubclass(PydanticAIDeprecationWarning, DeprecationWarning)
    assert issubclass(PydanticAIDeprecationWarning, UserWarning)
    assert edgewise.agent.exceptions.PydanticAIDeprecationWarning is PydanticAIDeprecationWarning
    assert not issubclass(CostNotFoundWarning, DeprecationWarning)
    assert issubclass(CostCalculationFailedWarning, Warning)


def test_edgewise_deprecations_warn_with_it() -> None:
    with pytest.warns(PydanticAIDeprecationWarning, match='use `input_tokens_limit` instead'):
        assert UsageLimits(input_tokens_limit=3).request_tokens_limit == 3
    with pytest.warns(PydanticAIDeprecationWarning, match='use `edgewise.agent.NativeToolCallPart` instead'):
        assert edgewise.agent.BuiltinToolCallPart is edgewise.agent.NativeToolCallPart


# _agent_graph, run, _utils


def test_the_private_paths_hold_edgewise_own_classes() -> None:
    assert _agent_graph.ModelRequestNode is nodes.ModelRequestNode
    assert _agent_graph.CallToolsNode is nodes.CallToolsNode
    assert _agent_graph.UserPromptNode is nodes.UserPromptNode
    assert _agent_graph.GraphAgentState is GraphAgentState
    assert (run.AgentRun, run.AgentRunResult, run.AgentRunResultEvent) == (
        agent_run.AgentRun,
        run_result.AgentRunResult,
        run_result.AgentRunResultEvent,
    )
    assert edgewise.agent.Capability is edgewise.agent.capabilities.Capability


def test_some_holds_a_value_even_none() -> None:
    assert _utils.Some(None).value is None
    assert _utils.Some(1) == _utils.Some(1) != _utils.Some(2)


async def test_inside_disable_threads_sync_tools_run_on_the_event_loop_thread() -> None:
    threads: list[int] = []
    agent = Agent(TestModel())

    @agent.tool_plain
    def where() -> str:
        threads.append(threading.get_ident())
        return 'here'

    with _utils.disable_threads():
        await agent.run('hi')
    await agent.run('hi')
    assert threads[0] == threading.get_ident()
    assert threads[1] != threading.get_ident()


# AbstractAgent


class _EchoAgent(AbstractAgent[None, str]):
    """The smallest agent of one's own: everything abstract implemented, nothing else."""

    def __init__(self) -> None:
        self._name: str | None = None

    @property
    def name(self) -> str | None:
        return self._name

    @name.setter
    def name(self, value: str | None) -> None:
        self._name = value

    @property
    def deps_type(self) -> type[None]:
        return type(None)

    @property
    def output_type(self) -> type[str]:
        return str

    @property
    def event_stream_handler(self) -> None:
        return None

    @property
    def toolsets(self) -> Sequence[AbstractToolset[None]]:
        return []

    @asynccontextmanager
    async def iter(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        async with Agent(TestModel()).iter(*args, **kwargs) as agent_run:
            yield agent_run

    @contextmanager
    def override(self, *args: Any, **kwargs: Any) -> Iterator[None]:
        yield


async def test_agent_and_wrapper_agent_are_abstract_agents() -> None:
    agent = Agent(TestModel(), system_prompt='Be brief.')
    assert AbstractAgentFromModule is AbstractAgent
    assert isinstance(agent, AbstractAgent)
    assert isinstance(WrapperAgent(agent), AbstractAgent)
    assert await AbstractAgent.system_prompt_parts(agent) == []  # the default, called on any agent
    assert [part.content for part in await agent.system_prompt_parts()] == ['Be brief.']


async def test_an_agent_of_ones_own_implements_the_abstract_members() -> None:
    with pytest.raises(TypeError, match='abstract'):
        AbstractAgent()  # type: ignore[abstract]
    echo = _EchoAgent()
    echo.name = 'echo'
    assert (echo.name, echo.deps_type, echo.output_type, echo.event_stream_handler, echo.toolsets) == (
        'echo',
        type(None),
        str,
        None,
        [],
    )
    assert await echo.system_prompt_parts() == []
    with pytest.raises(NotImplementedError, match='_EchoAgent has no capabilities'):
        echo.root_capability  # noqa: B018
    with echo.override():
        async with echo.iter('hi') as agent_run:
            async for _ in agent_run:
                pass
    assert agent_run.result is not None
    assert agent_run.result.output == 'success (no tool calls)'


# CompletedStreamedResponse

_PARAMS = ModelRequestParameters(allow_text_output=True)


def _response() -> ModelResponse:
    return ModelResponse(
        parts=[TextPart('Hello'), ThinkingPart('hmm'), ToolCallPart('get', '{"a": 1}', tool_call_id='c1')],
        usage=RequestUsage(input_tokens=3, output_tokens=4),
        model_name='m',
        provider_name='p',
        provider_url='https://p.example',
        timestamp=datetime(2026, 1, 2, tzinfo=timezone.utc),
    )


async def test_a_completed_response_streams_nothing_by_default_and_forwards_its_metadata() -> None:
    response = _response()
    stream = CompletedStreamedResponse(response, model_request_parameters=_PARAMS)
    assert [event async for event in stream] == []
    assert stream.get() is response
    assert (stream.model_name, stream.provider_name, stream.provider_url, stream.timestamp) == (
        'm',
        'p',
        'https://p.example',
        response.timestamp,
    )
    assert stream.usage == RequestUsage(input_tokens=3, output_tokens=4)
    await stream.cancel()
    await stream.cancel()
    assert stream.cancelled


async def test_replaying_a_completed_response_gives_each_whole_part_once() -> None:
    stream = CompletedStreamedResponse(_response(), model_request_parameters=_PARAMS, replay_events=True)
    events = [event async for event in stream]
    assert [type(event) for event in events] == [
        PartStartEvent,
        FinalResultEvent,
        PartEndEvent,
        PartStartEvent,
        PartEndEvent,
        PartStartEvent,
        PartEndEvent,
    ]
    starts = [event.part for event in events if isinstance(event, PartStartEvent)]
    assert starts == list(_response().parts)
    replayed = CompletedStreamedResponse(_response(), model_request_parameters=_PARAMS, replay_events=events)
    assert [event async for event in replayed] == events
    assert [event async for event in replayed] == []  # one pass, as any stream


async def test_the_1x_spellings_of_completed_streamed_response_warn() -> None:
    import edgewise.agent.models.wrapper as wrapper

    with pytest.warns(PydanticAIDeprecationWarning, match='has moved from `edgewise.agent.models.wrapper`'):
        assert wrapper.CompletedStreamedResponse is CompletedStreamedResponse
    with pytest.raises(AttributeError, match='no attribute'):
        wrapper.NoSuchName  # noqa: B018
    response = _response()
    with pytest.warns(PydanticAIDeprecationWarning, match='pass the response first'):
        stream = CompletedStreamedResponse(_PARAMS, response)
    assert stream.get() is response
    with pytest.warns(PydanticAIDeprecationWarning, match='`events` is deprecated'):
        stream = CompletedStreamedResponse(response, model_request_parameters=_PARAMS, events=True)
    assert len([event async for event in stream]) == 7
    with pytest.warns(PydanticAIDeprecationWarning, match='`events` is deprecated'):
        stream = CompletedStreamedResponse(response, model_request_parameters=_PARAMS, replay_events=False, events=True)
    assert [event async for event in stream] == []  # the explicit `replay_events` wins
    with pytest.raises(TypeError, match='takes a `ModelResponse`'):
        CompletedStreamedResponse(response)


async def test_run_context_of_no_run_has_no_usage_limits() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        ctx = RunContext(deps=None, model=TestModel(), usage=edgewise.agent.RunUsage())
    assert ctx.usage_limits is None


# StreamedRunResultSync


def test_a_sync_stream_is_a_context_manager_that_closes_the_run() -> None:
    agent = Agent(TestModel(custom_output_text='fine'))
    with agent.run_stream_sync('hi') as result:
        assert list(result.stream_text(debounce_by=None))[-1] == 'fine'
    assert result.is_complete
    with agent.run_stream_sync('hi') as unread:  # left unread: the block's end stops the run
        pass
    assert not unread.is_complete


async def test_a_sync_stream_refuses_to_start_inside_an_event_loop() -> None:
    with pytest.raises(RuntimeError, match='from within an async context or a running event loop; use `run_stream`'):
        Agent(TestModel()).run_stream_sync('hi')


async def test_a_sync_stream_takes_the_run_stream_context_manager_not_an_entered_result() -> None:
    agent = Agent(TestModel())
    async with agent.run_stream('hi') as entered:
        with pytest.raises(TypeError, match='now takes the `run_stream\\(\\)` context manager'):
            StreamedRunResultSync(entered)  # type: ignore[arg-type]
        await entered.get_output()


def test_a_sync_stream_takes_the_run_stream_context_manager_itself() -> None:
    agent = Agent(TestModel(custom_output_text='direct'))
    with StreamedRunResultSync(agent.run_stream('hi')) as result:
        assert result.get_output() == 'direct'
