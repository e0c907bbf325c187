"""The shortcuts a run's setup takes to cost less (a `RunContext` built from a template dict, `GraphAgentDeps.made`,
the native tools of a run without capabilities or overrides, the opening of a plain run) give what the long way
gives."""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import os
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from decimal import Decimal
from typing import Any

import anyio
import pytest

from edgewise.agent import (
    Agent,
    AgentRunResult,
    CancellationToken,
    CostNotFoundWarning,
    ModelRetry,
    RunCancelled,
    RunContext,
    RunTimedOut,
    UserError,
    _instrument,
)
from edgewise.agent._loop.nodes import ModelRequestNode
from edgewise.agent._messages import ids
from edgewise.agent._run import options
from edgewise.agent._run.deps import _CONTEXT_TEMPLATE, _DEPS_DEFAULTS, _DEPS_REQUIRED, GraphAgentDeps
from edgewise.agent._run.options import AgentRetries
from edgewise.agent._run.state import GraphAgentState
from edgewise.agent.agent import _run_opening
from edgewise.agent.agent._model_choice import choose_model
from edgewise.agent.agent._run_setup import _NO_USAGE, configure_run
from edgewise.agent.agent._toolsets import AgentFunctionToolset
from edgewise.agent.capabilities import Thinking
from edgewise.agent.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, UserPromptPart
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.test import TestModel
from edgewise.agent.native_tools import MCPServerTool, WebSearchTool
from edgewise.agent.toolsets._tool_search import ToolSearchToolset
from edgewise.agent.usage import RunUsage, UsageLimits
from edgewise.agent.workspaces import WorkspaceRef
from edgewise.graph.persistence.in_mem import SimpleStatePersistence

pytestmark = pytest.mark.anyio

TENANT_A = MCPServerTool(id='api', url='https://mcp.example.com/a')
TENANT_B = MCPServerTool(id='api', url='https://mcp.example.com/b')


def test_the_context_template_holds_every_field_of_run_context_in_order() -> None:
    fields = dataclasses.fields(RunContext)
    assert list(_CONTEXT_TEMPLATE) == [f.name for f in fields]
    for f in fields:  # the template's values are the defaults of the fields that have one
        if f.default is not dataclasses.MISSING:
            assert _CONTEXT_TEMPLATE[f.name] == f.default, f.name


async def test_a_run_context_equals_one_made_by_its_constructor() -> None:
    seen: list[RunContext[Any]] = []
    agent = Agent(TestModel(call_tools=['probe']))

    @agent.tool
    def probe(ctx: RunContext[None], n: int) -> int:
        seen.append(ctx)
        return n

    async with agent.iter('hi') as run:
        made = [run.ctx.deps.run_context(run.ctx.state)]
        made.append(run.ctx.deps.run_context(run.ctx.state, tool_name='t', tool_call_id='c', retry=2, max_retries=3))
        made.append(run.ctx.deps.run_context(run.ctx.state, tool_call_id='c'))
        async for _ in run:
            pass
    for ctx in [*made, *seen]:
        again = RunContext(**{f.name: getattr(ctx, f.name) for f in dataclasses.fields(RunContext)})
        assert list(vars(ctx)) == list(vars(again))
        assert vars(ctx) == vars(again)
    assert (made[1].tool_name, made[1].tool_call_id, made[1].retry, made[1].max_retries) == ('t', 'c', 2, 3)
    assert (made[2].tool_name, made[2].tool_call_id) == (None, 'c')
    assert seen[0].tool_name == 'probe'
    assert seen[0].max_retries == 1


async def test_a_tools_run_context_carries_the_values_of_its_run() -> None:
    seen: list[RunContext[str]] = []
    agent = Agent('test', deps_type=str, name='prober')

    @agent.tool(retries=3)
    def probe(ctx: RunContext[str], n: int) -> int:
        seen.append(ctx)
        if ctx.retry == 0:
            raise ModelRetry('once more')
        return n

    result = await agent.run('hi', deps='the deps', metadata={'k': 'v'}, timeout=60)
    first, second = seen
    calls = [p for m in result.all_messages() for p in getattr(m, 'parts', ()) if isinstance(p, ToolCallPart)]
    for ctx, call, retry, step in ((first, calls[0], 0, 1), (second, calls[1], 1, 2)):
        assert ctx.deps == 'the deps'
        assert ctx.model.model_name == 'test'
        assert ctx.model_id == 'test'
        assert ctx.prompt == 'hi'
        assert ctx.tool_name == 'probe'
        assert ctx.tool_call_id == call.tool_call_id
        assert ctx.retry == retry
        assert ctx.max_retries == 3
        assert ctx.run_step == step
        assert ctx.run_id == result.run_id
        assert ctx.conversation_id == result.conversation_id
        assert ctx.metadata == {'k': 'v'}
        assert ctx.deadline is not None
        assert ctx.agent is agent
        assert ctx.tool_manager is not None
        assert ctx.capabilities == {}
        assert ctx.instrumentation_version == 5
        assert ctx.validation_context is None
        assert ctx.partial_output is False
        assert ctx.tool_call_approved is False
    assert first.deadline == second.deadline


async def test_an_output_validators_run_context_counts_its_retries() -> None:
    seen: list[tuple[int, int]] = []
    agent = Agent(TestModel(custom_output_text='out'), retries={'output': 2})

    @agent.output_validator
    def check(ctx: RunContext[None], output: str) -> str:
        seen.append((ctx.retry, ctx.max_retries))
        if ctx.retry < 2:
            raise ModelRetry('again')
        return output

    assert (await agent.run('hi')).output == 'out'
    assert seen == [(0, 2), (1, 2), (2, 2)]


async def test_made_deps_equal_constructed_ones_and_share_no_mutable_default() -> None:
    async with Agent(TestModel()).iter('hi') as run:
        deps = run.ctx.deps
    given = {
        f.name: getattr(deps, f.name)
        for f in dataclasses.fields(deps)
        if f.init and f.default_factory is dataclasses.MISSING
    }
    made, constructed = GraphAgentDeps.made(**given), GraphAgentDeps(**given)
    assert list(vars(made)) == list(vars(constructed))
    mine, theirs = vars(made), vars(constructed)
    fresh = {f.name for f in dataclasses.fields(GraphAgentDeps) if f.default_factory is not dataclasses.MISSING}
    for name in mine:
        if name in fresh:  # each made by its factory (some have no equality of their own)
            assert type(mine[name]) is type(theirs[name])
            assert mine[name] is not theirs[name]
        else:
            assert mine[name] == theirs[name], name
    other = GraphAgentDeps.made(**given)
    for f in dataclasses.fields(GraphAgentDeps):
        if f.default_factory is not dataclasses.MISSING and f.name not in given:
            assert getattr(other, f.name) is not getattr(made, f.name), f.name


def test_made_deps_refuse_what_the_constructor_refuses() -> None:
    with pytest.raises(TypeError) as made:
        GraphAgentDeps.made(user_deps=None)
    with pytest.raises(TypeError) as constructed:
        GraphAgentDeps(user_deps=None)  # type: ignore[call-arg]
    assert str(made.value) == str(constructed.value)
    with pytest.raises(TypeError, match='listing'):
        GraphAgentDeps.made(listing=None)


@pytest.mark.parametrize(
    ('agent_tools', 'run_tools'),
    [([], None), ([TENANT_A], None), ([TENANT_A, TENANT_A], [WebSearchTool()]), ([TENANT_A, TENANT_B], None)],
)
def test_native_tools_of_a_plain_run_are_those_of_the_long_way(agent_tools: list[Any], run_tools: Any) -> None:
    def outcome(overrides: dict[str, Any]) -> Any:
        try:
            return options.run_native_tools(overrides, agent_tools, [], [], run_tools)
        except UserError as error:
            return str(error)

    assert outcome({}) == outcome({'model': None})  # (an override of something else takes the long way)


async def test_an_agents_own_native_tools_of_one_id_that_differ_are_refused_at_the_run() -> None:
    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse([TextPart('done')])  # pragma: no cover - the run is refused first

    with pytest.warns(DeprecationWarning, match='builtin_tools'):
        agent = Agent(FunctionModel(answer), builtin_tools=[TENANT_A, TENANT_B])
    with pytest.raises(UserError, match='conflicting definitions in agent capabilities'):
        await agent.run('hi')


async def test_made_deps_refuse_a_name_that_is_no_field_of_init_when_every_required_one_is_given() -> None:
    async with Agent(TestModel()).iter('hi') as run:
        deps = run.ctx.deps
    given = {f.name: getattr(deps, f.name) for f in dataclasses.fields(deps) if f.init}
    # `made` tells a name `__init__` does not take by the size of the defaults updated with `given`: the defaults
    # must hold exactly the fields `__init__` takes.
    assert set(_DEPS_DEFAULTS) == {f.name for f in dataclasses.fields(GraphAgentDeps) if f.init}
    for extra in ('listing', 'no_such_field'):
        wrong: dict[str, Any] = {**given, extra: None}
        with pytest.raises(TypeError) as made:
            GraphAgentDeps.made(**wrong)
        with pytest.raises(TypeError) as constructed:
            GraphAgentDeps(**wrong)
        assert str(made.value) == str(constructed.value)
        assert extra in str(made.value)


def _configured(agent: Agent[Any, Any], **arguments: Any) -> GraphAgentDeps[Any, Any]:
    return configure_run(
        agent, deps=None, model_settings=None, usage_limits=None, instructions=None, output_type=None,
        retries=AgentRetries(), persistence=None, **{'capabilities': None, 'model': None, **arguments},
    )  # fmt: skip


def _comparable(deps: GraphAgentDeps[Any, Any]) -> dict[str, Any]:
    fresh = {f.name for f in dataclasses.fields(GraphAgentDeps) if f.default_factory is not dataclasses.MISSING}
    return {name: value for name, value in vars(deps).items() if name not in fresh}


@pytest.mark.parametrize('run_capabilities', [None, []])
def test_the_deps_of_a_run_without_capabilities_are_those_of_the_long_way(run_capabilities: Any) -> None:
    agent = Agent(TestModel(), instructions='be brief', model_settings={'temperature': 0.5})
    short = _configured(agent, capabilities=run_capabilities)
    long = _configured(agent, capabilities=run_capabilities, resolved=[])  # (through wrapping, gating, combining)
    assert _comparable(short) == _comparable(long)
    assert (short.root_capability, short.hooked, short.request_hooks) == (None, frozenset(), [])


def test_the_capabilities_of_the_agent_an_override_or_the_run_take_the_long_way() -> None:
    agent = Agent(TestModel())
    with_agents = Agent(TestModel(), capabilities=[Thinking()])
    assert _configured(with_agents).root_capability is not None
    assert _configured(agent, capabilities=[Thinking()]).root_capability is not None
    with agent.override(spec={'capabilities': [{'Thinking': {}}]}):
        assert _configured(agent).root_capability is not None


async def test_the_toolset_of_a_run_without_toolsets_is_the_one_its_for_run_gives() -> None:
    agent = Agent(TestModel())
    async with agent.iter('hi') as run:
        toolset = run.ctx.deps.toolset
        assert isinstance(toolset, ToolSearchToolset)
        assert toolset.wrapped is agent._function_toolset
        ctx = run.ctx.deps.run_context(run.ctx.state)
        assert await toolset.for_run(ctx) is toolset  # the long way gives the toolset itself


async def test_a_function_toolset_with_a_for_run_of_its_own_is_asked_with_the_run_context() -> None:
    asked: list[RunContext[Any]] = []

    class Asking(AgentFunctionToolset[Any]):
        async def for_run(self, ctx: RunContext[Any]) -> Any:
            asked.append(ctx)
            return self

    agent = Agent(TestModel())
    agent._tools.function_toolset = Asking()
    async with agent.iter('hi') as run:
        assert isinstance(run.ctx.deps.toolset, ToolSearchToolset)
    assert len(asked) == 1
    assert asked[0].max_retries == 1


@pytest.mark.parametrize('ref', [None, WorkspaceRef(provider='local', id='/tmp/x')], ids=['no-ref', 'ref'])
async def test_a_run_without_workspace_capabilities_carries_the_workspace_of_its_history(ref: Any) -> None:
    agent = Agent(TestModel())
    history: list[ModelMessage] = [
        ModelRequest([UserPromptPart('before')]),
        ModelResponse([TextPart('ok')], workspace_ref=ref),
    ]
    async with agent.iter('hi', message_history=history) as run:
        assert run.ctx.deps.carried_workspace_ref == ref
        async for _ in run:
            pass
    assert run.result is not None
    last = run.result.all_messages()[-1]
    assert isinstance(last, ModelResponse)
    assert last.workspace_ref == ref
    with pytest.raises(UserError, match="workspace='new'"):  # one asked for takes the long way, and is refused
        async with agent.iter('hi', message_history=history, workspace='new'):
            pass  # pragma: no cover - refused on entry


@pytest.mark.parametrize('model_settings', [None, {}, {'temperature': 0.5}], ids=['none', 'empty', 'some'])
def test_settings_merged_over_no_layer_are_the_models_own(model_settings: Any) -> None:
    static, resolve = options.settings_resolver(model_settings, [])
    assert static is model_settings  # the very object the long way (merging each layer over it) gives
    assert resolve is None


async def test_a_deprecated_argument_of_iter_is_reported_at_the_line_entering_it() -> None:
    agent = Agent(TestModel())
    opening = agent.iter('hi', output_retries=2)  # type: ignore[call-overload]
    line = inspect.currentframe().f_lineno + 2  # type: ignore[union-attr]
    with pytest.warns(DeprecationWarning, match='output_retries') as caught:
        await opening.__aenter__()  # (where `async with` enters it)
    await opening.__aexit__(None, None, None)
    assert [(w.filename, w.lineno) for w in caught] == [(__file__, line)]


def _uuid7_from_int(milliseconds: int, random: bytes) -> str:
    """The id as one 128-bit number gives it (the long way): the milliseconds, the random bits, version and variant."""
    value = milliseconds << 80 | int.from_bytes(random, 'big')
    value = value & ~(0xF000 << 64) | 0x7000 << 64
    value = value & ~(0xC << 60) | 0x8 << 60
    return str(uuid.UUID(int=value))


@pytest.mark.parametrize(
    'random', [bytes(10), b'\xff' * 10, bytes(range(10)), bytes(range(246, 256)), b'\x5a\xa5' * 5], ids=repr
)
@pytest.mark.parametrize('milliseconds', [0, 1, 1_767_225_600_000, 2**48 - 1])
def test_a_uuid7_is_the_one_its_bits_as_a_number_give(
    monkeypatch: pytest.MonkeyPatch, milliseconds: int, random: bytes
) -> None:
    monkeypatch.setattr(os, 'urandom', lambda size: random[:size])  # (read by `uuid7` at each call)
    monkeypatch.setattr(time, 'time_ns', lambda: milliseconds * 1_000_000 + 999_999)
    made = ids.uuid7()
    assert made == _uuid7_from_int(milliseconds, random)
    assert (uuid.UUID(made).version, uuid.UUID(made).variant) == (7, uuid.RFC_4122)


async def test_a_run_given_no_usage_starts_from_a_usage_of_its_own_equal_to_a_new_one() -> None:
    agent = Agent(TestModel())
    usages = [(await agent.run('hi')).usage for _ in range(2)]
    assert usages[0] is not usages[1]
    assert usages[0].details is not usages[1].details
    assert usages[0] == usages[1]
    assert usages[1].requests == 1  # (not counted on top of the first run's)
    async with agent.iter('hi') as run:
        fresh = run.ctx.state.usage
        assert type(fresh) is RunUsage
        assert list(vars(fresh).items()) == list(vars(RunUsage()).items())
        assert fresh.details is not _NO_USAGE.details
    assert vars(_NO_USAGE) == vars(RunUsage())  # the runs left it as it was


def test_the_run_setup_gives_made_from_every_required_field(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[dict[str, Any]] = []
    made_from = GraphAgentDeps.made_from.__func__  # type: ignore[attr-defined]

    def spy(cls: type[GraphAgentDeps[Any, Any]], given: dict[str, Any]) -> Any:
        seen.append(dict(given))
        return made_from(cls, given)

    monkeypatch.setattr(GraphAgentDeps, 'made_from', classmethod(spy))
    made = _configured(Agent(TestModel()))
    (given,) = seen
    assert given.keys() >= _DEPS_REQUIRED  # (`made_from` does not look: a missing one would stay `None`)
    assert _comparable(made) == _comparable(GraphAgentDeps(**given))
    with pytest.raises(TypeError, match='no_such_field'):
        made_from(GraphAgentDeps, {**given, 'no_such_field': None})


# -- the opening of a run: a plain run enters only its cancel scope and graph run (`_RunOpening`), any other run
# goes through `_open_run` (the long way); each test runs its case both ways and compares what they give.


async def _both_ways(monkeypatch: pytest.MonkeyPatch, case: Callable[[], Awaitable[Any]]) -> tuple[Any, Any]:
    """What `case()` gives (or raises) on the short way and on the long one, each checked to be the one taken: an
    untraced run (as every run is without logfire installed) is plain."""
    monkeypatch.setattr(_instrument, 'TRACING', False)
    long_ways: list[object] = []
    open_long = _run_opening._open_run

    def counted(*args: Any) -> Any:
        long_ways.append(args)
        return open_long(*args)

    monkeypatch.setattr(_run_opening, '_open_run', counted)
    outcomes: list[Any] = []
    for way in ('short', 'long'):
        long_ways.clear()
        with monkeypatch.context() as patched:
            if way == 'long':
                patched.setattr(_run_opening, '_enters_nothing', lambda toolset: False)
            try:
                outcomes.append(await case())
            except Exception as error:
                outcomes.append(_error_summary(error))
        assert bool(long_ways) is (way == 'long'), way  # (every run of the case on the way asked for)
    return outcomes[0], outcomes[1]


def _messages_summary(messages: Sequence[ModelMessage]) -> list[Any]:
    return [
        (
            type(m).__name__,
            [(type(p).__name__, getattr(p, 'content', None), getattr(p, 'state', None)) for p in m.parts],
        )
        for m in messages
    ]


def _error_summary(error: BaseException) -> Any:
    summary: list[Any] = [type(error), str(error), type(error.__cause__), type(error.__context__)]
    if isinstance(error, RunCancelled):
        summary += [_messages_summary(error.all_messages()), error.usage, error.metadata]
    return summary


def _result_summary(result: AgentRunResult[Any]) -> Any:
    return result.output, result.usage, result.metadata, _messages_summary(result.all_messages())


async def test_a_plain_run_opens_as_the_long_way_opens_it(monkeypatch: pytest.MonkeyPatch) -> None:
    agent = Agent(TestModel(custom_output_text='done'))

    async def case() -> Any:
        return _result_summary(await agent.run('hi', metadata=lambda ctx: {'messages': len(ctx.messages)}))

    short, long = await _both_ways(monkeypatch, case)
    assert short == long
    assert short[2] == {'messages': 2}  # (computed again as the run ends: `finish`)


async def test_a_cost_limit_of_a_plain_run_is_checked_as_it_ends_as_on_the_long_way(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def case() -> Any:
        with pytest.warns(CostNotFoundWarning) as record:
            result = await Agent(TestModel()).run('hi', usage_limits=UsageLimits(cost_limit=Decimal('0.01')))
        return _result_summary(result), [str(w.message) for w in record]

    short, long = await _both_ways(monkeypatch, case)
    assert short == long
    assert len(short[1]) == 1


async def test_an_error_in_the_block_of_a_plain_run_leaves_it_as_on_the_long_way(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def case() -> Any:
        outcomes = []
        for error in [ValueError('in the block'), RunCancelled('a nested run'), StopIteration('stopped')]:
            try:
                async with Agent(TestModel()).iter('hi') as run:
                    await run.next()
                    raise error
            except Exception as left:
                outcomes.append((left is error, _error_summary(left)))
        return outcomes

    short, long = await _both_ways(monkeypatch, case)
    assert short == long
    assert [(same, summary[:3]) for same, summary in short] == [
        (True, [ValueError, 'in the block', type(None)]),
        (False, [RunCancelled, 'The agent run was cancelled by a nested run.', RunCancelled]),
        (True, [StopIteration, 'stopped', type(None)]),
    ]


class _Refusing(SimpleStatePersistence[Any, Any]):
    def set_graph_types(self, graph: Any) -> None:
        raise ValueError('no such graph here')


async def test_a_plain_run_cancelled_timed_out_or_refused_ends_as_on_the_long_way(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def waits(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        await anyio.sleep_forever()
        raise AssertionError  # pragma: no cover

    async def case() -> Any:
        token = CancellationToken()
        token.cancel()
        outcomes = []
        runs: list[Callable[[], Awaitable[Any]]] = [
            lambda: Agent(TestModel()).run('hi', cancellation_token=token),  # before it starts
            lambda: Agent(FunctionModel(waits)).run('hi', timeout=0.01),
            lambda: Agent(TestModel()).run('hi', persistence=_Refusing()),  # its graph run refuses to open
        ]
        for run in runs:
            try:
                await run()
            except Exception as error:
                outcomes.append(_error_summary(error))
        try:  # its block does not run
            async with Agent(TestModel()).iter('hi', cancellation_token=token):
                outcomes.append('the block ran')  # pragma: no cover - it does not
        except RunCancelled as error:
            outcomes.append(_error_summary(error))
        try:  # cancelled as it runs
            async with Agent(TestModel()).iter('hi') as agent_run:
                async for node in agent_run:
                    if isinstance(node, ModelRequestNode):
                        agent_run.cancel()
        except RunCancelled as error:
            outcomes.append(_error_summary(error))
        return outcomes

    short, long = await _both_ways(monkeypatch, case)
    assert short == long
    assert [o[:2] for o in short] == [
        [RunCancelled, 'The agent run was cancelled.'],
        [RunTimedOut, 'The agent run timed out.'],
        [ValueError, 'no such graph here'],
        [RunCancelled, 'The agent run was cancelled.'],
        [RunCancelled, 'The agent run was cancelled.'],
    ]
    assert short[0][4] == []  # (it never started)
    assert short[1][4] == [('ModelRequest', [('UserPromptPart', 'hi', None)])]


async def test_a_plain_run_cancelled_from_outside_carries_its_state_as_on_the_long_way(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def case() -> Any:
        started = anyio.Event()

        async def waits(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            started.set()
            await anyio.sleep_forever()
            raise AssertionError  # pragma: no cover

        carried: list[Any] = []
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as tg:

                async def cancel_outside() -> None:
                    await started.wait()
                    scope.cancel()

                tg.start_soon(cancel_outside)
                try:
                    await Agent(FunctionModel(waits)).run('hi')
                except anyio.get_cancelled_exc_class() as exc:
                    state = RunCancelled.from_cancellation(exc)
                    assert state is not None
                    carried.append(_error_summary(state))
                    raise
        return carried

    short, long = await _both_ways(monkeypatch, case)
    assert short == long
    assert short[0][1] == 'The agent run was cancelled from outside.'


async def test_a_stored_run_resumed_or_given_a_persistence_opens_as_on_the_long_way(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def case() -> Any:
        agent = Agent(TestModel())
        persistence = SimpleStatePersistence()
        first = await agent.run('hi', persistence=persistence)
        again = await agent.resume(persistence)
        return _result_summary(first), _result_summary(again)

    short, long = await _both_ways(monkeypatch, case)
    assert short == long


async def test_a_run_holding_anything_besides_its_scope_and_graph_run_takes_the_long_way(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Entering(AgentFunctionToolset[Any]):
        async def __aenter__(self) -> Any:
            return self

    plain = Agent(TestModel())
    opening = plain.iter('hi')
    assert isinstance(opening, _run_opening._RunOpening)
    async with opening as run:  # traced (when logfire is installed): its span
        assert (opening._long is not None) is run.ctx.deps.tracing
    monkeypatch.setattr(_instrument, 'TRACING', False)
    entering = Agent(TestModel())
    entering._tools.function_toolset = Entering()
    cases: list[tuple[Agent[Any, Any], dict[str, Any], bool]] = [
        (plain, {}, False),
        (plain, {'capabilities': [Thinking()]}, True),
        (Agent(TestModel(), max_concurrency=2), {}, True),
        (entering, {}, True),
    ]
    for agent, arguments, long in cases:
        opening = agent.iter('hi', **arguments)
        assert isinstance(opening, _run_opening._RunOpening)
        async with opening as run:
            assert (opening._long is not None) is long
            assert _run_opening._enters_nothing(run.ctx.deps.toolset) is (agent is not entering)
    assert _run_opening._enters_nothing(_run_opening.NO_TOOLSET_YET)


async def test_an_opening_of_iter_entered_twice_is_refused() -> None:
    opening = Agent(TestModel()).iter('hi')
    async with opening:
        with pytest.raises(RuntimeError, match=r'entered already: call `agent.iter\(...\)` again'):
            await opening.__aenter__()


@pytest.mark.parametrize('given', ['agent', 'run', 'override'])
async def test_the_model_of_a_run_without_capabilities_is_the_one_the_model_choice_gives(given: str) -> None:
    model = TestModel()
    agent = Agent(model if given == 'agent' else TestModel())
    run_model = model if given == 'run' else None
    with agent.override(model=model) if given == 'override' else contextlib.nullcontext():
        choice = await choose_model(agent, run_model, None, deps=None, history=[], usage=RunUsage())
        short, long = _configured(agent, model=run_model), _configured(agent, model=run_model, choice=choice)
        async with agent.iter('hi', model=run_model) as run:
            assert run.ctx.deps.model is model
    assert _comparable(short) == _comparable(long)
    assert (short.model, short.model_id, short.model_choice) == (model, None, None)


async def test_a_model_id_of_a_run_without_capabilities_is_the_model_entered_for_it() -> None:
    agent = Agent(TestModel())
    with agent.override(model='test'):
        async with agent:
            assert agent._entered_model is not None
            entered = agent._entered_model[1]
            async with agent.iter('hi') as run:  # (the long way: `resolve_model` would make another model)
                assert run.ctx.deps.model is entered


def test_a_started_state_is_the_one_its_constructor_makes() -> None:
    given: dict[str, Any] = {
        'message_history': [ModelRequest([UserPromptPart('hi')])], 'usage': RunUsage(requests=1),
        'conversation_id': 'c', 'run_id': 'r',
    }  # fmt: skip
    started, constructed = GraphAgentState.started(**given), GraphAgentState(**given)
    assert list(vars(started)) == [f.name for f in dataclasses.fields(GraphAgentState)]
    assert list(vars(started).items()) == list(vars(constructed).items())
    again = GraphAgentState.started(**given)
    for name in ('tool_retries', 'step_results', 'operation_results', 'pending_messages'):  # each its own
        assert getattr(again, name) is not getattr(started, name)


async def test_run_names_an_unnamed_agent_after_its_variable_and_keeps_a_given_name() -> None:
    unnamed_agent = Agent(TestModel())
    named = Agent(TestModel(), name='kept')
    await unnamed_agent.run('hi')
    await named.run('hi')
    assert (unnamed_agent.name, named.name) == ('unnamed_agent', 'kept')


def test_the_nodes_a_run_goes_on_after_are_neither_an_end_nor_a_wait() -> None:
    """`AgentRun.stops_at` answers `False` for these classes without `isinstance`: what `isinstance` would say."""
    from edgewise.agent._loop import agent_run
    from edgewise.agent._loop.nodes import CallToolsNode, DeferredToolCallsNode, UserPromptNode
    from edgewise.graph import End

    assert {UserPromptNode, ModelRequestNode, CallToolsNode} == agent_run._GOING_ON
    for kind in agent_run._GOING_ON:
        assert not issubclass(kind, (End, DeferredToolCallsNode))


async def test_a_run_stops_at_its_end_and_at_a_wait_for_deferred_answers() -> None:
    from edgewise.agent._loop.nodes import DeferredToolCallsNode
    from edgewise.agent.tools import DeferredToolRequests
    from edgewise.graph import End

    agent = Agent(TestModel())
    async with agent.iter('hi') as run:
        first = run.next_node
        assert not run.stops_at(first)
        assert run.stops_at(End(None))
        assert run.stops_at(DeferredToolCallsNode(DeferredToolRequests()))
        run.ctx.deps.deferred_tool_results = object()  # type: ignore[assignment]  # answers given: it goes on
        assert not run.stops_at(DeferredToolCallsNode(DeferredToolRequests()))
        run.ctx.deps.deferred_tool_results = None
        async for _ in run:
            pass
