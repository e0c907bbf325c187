"""DBOSDurability: an agent whose runs inside a DBOS workflow (SQLite system database, this process) are durable,
with no wrapper agent; outside a workflow the same agent runs as usual."""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Iterator
from typing import Any

import pytest
from dbos import DBOS, SetWorkflowID

from edgewise.agent import Agent, RunContext
from edgewise.agent.durable_exec.dbos import DBOSAgent, DBOSDurability
from edgewise.agent.exceptions import ModelRetry, UserError
from edgewise.agent.messages import (
    AgentStreamEvent,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from edgewise.agent.models.function import AgentInfo, DeltaToolCall, FunctionModel
from edgewise.agent.tool_manager import _execution_mode  # pyright: ignore[reportPrivateUsage]
from edgewise.agent.toolsets import CombinedToolset, FunctionToolset
from edgewise.agent.toolsets._dynamic import DynamicToolset
from edgewise.graph.dbos import DBOSWorker
from tests.agent.mcp.conftest import fastmcp_stdio

calls = {'model': 0, 'other': 0, 'tool': 0}
modes: list[str] = []


def scripted(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    calls['model'] += 1
    if len(messages) == 1:
        return ModelResponse(parts=[ToolCallPart('double', {'n': 21})])
    return ModelResponse(parts=[TextPart('done')])


def other(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    calls['other'] += 1
    return ModelResponse(parts=[TextPart('from the other model')])


agent = Agent(
    FunctionModel(scripted),
    name='doubler',
    capabilities=[DBOSDurability(models={'other': FunctionModel(other)}, parallel_execution_mode='sequential')],
)


@agent.tool_plain
async def double(n: int) -> int:
    calls['tool'] += 1
    modes.append(_execution_mode.get())
    return 2 * n


@DBOS.workflow(name='doubler-answer')
async def answer(prompt: str, model: str | None = None) -> str:
    result = await agent.run(prompt, model=model)
    return result.output


async def stream_text(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | dict[int, DeltaToolCall]]:
    calls['model'] += 1
    if len(messages) == 1:
        yield {0: DeltaToolCall(name='double_streamed', json_args='{"n": 1}')}
        return
    for piece in ('str', 'eamed'):
        yield piece


seen: list[str] = []


async def handle(ctx: RunContext[Any], events: AsyncIterable[AgentStreamEvent]) -> None:
    async for event in events:
        seen.append(event.event_kind)


streamed = Agent(
    FunctionModel(stream_function=stream_text),
    name='streamer-agent',
    capabilities=[DBOSDurability(event_stream_handler=handle, name='handled')],
)


@streamed.tool_plain
def double_streamed(n: int) -> int:
    return 2 * n


@DBOS.workflow(name='handled-answer')
async def answer_streamed(prompt: str) -> str:
    result = await streamed.run(prompt)
    return result.output


plain_streamer = Agent(
    FunctionModel(stream_function=stream_text), name='plain-streamer', capabilities=[DBOSDurability()]
)
plain_streamer.tool_plain(double_streamed)


@DBOS.workflow(name='plain-streamer-events')
async def answer_events(prompt: str) -> list[str]:
    async with plain_streamer.run_stream_events(prompt) as events:
        kinds: list[str] = [event.event_kind async for event in events]
    return kinds


def add_then_answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    if len(messages) == 1:
        return ModelResponse(parts=[ToolCallPart('add', {'a': 2, 'b': 3})])
    last = messages[-1]
    assert isinstance(last, ModelRequest)
    (returned,) = [part.content for part in last.parts if isinstance(part, ToolReturnPart)]
    return ModelResponse(parts=[TextPart(f'sum: {returned}')])


mcp_agent = Agent(
    FunctionModel(add_then_answer),
    name='mcp-user',
    toolsets=[fastmcp_stdio(id='maths')],
    capabilities=[DBOSDurability(mcp_step_config={'retries_allowed': False})],
)


@DBOS.workflow(name='mcp-answer')
async def answer_with_mcp(prompt: str) -> str:
    return (await mcp_agent.run(prompt)).output


instructions_seen: list[str | None] = []


def add_then_answer_noting_instructions(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    instructions_seen.append(info.instructions)
    return add_then_answer(messages, info)


mcp_instructions_agent = Agent(
    FunctionModel(add_then_answer_noting_instructions),
    name='mcp-told',
    toolsets=[fastmcp_stdio(id='maths', include_instructions=True, cache_tools=False)],
    capabilities=[DBOSDurability()],
)


@DBOS.workflow(name='mcp-told-answer')
async def answer_with_mcp_instructions(prompt: str) -> str:
    return (await mcp_instructions_agent.run(prompt)).output


built: list[str] = []  # where the dynamic toolset's function ran: in a step, or not
dynamic_agent = Agent(FunctionModel(add_then_answer), name='dyn-user', capabilities=[DBOSDurability()])


@dynamic_agent.toolset(id='sums')
def sums_toolset(ctx: RunContext[Any]) -> FunctionToolset[Any]:
    return build_sums()


def build_sums() -> FunctionToolset[Any]:
    built.append('step' if DBOS.step_id is not None else 'plain')

    def add(a: int, b: int) -> int:
        """Add two numbers."""
        if a < 0:
            raise ModelRetry('positive numbers only')
        return a + b

    return FunctionToolset([add], instructions='Add with `add`.')


@DBOS.workflow(name='dyn-answer')
async def answer_with_dynamic_tools(prompt: str) -> str:
    return (await dynamic_agent.run(prompt)).output


retry_seen: list[tuple[str | None, str | None]] = []


def retry_then_add(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    last = messages[-1]
    assert isinstance(last, ModelRequest)
    retry = next((p.content for p in last.parts if isinstance(p, RetryPromptPart)), None)
    retry_seen.append((info.instructions, retry if isinstance(retry, str) else None))
    if len(messages) == 1:
        return ModelResponse(parts=[ToolCallPart('add', {'a': -1, 'b': 3})])
    if retry is not None:
        return ModelResponse(parts=[ToolCallPart('add', {'a': 2, 'b': 3})])
    return add_then_answer(messages, info)


retry_agent = Agent(
    FunctionModel(retry_then_add),
    name='dyn-retry',
    toolsets=[DynamicToolset(lambda ctx: build_sums(), id='sums')],
    capabilities=[DBOSDurability()],
)


def fickle_toolset(ctx: RunContext[Any]) -> FunctionToolset[Any]:
    # the listing's step sees `add`; the call's step a toolset without it
    builds.append(1)
    return build_sums() if len(builds) == 1 else FunctionToolset([])


builds: list[int] = []
fickle_agent = Agent(
    FunctionModel(add_then_answer),
    name='dyn-fickle',
    toolsets=[DynamicToolset(fickle_toolset, id='fickle')],
    capabilities=[DBOSDurability()],
)


@DBOS.workflow(name='dyn-fickle-answer')
async def answer_with_a_fickle_toolset(prompt: str) -> str:
    return (await fickle_agent.run(prompt)).output


@DBOS.workflow(name='dyn-retry-answer')
async def answer_after_a_retry(prompt: str) -> str:
    return (await retry_agent.run(prompt)).output


legacy_durability = DBOSDurability(register_legacy_workflows=True)
legacy = Agent(FunctionModel(other), name='legacy', capabilities=[legacy_durability])


@pytest.fixture(scope='module')
def worker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DBOSWorker]:
    url = f'sqlite:///{tmp_path_factory.mktemp("dbos") / "system.sqlite"}'
    config = {'name': 'edgewise-durability-tests', 'system_database_url': url, 'log_level': 'WARNING'}
    with DBOSWorker(config, queues=[]) as started:  # type: ignore[arg-type]
        yield started


def run_workflow(workflow_id: str, workflow: Any, *args: Any) -> Any:
    with SetWorkflowID(workflow_id):
        handle: Any = DBOS.start_workflow(workflow, *args)  # an async workflow, run on DBOS's event loop
    return handle.get_result()


def step_names(workflow_id: str) -> list[str]:
    return [step['function_name'] for step in DBOS.list_workflow_steps(workflow_id)]


def test_model_requests_in_a_workflow_are_steps_and_tools_run_in_the_workflow(worker: DBOSWorker) -> None:
    before = dict(calls)
    assert run_workflow('double-run', answer, 'double 21') == 'done'
    assert step_names('double-run') == ['doubler__model.request', 'doubler__model.request']
    assert (calls['model'] - before['model'], calls['tool'] - before['tool']) == (2, 1)


def test_a_finished_workflow_started_again_returns_its_recorded_output(worker: DBOSWorker) -> None:
    assert run_workflow('again-run', answer, 'double 21') == 'done'
    before = dict(calls)
    assert run_workflow('again-run', answer, 'double 21') == 'done'
    assert calls == before


def test_outside_a_workflow_the_agent_runs_without_steps(worker: DBOSWorker) -> None:
    before = dict(calls)
    result = agent.run_sync('double 21')
    assert result.output == 'done'
    assert (calls['model'] - before['model'], calls['tool'] - before['tool']) == (2, 1)


def test_the_tool_calls_run_in_the_configured_mode(worker: DBOSWorker) -> None:
    modes.clear()
    agent.run_sync('double 21')
    assert modes == ['sequential']


def test_run_stream_events_in_a_workflow_replays_the_recorded_responses_as_events(worker: DBOSWorker) -> None:
    kinds = run_workflow('events-run', answer_events, 'double 21')
    assert step_names('events-run') == ['plain-streamer__model.request_stream', 'plain-streamer__model.request_stream']
    assert kinds == [
        'part_start',
        'part_end',
        'function_tool_call',
        'function_tool_result',
        'part_start',
        'final_result',
        'part_end',
        'agent_run_result',
    ]


def test_a_registered_model_is_picked_by_its_key_inside_a_workflow(worker: DBOSWorker) -> None:
    before = dict(calls)
    assert run_workflow('other-run', answer, 'hi', 'other') == 'from the other model'
    assert step_names('other-run') == ['doubler__model.request']
    assert (calls['model'] - before['model'], calls['other'] - before['other']) == (0, 1)


def test_the_handler_gets_model_events_in_the_request_step_and_each_tool_event_in_a_step(
    worker: DBOSWorker,
) -> None:
    seen.clear()
    assert run_workflow('handled-run', answer_streamed, 'stream') == 'streamed'
    assert step_names('handled-run') == [
        'handled__model.request_stream',
        'handled__event_stream_handler',
        'handled__event_stream_handler',
        'handled__model.request_stream',
    ]
    assert seen == [
        'part_start',
        'part_end',
        'function_tool_call',
        'function_tool_result',
        'part_start',
        'final_result',
        'part_delta',
        'part_end',
    ]


def test_outside_a_workflow_the_handler_gets_every_event(worker: DBOSWorker) -> None:
    seen.clear()
    assert streamed.run_sync('stream').output == 'streamed'
    assert seen == [
        'part_start',
        'part_end',
        'function_tool_call',
        'function_tool_result',
        'part_start',
        'final_result',
        'part_delta',
        'part_end',
    ]


def test_legacy_workflows_are_those_of_a_dbos_agent_of_the_agent(worker: DBOSWorker) -> None:
    bound = DBOSDurability.from_agent(legacy)
    assert bound is not None
    assert bound is not legacy_durability
    assert isinstance(bound.legacy_agent, DBOSAgent)
    assert bound.legacy_agent.workflow_name == 'legacy.run'
    assert bound.legacy_agent.run_sync('hi', run_id='legacy-run').output == 'from the other model'
    assert step_names('legacy-run') == ['legacy__model.request']


def test_mcp_tool_listing_and_calls_in_a_workflow_are_steps(worker: DBOSWorker) -> None:
    assert run_workflow('mcp-run', answer_with_mcp, 'add') == 'sum: 5'
    # the server caches its tools: listed once per run
    assert step_names('mcp-run') == [
        'mcp-user__mcp_server__maths.get_tools',
        'mcp-user__model.request',
        'mcp-user__mcp_server__maths.call_tool',
        'mcp-user__model.request',
    ]


def test_mcp_instructions_in_a_workflow_are_steps_and_an_uncached_listing_is_one_per_request(
    worker: DBOSWorker,
) -> None:
    instructions_seen.clear()
    assert run_workflow('mcp-told-run', answer_with_mcp_instructions, 'add') == 'sum: 5'
    listing = ['mcp-told__mcp_server__maths.get_tools', 'mcp-told__mcp_server__maths.get_instructions']
    assert step_names('mcp-told-run') == [
        *listing,
        'mcp-told__model.request',
        'mcp-told__mcp_server__maths.call_tool',
        *listing,
        'mcp-told__model.request',
    ]
    assert instructions_seen == ['Numbers are added with `add`.'] * 2
    # outside a workflow the server gives them itself
    instructions_seen.clear()
    assert mcp_instructions_agent.run_sync('add').output == 'sum: 5'
    assert instructions_seen == ['Numbers are added with `add`.'] * 2


def test_a_dynamic_toolsets_listing_and_calls_in_a_workflow_are_steps(worker: DBOSWorker) -> None:
    built.clear()
    assert run_workflow('dyn-run', answer_with_dynamic_tools, 'add') == 'sum: 5'
    assert step_names('dyn-run') == [
        'dyn-user__dynamic_toolset__sums.get_tools',
        'dyn-user__model.request',
        'dyn-user__dynamic_toolset__sums.call_tool',
        'dyn-user__dynamic_toolset__sums.get_tools',
        'dyn-user__model.request',
    ]
    assert built == ['step', 'step', 'step']  # built afresh inside each step, never in the workflow's code
    # started again, the workflow gives its recorded output without building the toolset
    built.clear()
    assert run_workflow('dyn-run', answer_with_dynamic_tools, 'add') == 'sum: 5'
    assert built == []


def test_outside_a_workflow_a_dynamic_toolset_is_built_as_usual(worker: DBOSWorker) -> None:
    built.clear()
    assert dynamic_agent.run_sync('add').output == 'sum: 5'
    assert built == ['plain', 'plain']


def test_a_dynamic_toolsets_instructions_and_retries_cross_its_steps(worker: DBOSWorker) -> None:
    retry_seen.clear()
    assert run_workflow('dyn-retry-run', answer_after_a_retry, 'add') == 'sum: 5'
    assert retry_seen == [
        ('Add with `add`.', None),
        ('Add with `add`.', 'positive numbers only'),
        ('Add with `add`.', None),
    ]
    assert step_names('dyn-retry-run').count('dyn-retry__dynamic_toolset__sums.call_tool') == 2


def test_a_tool_the_function_no_longer_builds_in_the_calls_step_is_a_user_error(worker: DBOSWorker) -> None:
    with pytest.raises(UserError, match=r"Tool 'add' not found in dynamic toolset 'fickle'"):
        run_workflow('dyn-fickle-run', answer_with_a_fickle_toolset, 'add')


def test_a_dynamic_toolset_without_an_id_or_two_with_one_are_refused() -> None:
    def nothing(ctx: RunContext[Any]) -> None:
        return None

    no_id = Agent(FunctionModel(other), name='dyn-no-id', toolsets=[nothing], capabilities=[DBOSDurability()])
    with pytest.raises(UserError, match='DBOSDurability needs each dynamic toolset to have a unique, stable id'):
        no_id.run_sync('hi')
    twice = Agent(
        FunctionModel(other),
        name='dyn-twice',
        toolsets=[DynamicToolset(nothing, id='same'), fastmcp_stdio(id='same')],
        capabilities=[DBOSDurability()],
    )
    with pytest.raises(UserError, match="two toolsets have the id 'same'"):
        twice.run_sync('hi')


def test_a_wrapped_dynamic_toolset_is_a_leaf_until_built_in_a_step() -> None:
    dynamic = DynamicToolset(sums_toolset, id='sums')
    wrapper = DBOSDurability(name='leaf').get_wrapper_toolset(dynamic)
    assert wrapper is not None
    assert wrapper.id == 'sums'
    assert wrapper.visit_and_replace(lambda leaf: CombinedToolset([])) is wrapper
    seen: list[object] = []
    wrapper.apply(seen.append)
    assert seen == [dynamic]
    assert repr(wrapper) == f'DBOSDynamicToolset({dynamic!r})'


def test_the_same_toolset_twice_is_wrapped_once() -> None:
    server = fastmcp_stdio(id='maths')
    capability = DBOSDurability(name='once')
    wrapped = capability.get_wrapper_toolset(CombinedToolset([server, server]))
    assert isinstance(wrapped, CombinedToolset)
    assert wrapped.toolsets[0] is wrapped.toolsets[1]


def test_outside_a_workflow_mcp_tool_calls_are_plain_calls(worker: DBOSWorker) -> None:
    assert mcp_agent.run_sync('add').output == 'sum: 5'


def test_an_mcp_server_without_an_id_is_refused() -> None:
    agent = Agent(
        FunctionModel(add_then_answer), name='no-id', toolsets=[fastmcp_stdio()], capabilities=[DBOSDurability()]
    )
    with pytest.raises(UserError, match=r'DBOSDurability needs each MCP server to have a unique, stable id'):
        agent.run_sync('add')


def test_the_agent_or_the_capability_must_have_a_name() -> None:
    with pytest.raises(UserError, match=r'DBOSDurability needs a unique, stable name'):
        Agent(FunctionModel(other), capabilities=[DBOSDurability()])
    named = Agent(FunctionModel(other), capabilities=[DBOSDurability(name='given')])
    assert repr(DBOSDurability.from_agent(named)) == "DBOSDurability(name='given')"
    assert DBOSDurability.from_agent(Agent(FunctionModel(other))) is None
    with pytest.raises(UserError, match='more than one DBOSDurability'):
        DBOSDurability.from_agent(
            Agent(FunctionModel(other), name='two', capabilities=[DBOSDurability(), DBOSDurability()])
        )


def test_the_agent_must_have_a_model() -> None:
    with pytest.raises(UserError, match='DBOSDurability needs the agent to have a model'):
        Agent(name='modelless', capabilities=[DBOSDurability()])


def test_the_default_model_key_is_reserved() -> None:
    with pytest.raises(UserError, match="the model key 'default' is reserved"):
        DBOSDurability(models={'default': FunctionModel(other)})


def test_it_is_not_buildable_from_a_spec() -> None:
    assert DBOSDurability.get_serialization_name() is None
