"""`HandleDeferredToolCalls`: deferred tool calls answered inside the run by a capability, not by ending it."""

from __future__ import annotations

from typing import Any

import pytest

from edgewise.agent import (
    Agent,
    ApprovalRequired,
    CallDeferred,
    DeferredToolRequests,
    DeferredToolResults,
    RunContext,
    ToolApproved,
    ToolDenied,
)
from edgewise.agent.capabilities import AbstractCapability, HandleDeferredToolCalls
from edgewise.agent.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart
from edgewise.agent.models.function import AgentInfo, FunctionModel

pytestmark = pytest.mark.anyio

CALLS = [
    ToolCallPart('delete_file', {'path': 'a.txt'}, tool_call_id='c1'),
    ToolCallPart('update_file', {'path': '.env'}, tool_call_id='c2'),
    ToolCallPart('send_to_worker', {'task': 'build'}, tool_call_id='c3'),
]


def answering_model() -> FunctionModel:
    """Calls the three tools, then answers with what came back, one line per part."""

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(list(CALLS))
        last = messages[-1]
        assert isinstance(last, ModelRequest)
        return ModelResponse([TextPart('\n'.join(f'{p.tool_call_id}: {p.content}' for p in last.parts))])  # type: ignore[union-attr]

    return FunctionModel(answer)


def file_agent(*capabilities: AbstractCapability[None], output_type: Any = str) -> tuple[Agent[None, Any], list[str]]:
    agent: Agent[None, Any] = Agent(answering_model(), capabilities=list(capabilities), output_type=output_type)
    ran: list[str] = []

    @agent.tool_plain(requires_approval=True)
    def delete_file(path: str) -> str:
        ran.append(f'delete {path}')
        return f'deleted {path}'

    @agent.tool
    def update_file(ctx: RunContext[None], path: str) -> str:
        if path == '.env' and not ctx.tool_call_approved:
            raise ApprovalRequired
        ran.append(f'update {path}')
        return f'updated {path}'

    @agent.tool_plain
    async def send_to_worker(task: str) -> str:
        raise CallDeferred

    return agent, ran


def deny_deletes(ctx: RunContext[None], requests: DeferredToolRequests) -> DeferredToolResults:
    approvals: dict[str, bool | ToolApproved | ToolDenied] = {
        call.tool_call_id: ToolDenied('no deleting') if call.tool_name == 'delete_file' else True
        for call in requests.approvals
    }
    calls = {call.tool_call_id: f'worker did {call.args_as_dict()["task"]}' for call in requests.calls}
    return requests.build_results(approvals=approvals, calls=calls)


async def test_a_handler_answers_every_deferred_call_and_the_run_goes_on_in_call_order() -> None:
    agent, ran = file_agent(HandleDeferredToolCalls(deny_deletes))

    result = await agent.run('tidy up')

    assert result.output == 'c1: no deleting\nc2: updated .env\nc3: worker did build'
    assert ran == ['update .env']


async def test_an_async_handler_that_passes_leaves_the_calls_to_the_next_capability() -> None:
    seen: list[tuple[str, list[str]]] = []

    async def passes(ctx: RunContext[None], requests: DeferredToolRequests) -> None:
        seen.append(('first', sorted(c.tool_call_id for c in [*requests.approvals, *requests.calls])))
        return None

    def approves_only(ctx: RunContext[None], requests: DeferredToolRequests) -> DeferredToolResults:
        seen.append(('second', sorted(c.tool_call_id for c in [*requests.approvals, *requests.calls])))
        return requests.build_results(approve_all=True)

    def externals(ctx: RunContext[None], requests: DeferredToolRequests) -> DeferredToolResults:
        seen.append(('third', sorted(c.tool_call_id for c in [*requests.approvals, *requests.calls])))
        return requests.build_results(calls={c.tool_call_id: 'done' for c in requests.calls})

    agent, ran = file_agent(
        HandleDeferredToolCalls(passes), HandleDeferredToolCalls(approves_only), HandleDeferredToolCalls(externals)
    )

    result = await agent.run('tidy up')

    assert seen == [('first', ['c1', 'c2', 'c3']), ('second', ['c1', 'c2', 'c3']), ('third', ['c3'])]
    assert result.output == 'c1: deleted a.txt\nc2: updated .env\nc3: done'
    assert sorted(ran) == ['delete a.txt', 'update .env']  # the approved calls run concurrently


async def test_calls_no_handler_answers_end_the_run_as_deferred_tool_requests() -> None:
    def approvals_only(ctx: RunContext[None], requests: DeferredToolRequests) -> DeferredToolResults:
        return requests.build_results(approve_all=True)

    agent, ran = file_agent(HandleDeferredToolCalls(approvals_only), output_type=[str, DeferredToolRequests])

    result = await agent.run('tidy up')

    assert isinstance(result.output, DeferredToolRequests)
    assert [c.tool_call_id for c in result.output.calls] == ['c3']
    assert result.output.approvals == []
    assert sorted(ran) == ['delete a.txt', 'update .env']  # the approved calls run concurrently
    follow_up = await agent.run(
        message_history=result.all_messages(), deferred_tool_results=DeferredToolResults(calls={'c3': 'later'})
    )
    assert follow_up.output == 'c1: deleted a.txt\nc2: updated .env\nc3: later'
