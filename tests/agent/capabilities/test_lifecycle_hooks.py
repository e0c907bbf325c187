"""The lifecycle hooks of `AbstractCapability` in real runs: the order across several capabilities, what each hook
may change, and what the error hooks do with a failure."""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from edgewise.agent import (
    Agent,
    ModelRetry,
    PydanticAIDeprecationWarning,
    RunContext,
    SkipModelRequest,
    SkipToolExecution,
    UserError,
)
from edgewise.agent.capabilities import (
    AbstractCapability,
    AgentNode,
    CapabilityOrdering,
    CombinedCapability,
    NodeResult,
    RawToolArgs,
    ValidatedToolArgs,
    WrapNodeRunHandler,
    WrapRunHandler,
    WrapToolExecuteHandler,
)
from edgewise.agent.messages import ModelMessage, ModelResponse, RetryPromptPart, TextPart, ToolCallPart
from edgewise.agent.models import ModelRequestContext
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.test import TestModel
from edgewise.agent.result import AgentRunResult
from edgewise.agent.tools import ToolDefinition
from edgewise.graph import End
from edgewise.graph.persistence import NodeSnapshot
from edgewise.graph.persistence.sqlite import SqliteStatePersistence

pytestmark = pytest.mark.anyio


class Recorder(AbstractCapability[None]):
    """Records each hook it sees as `(name, hook)` in a shared log."""

    def __init__(self, name: str, log: list[tuple[str, str]]) -> None:
        self.name, self.log = name, log

    async def before_run(self, ctx: RunContext[None]) -> None:
        self.log.append((self.name, 'before_run'))

    async def after_run(self, ctx: RunContext[None], *, result: AgentRunResult[Any]) -> AgentRunResult[Any]:
        self.log.append((self.name, 'after_run'))
        return result

    async def before_tool_execute(
        self, ctx: RunContext[None], *, call: ToolCallPart, tool_def: ToolDefinition, args: ValidatedToolArgs
    ) -> ValidatedToolArgs:
        self.log.append((self.name, 'before_tool_execute'))
        return args

    async def wrap_tool_execute(
        self,
        ctx: RunContext[None],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: ValidatedToolArgs,
        handler: WrapToolExecuteHandler,
    ) -> Any:
        self.log.append((self.name, 'wrap_tool_execute >'))
        result = await handler(args)
        self.log.append((self.name, 'wrap_tool_execute <'))
        return result

    async def after_tool_execute(
        self,
        ctx: RunContext[None],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: ValidatedToolArgs,
        result: Any,
    ) -> Any:
        self.log.append((self.name, 'after_tool_execute'))
        return result


def _one_tool_call(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Calls `double` with x=3 once, then answers with the text of the last tool return (or retry)."""
    if len(messages) == 1:
        return ModelResponse(parts=[ToolCallPart('double', {'x': 3}, tool_call_id='c1')])
    last = messages[-1].parts[-1]
    return ModelResponse(parts=[TextPart(f'got {getattr(last, "content", None)}')])


def _double_agent(*capabilities: AbstractCapability[None], model: Any = None) -> Agent[None, str]:
    agent = Agent(model or FunctionModel(_one_tool_call), capabilities=list(capabilities))

    @agent.tool_plain
    def double(x: int) -> int:
        return 2 * x

    return agent


async def test_before_hooks_run_in_order_wraps_nest_and_after_hooks_run_in_reverse() -> None:
    log: list[tuple[str, str]] = []
    result = await _double_agent(Recorder('a', log), Recorder('b', log)).run('go')
    assert result.output == 'got 6'
    assert log == [
        ('a', 'before_run'),
        ('b', 'before_run'),
        ('a', 'before_tool_execute'),
        ('b', 'before_tool_execute'),
        ('a', 'wrap_tool_execute >'),
        ('b', 'wrap_tool_execute >'),
        ('b', 'wrap_tool_execute <'),
        ('a', 'wrap_tool_execute <'),
        ('b', 'after_tool_execute'),
        ('a', 'after_tool_execute'),
        ('b', 'after_run'),
        ('a', 'after_run'),
    ]


async def test_get_ordering_moves_a_capability_outermost() -> None:
    log: list[tuple[str, str]] = []

    class First(Recorder):
        def get_ordering(self) -> CapabilityOrdering | None:
            return CapabilityOrdering(position='outermost')

    combined = CombinedCapability([Recorder('a', log), First('first', log)])
    assert [c.name for c in combined.capabilities] == ['first', 'a']  # type: ignore[attr-defined]


async def test_get_ordering_errors_name_the_capability() -> None:
    class NeedsOther(AbstractCapability[None]):
        def get_ordering(self) -> CapabilityOrdering | None:
            return CapabilityOrdering(requires=[Recorder])

    with pytest.raises(UserError, match='`NeedsOther` requires `Recorder`'):
        CombinedCapability([NeedsOther()])


class _Outermost(AbstractCapability[None]):
    def get_ordering(self) -> CapabilityOrdering | None:
        return CapabilityOrdering(position='outermost')


class _Innermost(AbstractCapability[None]):
    def get_ordering(self) -> CapabilityOrdering | None:
        return CapabilityOrdering(position='innermost')


@dataclass
class _Group(AbstractCapability[None]):
    """A capability made of others (its `apply` visits them), as a custom container would be."""

    leaves: tuple[AbstractCapability[None], ...]

    def apply(self, visitor: Callable[[AbstractCapability[None]], None]) -> None:
        for leaf in self.leaves:
            leaf.apply(visitor)


async def test_a_capability_made_of_others_takes_their_ordering() -> None:
    plain = Recorder('a', [])
    group = _Group((Recorder('b', []), _Outermost()))
    assert CombinedCapability([plain, group]).capabilities == [group, plain]


async def test_a_capability_made_of_others_with_conflicting_positions_is_refused() -> None:
    with pytest.raises(
        UserError,
        match=r"^Conflicting positions among nested leaves of `_Group`: 'innermost' and 'outermost'\. ",
    ):
        CombinedCapability([_Group((_Outermost(), _Innermost())), Recorder('a', [])])


async def test_tool_validate_and_execute_hooks_change_args_and_result() -> None:
    class Change(AbstractCapability[None]):
        async def before_tool_validate(
            self, ctx: RunContext[None], *, call: ToolCallPart, tool_def: ToolDefinition, args: RawToolArgs
        ) -> RawToolArgs:
            return {'x': '10'}  # validated into an int

        async def after_tool_validate(
            self, ctx: RunContext[None], *, call: ToolCallPart, tool_def: ToolDefinition, args: ValidatedToolArgs
        ) -> ValidatedToolArgs:
            return {'x': args['x'] + 1}

        async def after_tool_execute(
            self,
            ctx: RunContext[None],
            *,
            call: ToolCallPart,
            tool_def: ToolDefinition,
            args: ValidatedToolArgs,
            result: Any,
        ) -> Any:
            return f'{args} -> {result}'

    result = await _double_agent(Change()).run('go')
    assert result.output == "got {'x': 11} -> 22"


async def test_model_retry_from_after_tool_validate_asks_the_model_to_call_again() -> None:
    seen: list[int] = []

    class RejectOdd(AbstractCapability[None]):
        async def after_tool_validate(
            self, ctx: RunContext[None], *, call: ToolCallPart, tool_def: ToolDefinition, args: ValidatedToolArgs
        ) -> ValidatedToolArgs:
            seen.append(ctx.retry)
            if args['x'] % 2:
                raise ModelRetry('x must be even')
            return args

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        calls = sum(isinstance(p, ToolCallPart) for m in messages for p in getattr(m, 'parts', ()))
        if calls < 2:
            return ModelResponse(parts=[ToolCallPart('double', {'x': 3 + calls})])
        return ModelResponse(parts=[TextPart('done')])

    result = await _double_agent(RejectOdd(), model=FunctionModel(model)).run('go')
    retry = result.all_messages()[2].parts[0]
    assert isinstance(retry, RetryPromptPart)
    assert retry.content == 'x must be even'
    assert seen == [0, 1]  # the second call sees the retry count of the first failure


async def test_on_tool_validate_error_can_give_arguments_instead() -> None:
    class Repair(AbstractCapability[None]):
        async def on_tool_validate_error(
            self,
            ctx: RunContext[None],
            *,
            call: ToolCallPart,
            tool_def: ToolDefinition,
            args: RawToolArgs,
            error: ValidationError | ModelRetry,
        ) -> ValidatedToolArgs:
            assert isinstance(error, ValidationError)
            return {'x': 5}

    def bad_args(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart('double', {'x': 'not a number'})])
        return ModelResponse(parts=[TextPart(str(messages[-1].parts[0].content))])  # type: ignore[union-attr]

    result = await _double_agent(Repair(), model=FunctionModel(bad_args)).run('go')
    assert result.output == '10'


class Failing(AbstractCapability[None]):
    """Its `on_tool_execute_error` records the error and recovers with `recover` or re-raises when `None`."""

    def __init__(self, name: str, log: list[str], recover: Any = None) -> None:
        self.name, self.log, self.recover = name, log, recover

    async def on_tool_execute_error(
        self,
        ctx: RunContext[None],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: ValidatedToolArgs,
        error: Exception,
    ) -> Any:
        self.log.append(f'{self.name}: {error}')
        if self.recover is None:
            raise RuntimeError(f'{self.name} passed on') from error
        return self.recover


def _failing_agent(*capabilities: AbstractCapability[None]) -> Agent[None, str]:
    agent = Agent(FunctionModel(_one_tool_call), capabilities=list(capabilities))

    @agent.tool_plain
    def double(x: int) -> int:
        raise ValueError('broken tool')

    return agent


async def test_on_tool_execute_error_hooks_run_in_reverse_until_one_returns_a_result() -> None:
    log: list[str] = []
    result = await _failing_agent(Failing('a', log, recover='fallback'), Failing('b', log)).run('go')
    assert result.output == 'got fallback'
    assert log == ['b: broken tool', 'a: b passed on']


async def test_an_error_no_hook_recovers_from_fails_the_run() -> None:
    log: list[str] = []
    with pytest.raises(RuntimeError, match='a passed on'):
        await _failing_agent(Failing('a', log)).run('go')


async def test_skip_tool_execution_gives_the_result_without_running_the_tool() -> None:
    class Cached(AbstractCapability[None]):
        async def before_tool_execute(
            self, ctx: RunContext[None], *, call: ToolCallPart, tool_def: ToolDefinition, args: ValidatedToolArgs
        ) -> ValidatedToolArgs:
            raise SkipToolExecution('cached')

    result = await _failing_agent(Cached()).run('go')
    assert result.output == 'got cached'


class Nodes(AbstractCapability[None]):
    def __init__(self) -> None:
        self.seen: list[str] = []

    async def wrap_node_run(
        self, ctx: RunContext[None], *, node: AgentNode[None], handler: WrapNodeRunHandler[None]
    ) -> NodeResult[None]:
        result = await handler(node)
        self.seen.append(f'{type(node).__name__} -> {type(result).__name__}')
        return result


async def test_wrap_node_run_sees_each_node_of_a_run() -> None:
    nodes = Nodes()
    await _double_agent(nodes).run('go')
    assert nodes.seen == [
        'UserPromptNode -> ModelRequestNode',
        'ModelRequestNode -> CallToolsNode',
        'CallToolsNode -> ModelRequestNode',
        'ModelRequestNode -> CallToolsNode',
        'CallToolsNode -> End',
    ]


async def test_wrap_node_run_sees_each_node_of_a_streamed_run() -> None:
    nodes = Nodes()
    async with _double_agent(nodes, model=TestModel()).run_stream('go') as stream:
        assert await stream.get_output() == '{"double":0}'
    assert nodes.seen[0] == 'UserPromptNode -> ModelRequestNode'
    assert nodes.seen[-1] == 'CallToolsNode -> End'


async def test_bare_iteration_fires_wrap_node_run_for_each_node() -> None:
    nodes = Nodes()
    given: list[str] = []
    async with _double_agent(nodes).iter('go') as run:
        async for node in run:
            given.append(type(node).__name__)
    assert given == ['UserPromptNode', 'ModelRequestNode', 'CallToolsNode', 'ModelRequestNode', 'CallToolsNode', 'End']
    assert nodes.seen == [
        'UserPromptNode -> ModelRequestNode',
        'ModelRequestNode -> CallToolsNode',
        'CallToolsNode -> ModelRequestNode',
        'ModelRequestNode -> CallToolsNode',
        'CallToolsNode -> End',
    ]


async def test_bare_iteration_mixed_with_next_runs_each_node_once() -> None:
    nodes = Nodes()
    given: list[str] = []
    async with _double_agent(nodes).iter('go') as run:
        async for node in run:
            given.append(type(node).__name__)
            if not isinstance(node, End):
                await run.next(node)
    assert given == ['UserPromptNode', 'ModelRequestNode', 'CallToolsNode', 'ModelRequestNode', 'CallToolsNode', 'End']
    assert len(nodes.seen) == 5
    assert run.result is not None
    assert run.result.output == 'got 6'


async def test_a_node_a_wrap_hook_recovers_to_after_it_failed_runs_again() -> None:
    attempts: list[int] = []

    class RunAgain(AbstractCapability[None]):
        async def wrap_node_run(
            self, ctx: RunContext[None], *, node: AgentNode[None], handler: WrapNodeRunHandler[None]
        ) -> NodeResult[None]:
            try:
                return await handler(node)
            except ConnectionError:
                return node

    def flaky(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        attempts.append(len(attempts) + 1)
        if len(attempts) == 1:
            raise ConnectionError('no network')
        return ModelResponse([TextPart('second time')])

    given: list[str] = []
    async with Agent(FunctionModel(flaky), capabilities=[RunAgain()]).iter('go') as run:
        async for node in run:
            given.append(type(node).__name__)
    assert given == ['UserPromptNode', 'ModelRequestNode', 'ModelRequestNode', 'CallToolsNode', 'End']
    assert attempts == [1, 2]
    assert run.result is not None
    assert run.result.output == 'second time'


async def test_a_node_recovered_to_after_it_failed_is_stored_again_in_a_durable_run(tmp_path: Path) -> None:
    attempts: list[int] = []

    class RunAgain(AbstractCapability[None]):
        async def on_node_run_error(
            self, ctx: RunContext[None], *, node: AgentNode[None], error: Exception
        ) -> NodeResult[None]:
            return node

    def flaky(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        attempts.append(len(attempts) + 1)
        if len(attempts) == 1:
            raise ConnectionError('no network')
        return ModelResponse([TextPart('second time')])

    agent = Agent(FunctionModel(flaky), capabilities=[RunAgain()])
    async with SqliteStatePersistence(tmp_path / 'runs.db', 'r') as persistence:
        result = await agent.run('go', persistence=persistence)
        snapshots = await persistence.load_all()
    assert result.output == 'second time'
    assert attempts == [1, 2]
    nodes = [(type(s.node).__name__, s.status) for s in snapshots if isinstance(s, NodeSnapshot)]
    assert nodes == [
        ('UserPromptNode', 'success'),
        ('ModelRequestNode', 'error'),
        ('ModelRequestNode', 'success'),
        ('CallToolsNode', 'success'),
    ]


def test_has_wrap_node_run_is_deprecated() -> None:
    with pytest.warns(PydanticAIDeprecationWarning, match=r'`has_wrap_node_run` is deprecated'):
        assert Nodes().has_wrap_node_run is True
    with pytest.warns(PydanticAIDeprecationWarning, match=r'`has_wrap_node_run` is deprecated'):
        assert AbstractCapability[None]().has_wrap_node_run is False


async def test_on_node_run_error_can_end_the_run() -> None:
    from edgewise.agent.result import FinalResult
    from edgewise.graph import End

    class EndOnError(AbstractCapability[None]):
        async def on_node_run_error(
            self, ctx: RunContext[None], *, node: AgentNode[None], error: Exception
        ) -> NodeResult[None]:
            return End(FinalResult(f'recovered from {error}'))

    def broken(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise ConnectionError('no network')

    result = await Agent(FunctionModel(broken), capabilities=[EndOnError()]).run('go')
    assert result.output == 'recovered from no network'


async def test_on_run_error_recovers_and_the_result_goes_through_after_run() -> None:
    class Recover(AbstractCapability[None]):
        async def on_run_error(self, ctx: RunContext[None], *, error: BaseException) -> AgentRunResult[Any]:
            return AgentRunResult(f'recovered: {error}')

        async def after_run(self, ctx: RunContext[None], *, result: AgentRunResult[Any]) -> AgentRunResult[Any]:
            return AgentRunResult(result.output.upper())

    def broken(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise ConnectionError('no network')

    result = await Agent(FunctionModel(broken), capabilities=[Recover()]).run('go')
    assert result.output == 'RECOVERED: NO NETWORK'


class ResponseHooks(AbstractCapability[None]):
    def __init__(self) -> None:
        self.rejected = False

    async def after_model_request(
        self, ctx: RunContext[None], *, request_context: ModelRequestContext, response: ModelResponse
    ) -> ModelResponse:
        if not self.rejected:
            self.rejected = True
            raise ModelRetry('say it again')
        return ModelResponse(parts=[TextPart(f'checked: {response.text}')])

    async def on_model_request_error(
        self, ctx: RunContext[None], *, request_context: ModelRequestContext, error: Exception
    ) -> ModelResponse:
        return ModelResponse(parts=[TextPart(f'offline ({error})')])


async def test_after_model_request_can_reject_a_response_and_change_the_next() -> None:
    result = await Agent(TestModel(custom_output_text='hello'), capabilities=[ResponseHooks()]).run('go')
    assert result.output == 'checked: hello'
    messages = result.all_messages()
    assert [type(p).__name__ for m in messages for p in m.parts] == [
        'UserPromptPart', 'TextPart', 'RetryPromptPart', 'TextPart'
    ]  # fmt: skip
    assert result.usage.requests == 2


async def test_on_model_request_error_gives_a_response_instead() -> None:
    def broken(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise ConnectionError('no network')

    hooks = ResponseHooks()
    hooks.rejected = True
    result = await Agent(FunctionModel(broken), capabilities=[hooks]).run('go')
    assert result.output == 'checked: offline (no network)'


async def test_skip_model_request_from_before_model_request_answers_without_the_model() -> None:
    class Canned(AbstractCapability[None]):
        async def before_model_request(
            self, ctx: RunContext[None], request_context: ModelRequestContext
        ) -> ModelRequestContext:
            raise SkipModelRequest(ModelResponse(parts=[TextPart('canned')]))

    def never(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise AssertionError('the model is not called')

    result = await Agent(FunctionModel(never), capabilities=[Canned()]).run('go')
    assert result.output == 'canned'
    assert result.usage.requests == 1


async def test_a_run_without_lifecycle_hooks_looks_none_up_per_step() -> None:
    agent = Agent(TestModel(), capabilities=[AbstractCapability()])
    async with agent.iter('go') as run:
        assert run.ctx.deps.hooked == frozenset()


_request_id: ContextVar[str | None] = ContextVar('_request_id', default=None)


class ReadsRequestId(AbstractCapability[None]):
    def __init__(self) -> None:
        self.seen: list[tuple[str, str | None]] = []

    async def before_node_run(self, ctx: RunContext[None], *, node: AgentNode[None]) -> AgentNode[None]:
        self.seen.append((type(node).__name__, _request_id.get()))
        return node

    async def after_run(self, ctx: RunContext[None], *, result: AgentRunResult[Any]) -> AgentRunResult[Any]:
        self.seen.append(('after_run', _request_id.get()))
        return result


class SetsRequestIdAroundTheRun(AbstractCapability[None]):
    async def wrap_run(self, ctx: RunContext[None], *, handler: WrapRunHandler) -> AgentRunResult[Any]:
        token = _request_id.set('req-1')
        try:
            return await handler()
        finally:
            _request_id.reset(token)


async def test_context_variables_set_in_wrap_run_are_seen_by_the_runs_hooks_and_restored_after() -> None:
    reader = ReadsRequestId()
    await Agent(TestModel(), capabilities=[SetsRequestIdAroundTheRun(), reader]).run('go')
    assert reader.seen == [
        ('UserPromptNode', 'req-1'),
        ('ModelRequestNode', 'req-1'),
        ('CallToolsNode', 'req-1'),
        ('after_run', 'req-1'),
    ]
    assert _request_id.get() is None


async def test_context_variables_set_in_before_run_are_seen_by_the_runs_hooks() -> None:
    class SetsRequestId(AbstractCapability[None]):
        async def before_run(self, ctx: RunContext[None]) -> None:
            _request_id.set('req-2')

    reader = ReadsRequestId()
    async with Agent(TestModel(), capabilities=[SetsRequestId(), reader]).iter('go') as run:
        async for _ in run:
            pass
    assert reader.seen == [
        ('UserPromptNode', 'req-2'),
        ('ModelRequestNode', 'req-2'),
        ('CallToolsNode', 'req-2'),
        ('after_run', 'req-2'),
    ]
    assert _request_id.get() is None


async def test_context_variables_set_in_wrap_run_are_seen_by_on_run_error() -> None:
    seen: list[str | None] = []

    class Recovers(SetsRequestIdAroundTheRun):
        async def on_run_error(self, ctx: RunContext[None], *, error: BaseException) -> AgentRunResult[Any]:
            seen.append(_request_id.get())
            return AgentRunResult('recovered')

    def broken(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise ConnectionError('no network')

    result = await Agent(FunctionModel(broken), capabilities=[Recovers()]).run('go')
    assert result.output == 'recovered'
    assert seen == ['req-1']
    assert _request_id.get() is None
