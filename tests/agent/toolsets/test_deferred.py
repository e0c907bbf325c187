"""Deferred tool calls: runs that end on calls needing approval or an outside result, and resume with answers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from pydantic import TypeAdapter

from edgewise.agent import (
    Agent,
    ApprovalRequired,
    CallDeferred,
    DeferredToolRequests,
    DeferredToolResults,
    ExternalToolset,
    FunctionToolset,
    ModelRetry,
    RunContext,
    ToolApproved,
    ToolDenied,
    ToolOutput,
    ToolReturn,
    UnexpectedModelBehavior,
    UserError,
)
from edgewise.agent.messages import (
    FunctionToolCallEvent,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from edgewise.agent.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from edgewise.agent.tools import ToolDefinition

pytestmark = pytest.mark.anyio

OUTPUT: Any = [str, DeferredToolRequests]


def model_calling(*calls: ToolCallPart) -> FunctionModel:
    """Calls the tools in one response, then answers with what came back (returns and retry prompts)."""

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(list(calls))
        last = messages[-1]
        assert isinstance(last, ModelRequest)
        shown = [f'{type(p).__name__}:{getattr(p, "content", "")}' for p in last.parts]
        return ModelResponse([TextPart(' | '.join(shown))])

    return FunctionModel(answer)


def approval_agent(*calls: ToolCallPart) -> tuple[Agent[None, Any], list[tuple[str, bool, Any]]]:
    agent: Agent[None, Any] = Agent(model_calling(*calls), output_type=OUTPUT)
    ran: list[tuple[str, bool, Any]] = []

    @agent.tool(requires_approval=True)
    def delete(ctx: RunContext[None], path: str) -> str:
        ran.append((path, ctx.tool_call_approved, ctx.tool_call_metadata))
        return f'deleted {path}'

    @agent.tool_plain
    def look(path: str) -> str:
        return f'saw {path}'

    return agent, ran


async def test_a_tool_needing_approval_ends_the_run_with_the_request() -> None:
    agent, ran = approval_agent(ToolCallPart('delete', {'path': 'a'}, 'd1'))

    result = await agent.run('clean up')

    assert result.output == DeferredToolRequests(approvals=[ToolCallPart('delete', {'path': 'a'}, 'd1')])
    assert ran == []
    assert isinstance(result.all_messages()[-1], ModelResponse)  # the response with the open call ends the history


async def test_an_approved_call_runs_on_resume_with_the_approval_in_its_context() -> None:
    agent, ran = approval_agent(ToolCallPart('delete', {'path': 'a'}, 'd1'))
    first = await agent.run('clean up')

    result = await agent.run(
        message_history=first.all_messages(),
        deferred_tool_results=DeferredToolResults(approvals={'d1': True}, metadata={'d1': {'by': 'ann'}}),
    )

    assert ran == [('a', True, {'by': 'ann'})]
    assert result.output == 'ToolReturnPart:deleted a'
    assert result.usage.tool_calls == 1


async def test_an_approval_may_override_the_arguments() -> None:
    agent, ran = approval_agent(ToolCallPart('delete', {'path': 'a'}, 'd1'))
    first = await agent.run('clean up')

    approval = ToolApproved(override_args={'path': 'b'})
    await agent.run(
        message_history=first.all_messages(), deferred_tool_results=DeferredToolResults(approvals={'d1': approval})
    )

    assert ran == [('b', True, None)]


async def test_a_denied_call_tells_the_model_and_does_not_run() -> None:
    agent, ran = approval_agent(
        ToolCallPart('delete', {'path': 'a'}, 'd1'), ToolCallPart('delete', {'path': 'b'}, 'd2')
    )
    first = await agent.run('clean up')

    result = await agent.run(
        message_history=first.all_messages(),
        deferred_tool_results=DeferredToolResults(approvals={'d1': False, 'd2': ToolDenied('Not that one.')}),
    )

    assert ran == []
    denied = result.all_messages()[-2]
    assert isinstance(denied, ModelRequest)
    assert [(p.content, p.outcome) for p in denied.parts if isinstance(p, ToolReturnPart)] == [
        ('The tool call was denied.', 'denied'),
        ('Not that one.', 'denied'),
    ]


async def test_calls_that_ran_keep_their_request_and_the_resumed_request_holds_the_new_answers() -> None:
    agent, _ = approval_agent(ToolCallPart('look', {'path': 'x'}, 'l1'), ToolCallPart('delete', {'path': 'x'}, 'd1'))
    first = await agent.run('clean up')
    history = first.all_messages()
    assert isinstance(history[-1], ModelRequest)  # the look call's return, kept so that no call is left open
    assert isinstance(first.output, DeferredToolRequests)
    assert [c.tool_call_id for c in first.output.approvals] == ['d1']

    result = await agent.run(message_history=history, deferred_tool_results=DeferredToolResults(approvals={'d1': True}),
                             user_prompt='and then?')  # fmt: skip

    assert result.output == 'ToolReturnPart:saw x | ToolReturnPart:deleted x | UserPromptPart:and then?'
    # As pydantic-ai 1.107: the request with the look call's return stays as it was, and the resumed run's new
    # request holds only the new answers (and the prompt).
    requests = [m for m in result.all_messages() if isinstance(m, ModelRequest)]
    assert len(requests) == 3
    assert requests[1] == history[-1]
    assert [type(p).__name__ for p in requests[2].parts] == ['ToolReturnPart', 'UserPromptPart']
    assert result.new_messages()[0] is requests[2]


async def test_a_tool_raising_call_deferred_ends_the_run_with_its_metadata_and_takes_an_outside_result() -> None:
    agent: Agent[None, Any] = Agent(
        model_calling(ToolCallPart('render', {'page': 1}, 'r1'), ToolCallPart('render', {'page': 2}, 'r2'),
                      ToolCallPart('render', {'page': 3}, 'r3')),
        output_type=OUTPUT,
    )  # fmt: skip

    @agent.tool_plain
    def render(page: int) -> str:
        raise CallDeferred(metadata={'page': page})

    first = await agent.run('go')
    assert isinstance(first.output, DeferredToolRequests)
    assert [c.tool_call_id for c in first.output.calls] == ['r1', 'r2', 'r3']
    assert first.output.metadata == {'r1': {'page': 1}, 'r2': {'page': 2}, 'r3': {'page': 3}}

    results = first.output.build_results(
        calls={'r1': 'page one', 'r2': ModelRetry('Render it smaller.'), 'r3': RetryPromptPart('Try page 4.')}
    )
    result = await agent.run(message_history=first.all_messages(), deferred_tool_results=results)

    assert result.output == (
        'ToolReturnPart:page one | RetryPromptPart:Render it smaller. | RetryPromptPart:Try page 4.'
    )
    retry = result.all_messages()[-2].parts[2]
    assert isinstance(retry, RetryPromptPart)
    assert (retry.tool_name, retry.tool_call_id) == ('render', 'r3')


async def test_a_tool_raising_approval_required_runs_once_approved() -> None:
    agent: Agent[None, Any] = Agent(model_calling(ToolCallPart('pay', {'amount': 5}, 'p1')), output_type=OUTPUT)

    @agent.tool
    def pay(ctx: RunContext[None], amount: int) -> str:
        if not ctx.tool_call_approved:
            raise ApprovalRequired(metadata={'amount': amount})
        return f'paid {amount}'

    first = await agent.run('pay')
    assert isinstance(first.output, DeferredToolRequests)
    assert first.output.metadata == {'p1': {'amount': 5}}

    result = await agent.run(message_history=first.all_messages(),
                             deferred_tool_results=first.output.build_results(approve_all=True))  # fmt: skip
    assert result.output == 'ToolReturnPart:paid 5'


async def test_an_approval_required_toolset_asks_only_when_its_function_says_so() -> None:
    toolset: FunctionToolset[None] = FunctionToolset()

    @toolset.tool_plain
    def spend(amount: int) -> str:
        return f'spent {amount}'

    guarded = toolset.approval_required(lambda ctx, tool_def, args: args['amount'] > 10)
    agent: Agent[None, Any] = Agent(
        model_calling(ToolCallPart('spend', {'amount': 5}, 's1'), ToolCallPart('spend', {'amount': 50}, 's2')),
        output_type=OUTPUT, toolsets=[guarded],
    )  # fmt: skip

    first = await agent.run('go')
    assert isinstance(first.output, DeferredToolRequests)
    assert [c.tool_call_id for c in first.output.approvals] == ['s2']

    result = await agent.run(message_history=first.all_messages(),
                             deferred_tool_results=DeferredToolResults(approvals={'s2': True}))  # fmt: skip
    assert result.output == 'ToolReturnPart:spent 5 | ToolReturnPart:spent 50'


async def test_every_call_of_an_approval_required_toolset_waits_by_default() -> None:
    toolset: FunctionToolset[None] = FunctionToolset([lambda: 'x'])
    agent: Agent[None, Any] = Agent(model_calling(ToolCallPart('<lambda>', {}, 'c1')), output_type=OUTPUT,
                                    toolsets=[toolset.approval_required()])  # fmt: skip

    result = await agent.run('go')
    assert isinstance(result.output, DeferredToolRequests)
    assert [c.tool_call_id for c in result.output.approvals] == ['c1']


async def test_an_external_call_with_arguments_that_are_not_an_object_fails_with_no_retries() -> None:
    external = ExternalToolset([ToolDefinition(name='ask')])
    agent: Agent[None, Any] = Agent(model_calling(ToolCallPart('ask', 'not json', 'a1')), output_type=OUTPUT,
                                    toolsets=[external])  # fmt: skip

    with pytest.raises(UnexpectedModelBehavior, match="Tool 'ask' exceeded max retries count of 0"):
        await agent.run('go')


async def test_approving_an_external_call_is_a_user_error() -> None:
    external = ExternalToolset([ToolDefinition(name='ask')])
    agent: Agent[None, Any] = Agent(model_calling(ToolCallPart('ask', {}, 'a1')), output_type=OUTPUT,
                                    toolsets=[external])  # fmt: skip
    first = await agent.run('go')

    with pytest.raises(UserError, match="External tools cannot be called: pass the result of 'ask'"):
        await agent.run(message_history=first.all_messages(),
                        deferred_tool_results=DeferredToolResults(approvals={'a1': True}))  # fmt: skip


async def test_a_deferred_call_without_deferred_tool_requests_in_the_output_types_is_a_user_error() -> None:
    agent = Agent(
        model_calling(ToolCallPart('ask', {}, 'a1')), toolsets=[ExternalToolset([ToolDefinition(name='ask')])]
    )

    with pytest.raises(UserError, match='A deferred tool call was present, but `DeferredToolRequests` is not among'):
        await agent.run('go')


def test_deferred_tool_requests_alone_is_not_an_output_type() -> None:
    with pytest.raises(UserError, match='At least one output type must be provided other than `DeferredToolRequests`'):
        Agent(model_calling(), output_type=DeferredToolRequests)


async def test_a_final_output_beside_a_deferred_call_answers_the_call_as_not_executed() -> None:
    agent: Agent[None, Any] = Agent(
        model_calling(ToolCallPart('final_result', {'response': 1}, 'f1'), ToolCallPart('ask', {}, 'a1')),
        output_type=[int, DeferredToolRequests], toolsets=[ExternalToolset([ToolDefinition(name='ask')])],
        end_strategy='exhaustive',
    )  # fmt: skip

    result = await agent.run('go')

    assert result.output == 1
    last = result.all_messages()[-1]
    assert [p.content for p in last.parts if isinstance(p, ToolReturnPart)] == [
        'Final result processed.',
        'Tool not executed - a final result was already processed.',
    ]


async def test_results_must_answer_exactly_the_open_calls() -> None:
    agent, _ = approval_agent(ToolCallPart('look', {'path': 'x'}, 'l1'), ToolCallPart('delete', {'path': 'x'}, 'd1'))
    first = await agent.run('clean up')
    history = first.all_messages()

    with pytest.raises(UserError, match=r"Tool call results need to be provided for all deferred tool calls\. "
                                        r"Expected: \{'d1'\}, got: set\(\)"):  # fmt: skip
        await agent.run(message_history=history, deferred_tool_results=DeferredToolResults())
    both = DeferredToolResults(approvals={'d1': True}, calls={'l1': 'x'})
    with pytest.raises(UserError, match=r"Tool call 'l1' was already executed and its result cannot be overridden\."):
        await agent.run(message_history=history, deferred_tool_results=both)


async def test_results_without_a_history_to_resume_are_user_errors() -> None:
    agent, _ = approval_agent()
    results = DeferredToolResults(approvals={'d1': True})

    with pytest.raises(UserError, match='the message history is empty'):
        await agent.run(deferred_tool_results=results)
    with pytest.raises(UserError, match='does not contain a `ModelResponse`'):
        await agent.run(message_history=[ModelRequest([UserPromptPart('x')])], deferred_tool_results=results)
    with pytest.raises(UserError, match='does not contain any unprocessed tool calls'):
        await agent.run(message_history=[ModelRequest([UserPromptPart('x')]), ModelResponse([TextPart('y')])],
                        deferred_tool_results=results)  # fmt: skip


def test_building_and_merging_results() -> None:
    requests = DeferredToolRequests(calls=[ToolCallPart('a', {}, 'c1')],
                                    approvals=[ToolCallPart('b', {}, 'c2'), ToolCallPart('b', {}, 'c3')],
                                    metadata={'c2': {'x': 1}})  # fmt: skip

    built = requests.build_results(approvals={'c2': False}, calls={'c1': 1}, approve_all=True)
    assert built.approvals == {'c2': False, 'c3': ToolApproved()}
    assert built.to_tool_call_results() == {'c2': ToolDenied(), 'c3': ToolApproved(), 'c1': 1}
    assert requests.remaining(built) is None
    partial = requests.build_results(approvals={'c2': True})
    assert requests.remaining(partial) == DeferredToolRequests(calls=[ToolCallPart('a', {}, 'c1')],
                                                               approvals=[ToolCallPart('b', {}, 'c3')])  # fmt: skip
    partial.update(DeferredToolResults(calls={'c1': 'x'}, metadata={'c1': {}}))
    assert (partial.calls, partial.metadata) == ({'c1': 'x'}, {'c1': {}})
    with pytest.raises(ValueError, match=r"`approvals` contains tool call IDs not in .*\['c1'\]"):
        requests.build_results(approvals={'c1': True})
    with pytest.raises(ValueError, match=r"`calls` contains tool call IDs not in .*\['c2'\]"):
        requests.build_results(calls={'c2': 1})


def test_deferral_signals_survive_pickling() -> None:
    import pickle

    assert pickle.loads(pickle.dumps(CallDeferred({'a': 1}))).metadata == {'a': 1}
    assert pickle.loads(pickle.dumps(ApprovalRequired())).metadata is None


async def test_a_new_prompt_after_open_tool_calls_is_a_user_error() -> None:
    agent, _ = approval_agent(ToolCallPart('delete', {'path': 'a'}, 'd1'))
    first = await agent.run('clean up')

    with pytest.raises(UserError, match='Cannot provide a new user prompt when the message history contains'):
        await agent.run('something else', message_history=first.all_messages())


async def test_an_outside_result_given_as_a_tool_return_splits_like_a_tools_own() -> None:
    agent: Agent[None, Any] = Agent(
        model_calling(ToolCallPart('fetch', {'url': 'a'}, 'f1')),
        output_type=OUTPUT,
        toolsets=[ExternalToolset([ToolDefinition(name='fetch', kind='external')])],
    )
    first = await agent.run('go')
    assert isinstance(first.output, DeferredToolRequests)
    answer = ToolReturn(return_value={'status': 200}, content='The page says hello.', metadata={'bytes': 5})
    result = await agent.run(message_history=first.all_messages(), deferred_tool_results=DeferredToolResults(
        calls={'f1': answer}))  # fmt: skip
    request = result.new_messages()[0]
    assert isinstance(request, ModelRequest)
    returned, prompt = request.parts
    assert isinstance(returned, ToolReturnPart)
    assert isinstance(prompt, UserPromptPart)
    assert (returned.content, returned.metadata, prompt.content) == (
        {'status': 200},
        {'bytes': 5},
        'The page says hello.',
    )


async def test_the_early_strategy_skips_function_tools_before_external_and_approval_tools() -> None:
    calls = [ToolCallPart('outside', {}, 'o1'), ToolCallPart('final_result', {'response': 'done'}, 'f1'),
             ToolCallPart('guarded', {}, 'g1'), ToolCallPart('plain', {}, 'p1')]  # fmt: skip
    agent: Agent[None, Any] = Agent(
        FunctionModel(lambda messages, info: ModelResponse(calls)),
        output_type=[ToolOutput(str), DeferredToolRequests],
        toolsets=[ExternalToolset([ToolDefinition(name='outside', kind='external')])],
        end_strategy='early',
    )
    agent.tool_plain(name='guarded', requires_approval=True)(_guarded)
    agent.tool_plain(name='plain')(_plain)
    result = await agent.run('go')
    assert result.output == 'done'
    closing = result.all_messages()[-1]
    assert isinstance(closing, ModelRequest)
    assert [getattr(p, 'tool_call_id', None) for p in closing.parts] == ['f1', 'p1', 'o1', 'g1']


def _guarded() -> str:
    return 'ran'  # pragma: no cover - skipped by the early strategy


def _plain() -> str:
    return 'ran'  # pragma: no cover - skipped by the early strategy


def test_deferred_tool_results_store_and_load_as_themselves() -> None:
    results = DeferredToolResults(
        calls={
            'returned': ToolReturn(return_value=1, content='more', metadata={'a': 1}),
            'retry': ModelRetry('again'),
            'prompt': RetryPromptPart('fix it', tool_name='t', tool_call_id='x'),
            'value': {'kind': 'not a tag of ours', 'n': 1},
            'number': 3,
        },
        approvals={
            'yes': True,
            'no': False,
            'changed': ToolApproved(override_args={'a': 2}),
            'denied': ToolDenied('x'),
        },
        metadata={'yes': {'who': 'me'}},
    )
    adapter = TypeAdapter(DeferredToolResults)
    stored = adapter.dump_python(results)
    assert stored['calls']['retry'] == {'message': 'again', 'kind': 'model-retry'}
    assert stored['calls']['returned']['kind'] == 'tool-return'
    assert adapter.validate_python(stored) == results
    assert adapter.validate_json(adapter.dump_json(results)) == results
    assert ModelRetry('again') == ModelRetry('again') != ModelRetry('other')
    assert len({ModelRetry('a'), ModelRetry('a')}) == 1


def _streaming_deferred_agent() -> tuple[Agent[None, Any], list[int]]:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        if len(messages) == 1:
            yield {
                0: DeltaToolCall('ask', '{"n": 1}', tool_call_id='a1'),
                1: DeltaToolCall('send', '{"n": 2}', tool_call_id='s1'),
            }
        else:
            yield 'done'

    agent: Agent[None, Any] = Agent(
        FunctionModel(stream_function=stream),
        output_type=OUTPUT,
        toolsets=[ExternalToolset([ToolDefinition(name='send', kind='external')])],
    )
    ran: list[int] = []

    @agent.tool_plain(requires_approval=True)
    def ask(n: int) -> int:
        ran.append(n)
        return n

    return agent, ran


async def test_a_streamed_run_that_ends_on_deferred_calls_before_its_block_is_complete_once_its_output_is_read() -> (
    None
):
    # A tool that raises `CallDeferred` is known to defer only once it runs: the run ends before the block.
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        yield {0: DeltaToolCall('later', '{"n": 1}', tool_call_id='l1')}

    agent: Agent[None, Any] = Agent(FunctionModel(stream_function=stream), output_type=OUTPUT)

    @agent.tool_plain
    def later(n: int) -> int:
        raise CallDeferred

    expected = DeferredToolRequests(calls=[ToolCallPart('later', '{"n": 1}', 'l1')])
    async with agent.run_stream('go') as result:
        assert not result.is_complete  # as pydantic-ai: not before its output is read
        assert await result.validate_response_output(result.response) == expected  # any response gives it
        assert not result.is_complete
        assert [o async for o in result.stream_output(debounce_by=None)] == [expected]
        assert result.is_complete
    async with agent.run_stream('go') as result:
        assert await result.get_output() == expected
        assert result.is_complete
    async with agent.run_stream('go') as result:
        assert [r.parts async for r in result.stream_response(debounce_by=None)] == [result.response.parts]
        assert result.is_complete


async def test_a_streamed_run_whose_response_calls_deferred_tools_ends_on_their_requests() -> None:
    agent, ran = _streaming_deferred_agent()
    async with agent.run_stream('go') as result:
        assert await result.get_output() == DeferredToolRequests(
            calls=[ToolCallPart('send', '{"n": 2}', 's1')], approvals=[ToolCallPart('ask', '{"n": 1}', 'a1')]
        )
        assert result.is_complete
    assert ran == []


async def test_a_streamed_response_with_deferred_calls_streams_their_requests_as_its_output() -> None:
    agent, _ = _streaming_deferred_agent()
    outputs: list[Any] = []
    async with agent.iter('go') as run:
        async for node in run:
            if agent.is_model_request_node(node):
                async with node.stream(run.ctx) as stream:
                    outputs += [o async for o in stream.stream_output(debounce_by=None)]
    assert outputs[-1] == DeferredToolRequests(
        calls=[ToolCallPart('send', '{"n": 2}', 's1')], approvals=[ToolCallPart('ask', '{"n": 1}', 'a1')]
    )
    assert run.result is not None
    assert run.result.output == outputs[-1]


async def test_validating_a_response_with_deferred_calls_needs_deferred_tool_requests_among_output_types() -> None:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        yield {0: DeltaToolCall('send', '{}', tool_call_id='s1')}

    agent: Agent[None, Any] = Agent(
        FunctionModel(stream_function=stream),
        toolsets=[ExternalToolset([ToolDefinition(name='send', kind='external')])],
    )
    async with agent.iter('go') as run:
        async for node in run:
            if agent.is_model_request_node(node):
                async with node.stream(run.ctx) as response:
                    with pytest.raises(UserError, match='`DeferredToolRequests` is not among output types'):
                        await response.get_output()
                break


async def test_an_approved_call_is_validated_once_as_it_runs_and_its_event_says_so() -> None:
    checked: list[tuple[int, bool]] = []

    def check(ctx: RunContext[None], n: int) -> None:
        checked.append((n, ctx.tool_call_approved))

    agent: Agent[None, Any] = Agent(
        model_calling(ToolCallPart('act', {'n': 1}, 'a1'), ToolCallPart('act', {'n': 2}, 'a2')), output_type=OUTPUT
    )

    @agent.tool(requires_approval=True, args_validator=check)
    def act(ctx: RunContext[None], n: int) -> int:
        return n

    first = await agent.run('go')
    checked.clear()
    answers = DeferredToolResults(approvals={'a1': ToolApproved(override_args={'n': 5}), 'a2': ToolDenied('no')})
    events: list[Any] = []
    async with agent.iter(message_history=first.all_messages(), deferred_tool_results=answers) as run:
        async for node in run:
            if agent.is_call_tools_node(node):
                async with node.stream(run.ctx) as stream:
                    events += [e async for e in stream]
    calls = {e.part.tool_call_id: e.args_valid for e in events if isinstance(e, FunctionToolCallEvent)}
    assert calls == {'a1': True, 'a2': None}  # the denied call is not validated (as pydantic-ai)
    assert checked == [(5, True)]  # once, with the override arguments and the approval


@pytest.mark.parametrize('deferral', [ApprovalRequired, CallDeferred])
async def test_a_tool_deferred_by_its_kind_stays_so_without_the_metadata_its_validator_gives(deferral: type) -> None:
    def check(ctx: RunContext[None], n: int) -> None:
        raise deferral(metadata={'from': 'validator'})

    agent: Agent[None, Any] = Agent(model_calling(ToolCallPart('act', {'n': 1}, 'a1')), output_type=OUTPUT)

    @agent.tool(requires_approval=True, args_validator=check)
    def act(ctx: RunContext[None], n: int) -> int:
        raise AssertionError('not run')  # pragma: no cover

    result = await agent.run('go')

    assert result.output == DeferredToolRequests(approvals=[ToolCallPart('act', {'n': 1}, 'a1')])
    assert result.output.metadata == {}
