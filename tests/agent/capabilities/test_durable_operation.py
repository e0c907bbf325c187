"""`durable_operation` (pydantic-ai 2.68): the decorator's checks, the name it records, a marked method awaited in
place outside durable runs, and journaled in them: run once per call, its result returned again to a run resumed
after a SIGKILL."""

from __future__ import annotations

import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from edgewise.agent import Agent, RunContext, UserError
from edgewise.agent.capabilities import AbstractCapability, CombinedCapability, durable_operation
from edgewise.agent.capabilities.durable_operation import operation_name, run_operations
from edgewise.agent.capabilities.wrapper import WrapperCapability
from edgewise.agent.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from edgewise.agent.models import ModelRequestContext
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.graph.persistence.sqlite import SqliteStatePersistence

from .. import _operation_worker as worker

pytestmark = pytest.mark.anyio


@dataclass
class Audit(AbstractCapability[Any]):
    recorded: list[str] = field(default_factory=list)

    @durable_operation(name='record')
    async def record(self, ctx: RunContext[Any], message: str) -> bool:
        self.recorded.append(message)
        return bool(message)

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        assert await self.record(ctx, message=f'step {ctx.run_step}')
        return request_context

    @durable_operation(name='toolset')  # type: ignore[type-var]
    def get_toolset(self) -> None:
        return None


async def test_a_marked_method_runs_in_place_and_keeps_its_name() -> None:
    audit = Audit()
    assert (await Agent('test', capabilities=[audit]).run('hi')).output == 'success (no tool calls)'
    assert audit.recorded == ['step 1']
    assert operation_name(audit.record) == 'record'
    assert operation_name(Audit.get_toolset) == 'toolset'
    assert operation_name(Audit.before_model_request) is None
    assert Audit.record.__name__ == 'record'


def test_the_decorator_needs_a_stable_name_and_an_async_method() -> None:
    module = sys.modules['edgewise.agent.capabilities.durable_operation']
    assert durable_operation is module.durable_operation  # the package's attribute is the function, not the module
    untyped: Any = durable_operation  # called the wrong ways on purpose
    with pytest.raises(TypeError, match='requires an explicit operation name'):
        untyped(lambda: None)
    with pytest.raises(TypeError, match='name must be a string, got int'):
        untyped(3)
    with pytest.raises(ValueError, match='name must not be empty'):
        durable_operation('')

    def compute(self: Any) -> int:
        return 1  # pragma: no cover - never called

    with pytest.raises(TypeError, match='can only decorate async methods'):
        untyped(name='sync')(compute)


ROOT = Path(__file__).resolve().parents[3]
WAIT_LIMIT = 60.0


def _child(db: Path, log: Path, kill_at: int, backend: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, '-m', worker.__name__, str(db), str(log), str(kill_at), backend],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=WAIT_LIMIT,
        check=False,
    )


@pytest.mark.parametrize('kill_at', [1, 2])
async def test_a_journaled_operation_runs_once_and_a_run_resumed_after_a_sigkill_gets_its_result(
    tmp_path: Path, anyio_backend: str, kill_at: int
) -> None:
    db, log = tmp_path / 'runs.db', tmp_path / 'runs.log'
    killed = _child(db, log, kill_at, anyio_backend)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    before = log.read_text().splitlines()
    assert before[-1].startswith(f'got {kill_at} ')  # killed after the operation of step `kill_at` returned
    run_id = before[1].split()[-1]  # after `ran 1 <token>`

    result = await worker.make_agent(str(db), str(log), kill_at=0).resume(run_id)

    assert result.output == 'done'
    lines = log.read_text().splitlines()
    ran = [line.split()[1:] for line in lines if line.startswith('ran ')]
    got = [line.split()[1:3] for line in lines if line.startswith('got ')]
    assert [step for step, _ in ran] == ['1', '2']  # each step's operation ran exactly once, in either process
    token = dict(ran)
    # The killed step got its result twice: once when it ran, once from the journal in the resumed run.
    assert got == [[str(step), token[str(step)]] for step in [*range(1, kill_at + 1), *range(kill_at, 3)]]


@dataclass
class Counting(AbstractCapability[Any]):
    id: str | None = 'counting'
    calls: list[tuple[str | None, int]] = field(default_factory=list)

    @durable_operation(name='count')
    async def count(self, ctx: RunContext[Any], *, n: int) -> int:
        self.calls.append((ctx.tool_call_id, n))
        return n * 10

    async def after_tool_execute(
        self, ctx: RunContext[Any], *, call: ToolCallPart, tool_def: Any, args: dict[str, Any], result: Any
    ) -> Any:
        first = await self.count(ctx, n=len(self.calls))
        second = await self.count(n=first, ctx=ctx)  # context given by keyword: journaled all the same
        return f'{result} {first} {second}'


def _two_calls(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    if len(messages) == 1:
        return ModelResponse([ToolCallPart('work', {}, 'a'), ToolCallPart('work', {}, 'b')])
    return ModelResponse([TextPart('done')])


async def test_operations_of_tool_calls_are_journaled_by_call_and_order(tmp_path: Path) -> None:
    counting = Counting()
    agent = Agent(FunctionModel(_two_calls), capabilities=[counting])

    @agent.tool_plain
    def work() -> str:
        return 'w'

    async with SqliteStatePersistence(tmp_path / 'runs.db', 'run') as persistence:
        result = await agent.run('go', persistence=persistence)
        snapshots = await persistence.load_all()
    assert result.output == 'done'
    assert sorted(str(call_id) for call_id, _ in counting.calls) == ['a', 'a', 'b', 'b']
    # The journal of the tool-call node travels with the next snapshot and is dropped by the node after it.
    journaled = [s.state.operation_results for s in snapshots if getattr(s, 'state', None) is not None]
    keys = [key for results in journaled for key in results]
    assert sorted({key.split('/', 1)[1] for key in keys}) == [
        'counting/count/a/0',
        'counting/count/a/1',
        'counting/count/b/0',
        'counting/count/b/1',
    ]
    assert snapshots[-1].state.operation_results == {}


async def test_outside_a_durable_run_an_operation_runs_each_time() -> None:
    counting = Counting()
    agent = Agent(FunctionModel(_two_calls), capabilities=[counting])

    @agent.tool_plain
    def work() -> str:
        return 'w'

    assert (await agent.run('go')).output == 'done'
    assert len(counting.calls) == 4


async def test_a_durable_run_checks_the_operations_of_its_capabilities(tmp_path: Path) -> None:
    @dataclass
    class Anonymous(Counting):
        id: str | None = None

    class Twice(Counting):
        @durable_operation(name='count')
        async def again(self, ctx: RunContext[Any]) -> int:
            return 0  # pragma: no cover - never called

    async with SqliteStatePersistence(tmp_path / 'runs.db', 'run') as persistence:
        with pytest.raises(UserError, match=r"Capability 'Anonymous' contributes durable operations and needs an "):
            await Agent('test', capabilities=[Anonymous()]).run('go', persistence=persistence)
    async with SqliteStatePersistence(tmp_path / 'runs.db', 'run-2') as persistence:
        with pytest.raises(UserError, match="Duplicate durable operation name 'count' on capability 'counting'"):
            await Agent('test', capabilities=[Twice()]).run('go', persistence=persistence)
    async with SqliteStatePersistence(tmp_path / 'runs.db', 'run-3') as persistence:
        with pytest.raises(UserError, match='`get_toolset` returns a live toolset and cannot be a durable operation'):
            await Agent('test', capabilities=[Audit(id='audit')]).run('go', persistence=persistence)


def test_operations_are_found_in_combined_and_wrapped_capabilities() -> None:
    inner = Counting(id='inner')
    found = run_operations([CombinedCapability([WrapperCapability(inner), Counting(id='other')])])
    assert [(op.capability_id, op.name, op.result_type) for op in found] == [
        ('inner', 'count', int),
        ('other', 'count', int),
    ]


@dataclass
class AfterHooks(Counting):
    async def after_node_run(self, ctx: RunContext[Any], *, node: Any, result: Any) -> Any:
        await self.count(ctx, n=1)  # the node's snapshot is closed: in place, not journaled
        return result

    async def after_run(self, ctx: RunContext[Any], *, result: Any) -> Any:
        await self.count(ctx, n=2)
        return result


@pytest.mark.parametrize('streamed', [False, True])
async def test_calls_made_between_nodes_run_in_place_in_a_durable_run(tmp_path: Path, streamed: bool) -> None:
    hooks = AfterHooks()
    agent = Agent('test', capabilities=[hooks])
    async with SqliteStatePersistence(tmp_path / 'runs.db', 'run') as persistence:
        if streamed:
            async with agent.run_stream('go', persistence=persistence) as stream:
                assert await stream.get_output() == 'success (no tool calls)'
        else:
            assert (await agent.run('go', persistence=persistence)).output == 'success (no tool calls)'
        snapshots = await persistence.load_all()
    assert [n for _, n in hooks.calls].count(2) == 1
    assert [n for _, n in hooks.calls].count(1) >= 2  # once per node
    assert all(not s.state.operation_results for s in snapshots)


def test_a_result_annotation_that_cannot_be_resolved_is_stored_as_it_is() -> None:
    @dataclass
    class Unresolved(AbstractCapability[Any]):
        id: str | None = 'unresolved'

        @durable_operation(name='op')
        async def op(self, ctx: RunContext[Any]) -> NotDefinedAnywhere:  # type: ignore[name-defined]  # noqa: F821
            return None  # pragma: no cover - never called

    assert [op.result_type for op in run_operations([Unresolved()])] == [Any]
