"""`DeferredToolRequestsEvent` and `DeferredToolResultsEvent` (pydantic-ai 2.x): the batch of deferred calls of a
response, and the answers a `HandleDeferredToolCalls` handler gave to it inside the run."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import TypeAdapter

from edgewise.agent import (
    Agent,
    AgentStreamEvent,
    ApprovalRequired,
    CallDeferred,
    DeferredToolRequests,
    DeferredToolRequestsEvent,
    DeferredToolResults,
    DeferredToolResultsEvent,
    RunContext,
    ToolApproved,
    ToolDenied,
)
from edgewise.agent.capabilities import HandleDeferredToolCalls
from edgewise.agent.messages import (
    FunctionToolResultEvent,
    ModelMessage,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from edgewise.agent.models.function import AgentInfo, FunctionModel

pytestmark = pytest.mark.anyio


def _model(*calls: ToolCallPart) -> FunctionModel:
    def llm(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(list(calls)) if len(messages) == 1 else ModelResponse([TextPart('done')])

    return FunctionModel(llm)


def _agent(*capabilities: Any) -> Agent[None, Any]:
    agent: Agent[None, Any] = Agent(
        _model(
            ToolCallPart('plain', {}, 'c1'),
            ToolCallPart('approve_me', {}, 'c2'),
            ToolCallPart('external', {}, 'c3'),
        ),
        capabilities=list(capabilities),
        output_type=[str, DeferredToolRequests],
    )

    @agent.tool_plain
    def plain() -> str:
        return 'plain ran'

    @agent.tool_plain
    def approve_me() -> str:
        raise ApprovalRequired({'why': 'costly'})

    @agent.tool_plain
    def external() -> str:
        raise CallDeferred

    return agent


async def _events(agent: Agent[None, Any]) -> list[Any]:
    events: list[Any] = []
    async with agent.iter('go') as run:
        async for node in run:
            if agent.is_call_tools_node(node):
                async with node.stream(run.ctx) as stream:
                    events.extend([e async for e in stream])
    return events


async def test_a_run_ending_on_deferred_calls_gives_the_batch_after_the_other_results() -> None:
    events = await _events(_agent())
    assert [e.event_kind for e in events] == [
        'function_tool_call',
        'function_tool_call',
        'function_tool_call',
        'function_tool_result',
        'deferred_tool_requests',
    ]
    batch = events[-1]
    assert isinstance(batch, DeferredToolRequestsEvent)
    assert [c.tool_call_id for c in batch.requests.calls] == ['c3']
    assert [c.tool_call_id for c in batch.requests.approvals] == ['c2']
    assert batch.requests.metadata == {'c2': {'why': 'costly'}}


async def test_a_handler_answering_gives_its_answers_then_the_answered_calls_results() -> None:
    def answer(ctx: RunContext[None], requests: DeferredToolRequests) -> DeferredToolResults:
        return requests.build_results(approvals={'c2': ToolDenied('too costly')}, calls={'c3': 'worker result'})

    events = await _events(_agent(HandleDeferredToolCalls(answer)))
    assert [e.event_kind for e in events] == [
        'function_tool_call',
        'function_tool_call',
        'function_tool_call',
        'function_tool_result',
        'deferred_tool_requests',
        'deferred_tool_results',
        'function_tool_result',
        'function_tool_result',
    ]
    answers = events[5]
    assert isinstance(answers, DeferredToolResultsEvent)
    assert answers.results.approvals == {'c2': ToolDenied('too costly')}
    assert answers.results.calls == {'c3': 'worker result'}
    results = [e.part for e in events if isinstance(e, FunctionToolResultEvent)]
    assert [(p.tool_call_id, p.content) for p in results] == [
        ('c1', 'plain ran'),
        ('c2', 'too costly'),
        ('c3', 'worker result'),
    ]
    assert all(isinstance(p, ToolReturnPart) for p in results)


async def test_a_handler_answering_nothing_gives_only_the_batch() -> None:
    def decline(ctx: RunContext[None], requests: DeferredToolRequests) -> None:
        return None

    events = await _events(_agent(HandleDeferredToolCalls(decline)))
    assert [e.event_kind for e in events][-2:] == ['function_tool_result', 'deferred_tool_requests']


async def test_no_deferred_calls_give_no_deferred_events() -> None:
    agent: Agent[None, str] = Agent(_model(ToolCallPart('plain', {}, 'c1')))

    @agent.tool_plain
    def plain() -> str:
        return 'ran'

    events = await _events(agent)
    assert [e.event_kind for e in events] == ['function_tool_call', 'function_tool_result']


def test_the_events_round_trip_as_agent_stream_events() -> None:
    adapter: TypeAdapter[Any] = TypeAdapter(AgentStreamEvent)
    requests = DeferredToolRequestsEvent(
        DeferredToolRequests(
            calls=[ToolCallPart('external', {'x': 1}, 'c3')],
            approvals=[ToolCallPart('approve_me', {}, 'c2')],
            metadata={'c2': {'why': 'costly'}},
        )
    )
    stored = adapter.dump_python(requests, mode='json')
    assert stored['event_kind'] == 'deferred_tool_requests'
    assert adapter.validate_python(stored) == requests
    results = DeferredToolResultsEvent(
        DeferredToolResults(approvals={'c2': ToolApproved(override_args={'x': 2})}, calls={'c3': 'value'})
    )
    stored = adapter.dump_python(results, mode='json')
    assert stored['event_kind'] == 'deferred_tool_results'
    assert adapter.validate_python(stored) == results
    assert repr(requests).startswith('DeferredToolRequestsEvent(requests=DeferredToolRequests(')
