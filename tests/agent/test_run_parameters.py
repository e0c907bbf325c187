"""The agent and run parameters of pydantic-ai 1.107: conversation ids, retry budgets, metadata, run instructions,
model settings as functions, overrides, validation context, tool timeout, concurrency and the result's accessors."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import anyio
import pydantic
import pytest
from dirty_equals import IsStr

from edgewise.agent import Agent, ModelRetry, RunContext, UnexpectedModelBehavior, UserError, capture_run_messages
from edgewise.agent.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    UserPromptPart,
)
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.test import TestModel
from edgewise.agent.output import NativeOutput, TextOutput, ToolOutput
from edgewise.agent.settings import ModelSettings
from edgewise.agent.usage import RunUsage

from ._helpers import CONVERSATION_ID, NOW, scripted

pytestmark = pytest.mark.anyio

ANY_REF: Any = IsStr()


def _first_request(messages: list[ModelMessage]) -> ModelRequest:
    first = messages[0]
    assert isinstance(first, ModelRequest)
    return first


# -- conversation ids -------------------------------------------------------------------------------------------


async def test_a_run_stamps_a_new_conversation_id_on_its_messages() -> None:
    result = await Agent(TestModel()).run('hi')

    assert result.conversation_id == CONVERSATION_ID
    assert {m.conversation_id for m in result.all_messages()} == {result.conversation_id}


async def test_a_continued_conversation_keeps_its_id_unless_told_new_or_given_one() -> None:
    agent = Agent(TestModel())
    first = await agent.run('hi')

    follow_up = await agent.run('again', message_history=first.all_messages())
    forked = await agent.run('again', message_history=first.all_messages(), conversation_id='new')
    named = await agent.run('again', message_history=first.all_messages(), conversation_id='mine')

    assert follow_up.conversation_id == first.conversation_id
    assert forked.conversation_id not in (first.conversation_id, 'new')
    assert named.conversation_id == 'mine'
    assert [m.conversation_id for m in named.new_messages()] == ['mine', 'mine']


async def test_the_run_context_and_the_run_know_the_conversation_id() -> None:
    agent = Agent(TestModel(), instructions=lambda ctx: f'conversation {ctx.conversation_id}')

    async with agent.iter('hi', conversation_id='c1') as run:
        assert (run.conversation_id, len(run.run_id)) == ('c1', 32)
        async for _ in run:
            pass

    assert _first_request(run.all_messages()).instructions == 'conversation c1'
    assert b'"conversation_id":"c1"' in run.new_messages_json()
    assert run.all_messages_json() == run.new_messages_json()


# -- retry budgets --------------------------------------------------------------------------------------------


def _always_text(text: str) -> FunctionModel:
    return FunctionModel(lambda messages, info: ModelResponse(parts=[TextPart(text)]))


async def test_retries_as_a_dict_sets_the_tool_and_output_budgets_apart() -> None:
    agent = Agent(_always_text('x'), output_type=int, retries={'tools': 5, 'output': 2})

    with pytest.raises(UnexpectedModelBehavior, match=r'Exceeded maximum output retries \(2\)'):
        await agent.run('go')


async def test_a_run_may_change_the_output_budget() -> None:
    agent = Agent(_always_text('x'), output_type=int, retries=4)

    with pytest.raises(UnexpectedModelBehavior, match=r'output retries \(0\)'):
        await agent.run('go', retries=0)
    with pytest.raises(UnexpectedModelBehavior, match=r'output retries \(1\)'):
        await agent.run('go', retries={'output': 1})


def _retrying_tool_agent(**agent_options: Any) -> tuple[Agent[None, str], list[tuple[int, int]]]:
    """An agent whose model calls `flaky` until it gives up; `flaky` always asks for a retry and records the
    `(ctx.retry, ctx.max_retries)` it saw."""
    seen: list[tuple[int, int]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[ToolCallPart('flaky', {}, tool_call_id=f'c{len(messages)}')])

    agent: Agent[None, str] = Agent(FunctionModel(model), **agent_options)

    @agent.tool
    def flaky(ctx: RunContext[None]) -> str:
        seen.append((ctx.retry, ctx.max_retries))
        raise ModelRetry('again')

    return agent, seen


async def test_a_run_may_change_the_tool_budget_of_the_tools_that_set_none() -> None:
    agent, seen = _retrying_tool_agent(retries={'tools': 4})

    with pytest.raises(UnexpectedModelBehavior, match=r"Tool 'flaky' exceeded max retries count of 1"):
        await agent.run('go', retries={'tools': 1})
    assert seen == [(0, 1), (1, 1)]
    seen.clear()
    with pytest.raises(UnexpectedModelBehavior, match=r"Tool 'flaky' exceeded max retries count of 2"):
        await agent.run('go', retries=2)  # a bare int sets both budgets
    assert seen == [(0, 2), (1, 2), (2, 2)]
    seen.clear()
    with pytest.raises(UnexpectedModelBehavior, match=r"Tool 'flaky' exceeded max retries count of 4"):
        await agent.run('go', retries={'output': 0})  # the tool budget stays the agent's
    assert len(seen) == 5


async def test_a_tool_own_retries_win_over_the_run_budget() -> None:
    agent, seen = _retrying_tool_agent()
    agent._tools.function_toolset.tools['flaky'].max_retries = 2

    with pytest.raises(UnexpectedModelBehavior, match=r"Tool 'flaky' exceeded max retries count of 2"):
        await agent.run('go', retries={'tools': 5})
    assert seen[-1] == (2, 2)


async def test_override_retries_wins_over_the_run_argument() -> None:
    agent = Agent(_always_text('x'), output_type=int)

    with agent.override(retries=0), pytest.raises(UnexpectedModelBehavior, match=r'output retries \(0\)'):
        await agent.run('go', retries=3)
    tool_agent, seen = _retrying_tool_agent()
    exceeded = pytest.raises(UnexpectedModelBehavior, match=r"Tool 'flaky' exceeded max retries count of 2")
    with tool_agent.override(retries={'tools': 2}), exceeded:
        await tool_agent.run('go', retries={'tools': 7})
    assert seen[-1] == (2, 2)


async def test_the_split_retry_arguments_still_work_with_a_deprecation_warning() -> None:
    with pytest.warns(DeprecationWarning, match=r'`Agent\(output_retries=...\)` is deprecated'):
        agent = Agent(_always_text('x'), output_type=int, retries=5, output_retries=1)
    with pytest.warns(DeprecationWarning, match=r'`Agent\(tool_retries=...\)` is deprecated'):
        Agent(TestModel(), tool_retries=None)

    with pytest.raises(UnexpectedModelBehavior, match=r'output retries \(1\)'):
        await agent.run('go')
    warns = pytest.warns(DeprecationWarning, match=r'`agent.run\(output_retries=...\)` is deprecated')
    with warns, pytest.raises(UnexpectedModelBehavior, match=r'output retries \(0\)'):
        await agent.run('go', output_retries=0)  # type: ignore[call-overload]


def test_unknown_keyword_arguments_are_user_errors() -> None:
    with pytest.raises(UserError, match='Unknown keyword arguments: `colour`'):
        Agent(TestModel(), colour='red')
    with pytest.raises(UserError, match='Unknown keyword arguments: `shape`'):
        Agent(TestModel()).run_sync('hi', shape='round')  # type: ignore[call-overload]


# -- metadata -------------------------------------------------------------------------------------------------


async def test_metadata_of_the_agent_and_the_run_merge_and_is_computed_again_at_the_end() -> None:
    agent = Agent(TestModel(), metadata=lambda ctx: {'requests': ctx.usage.requests, 'who': 'agent'})

    async with agent.iter('hi', metadata={'who': 'run', 'extra': 1}) as run:
        assert run.metadata == {'requests': 0, 'who': 'run', 'extra': 1}
        async for _ in run:
            pass

    assert run.metadata == {'requests': 1, 'who': 'run', 'extra': 1}
    assert run.result is not None
    assert run.result.metadata == run.metadata


async def test_override_metadata_replaces_the_agent_and_run_metadata() -> None:
    seen: list[Any] = []
    agent = Agent(TestModel(), metadata={'env': 'base'}, instructions=lambda ctx: seen.append(ctx.metadata))

    with agent.override(metadata={'env': 'test'}):
        result = await agent.run('hi', metadata={'ignored': True})

    assert result.metadata == seen[0] == {'env': 'test'}
    assert (await agent.run('hi')).metadata == {'env': 'base'}


async def test_a_run_without_metadata_has_none() -> None:
    assert (await Agent(TestModel()).run('hi')).metadata is None


# -- instructions ---------------------------------------------------------------------------------------------


async def test_run_instructions_come_after_the_agents_texts_and_functions_after_texts() -> None:
    agent = Agent(TestModel(), instructions=['Be brief.', lambda: 'Dynamic.'])

    result = await agent.run('hi', instructions='Answer in French.')

    assert _first_request(result.all_messages()).instructions == 'Be brief.\nAnswer in French.\n\nDynamic.'


async def test_override_instructions_replace_the_agents_and_none_clears_them() -> None:
    agent = Agent(TestModel(), instructions='Base.')

    with agent.override(instructions=['A.', lambda ctx: 'B.']):
        replaced = await agent.run('hi', instructions='Run.', capabilities=[])
    with agent.override(instructions=None):
        cleared = await agent.run('hi')

    assert _first_request(replaced.all_messages()).instructions == 'A.\n\nB.'
    assert _first_request(cleared.all_messages()).instructions is None


# -- model settings -------------------------------------------------------------------------------------------


def _settings_echo() -> FunctionModel:
    def echo(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart(repr(dict(sorted((info.model_settings or {}).items()))))])

    return FunctionModel(echo, settings=ModelSettings(seed=1))


async def test_model_settings_functions_see_what_is_merged_below_them_at_every_request() -> None:
    seen: list[Any] = []

    def agent_settings(ctx: RunContext[None]) -> ModelSettings:
        seen.append(('agent', ctx.model_settings, ctx.run_step))
        return ModelSettings(temperature=0.5, max_tokens=ctx.run_step)

    def run_settings(ctx: RunContext[None]) -> ModelSettings:
        seen.append(('run', ctx.model_settings))
        return ModelSettings(top_p=0.9)

    result = await Agent(_settings_echo(), model_settings=agent_settings).run('hi', model_settings=run_settings)

    assert result.output == "{'max_tokens': 1, 'seed': 1, 'temperature': 0.5, 'top_p': 0.9}"
    assert seen == [
        ('agent', {'seed': 1}, 1),
        ('run', {'seed': 1, 'temperature': 0.5, 'max_tokens': 1}),
    ]


async def test_override_model_settings_replaces_the_agents_and_the_runs() -> None:
    agent = Agent(_settings_echo(), model_settings=ModelSettings(temperature=0.1))

    with agent.override(model_settings=lambda ctx: ModelSettings(max_tokens=7)):
        result = await agent.run('hi', model_settings=ModelSettings(top_p=0.2))

    assert result.output == "{'max_tokens': 7, 'seed': 1}"


# -- names, models, repr --------------------------------------------------------------------------------------


async def test_override_name_and_the_repr() -> None:
    agent = Agent(TestModel(), name='real')

    with agent.override(name='stand-in'):
        assert agent.name == 'stand-in'

    assert (
        repr(Agent())
        == "Agent(model=None, name=None, end_strategy='graceful', model_settings=None, output_type=<class 'str'>)"
    )
    assert agent.name == 'real'


async def test_override_model_runs_an_agent_without_a_model() -> None:
    agent = Agent(defer_model_check=True)

    with agent.override(model=TestModel()):  # pydantic-ai 2.x: the override is the run's model
        assert (await agent.run('hi')).output == 'success (no tool calls)'


async def test_the_agent_context_is_reentrant_and_needs_no_model() -> None:
    agent = Agent(TestModel())

    async with agent, agent:
        assert agent._tools.entered == 2
    async with Agent():
        pass

    assert agent._tools.entered == 0


# -- validation context, tool timeout, concurrency ------------------------------------------------------------


class Scaled(pydantic.BaseModel):
    x: int

    @pydantic.field_validator('x')
    @classmethod
    def scale(cls, value: int, info: pydantic.ValidationInfo) -> int:
        factor: int = info.context or 1
        return value * factor


async def test_the_validation_context_reaches_tool_arguments_and_outputs() -> None:
    seen: list[int] = []
    model = scripted([ToolCallPart('record', {'value': {'x': 2}})], [ToolCallPart('final_result', {'x': 3})])
    agent = Agent(model, output_type=Scaled, deps_type=int, validation_context=lambda ctx: ctx.deps)

    @agent.tool_plain
    def record(value: Scaled) -> None:
        seen.append(value.x)

    result = await agent.run('go', deps=10)

    assert (seen, result.output.x) == ([20], 30)


@dataclass
class Factor:
    value: int


@pytest.mark.parametrize('hooked', [False, True], ids=['plain', 'with-output-hooks'])
async def test_output_validators_see_the_validation_context_made_after_a_tool_changed_the_deps(hooked: bool) -> None:
    from edgewise.agent.capabilities import Hooks

    model = scripted([ToolCallPart('bump', {})], [ToolCallPart('final_result', {'x': 3})])
    hooks: Hooks[Factor] = Hooks()

    @hooks.on.before_output_validate
    async def unchanged(ctx: RunContext[Factor], /, *, output_context: Any, output: Any) -> Any:
        return output

    agent: Agent[Factor, Scaled] = Agent(
        model,
        output_type=Scaled,
        deps_type=Factor,
        validation_context=lambda ctx: ctx.deps.value,
        capabilities=[hooks] if hooked else [],
    )
    seen: list[Any] = []

    @agent.tool
    def bump(ctx: RunContext[Factor]) -> None:
        seen.append(ctx.validation_context)
        ctx.deps.value += 5

    @agent.output_validator
    def check(ctx: RunContext[Factor], output: Scaled) -> Scaled:
        seen.append(ctx.validation_context)
        return output

    result = await agent.run('go', deps=Factor(10))

    assert (seen, result.output.x) == ([10, 15], 45)


async def test_tools_without_a_timeout_get_the_agents_tool_timeout() -> None:
    model = scripted([ToolCallPart('slow', {})], [TextPart('done')])
    agent = Agent(model, tool_timeout=0.01)
    never = anyio.Event()

    @agent.tool_plain
    async def slow() -> None:
        await never.wait()

    result = await agent.run('go')

    retry = result.all_messages()[2].parts[0]
    assert isinstance(retry, RetryPromptPart)
    assert retry.content == 'Timed out after 0.01 seconds.'


async def test_a_tools_own_timeout_wins_over_the_agents_tool_timeout() -> None:
    model = scripted([ToolCallPart('slow', {})], [TextPart('done')])
    agent = Agent(model, tool_timeout=1000.0)
    never = anyio.Event()

    @agent.tool_plain(timeout=0.01)
    async def slow() -> None:
        await never.wait()

    result = await agent.run('go')

    retry = result.all_messages()[2].parts[0]
    assert isinstance(retry, RetryPromptPart)
    assert retry.content == 'Timed out after 0.01 seconds.'


async def test_override_tools_get_the_agents_tool_timeout() -> None:
    model = scripted([ToolCallPart('slow', {})], [TextPart('done')])
    agent = Agent(model, tool_timeout=0.01)
    never = anyio.Event()

    async def slow() -> None:
        await never.wait()

    with agent.override(tools=[slow]):
        result = await agent.run('go')

    retry = result.all_messages()[2].parts[0]
    assert isinstance(retry, RetryPromptPart)
    assert retry.content == 'Timed out after 0.01 seconds.'


async def test_max_concurrency_makes_further_runs_wait_for_a_slot() -> None:
    entered, release = anyio.Event(), anyio.Event()
    requests: list[str] = []

    async def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = messages[0].parts[0]
        assert isinstance(prompt, UserPromptPart)
        requests.append(str(prompt.content))
        if prompt.content == 'first':
            entered.set()
            await release.wait()
        return ModelResponse(parts=[TextPart('ok')])

    agent = Agent(FunctionModel(model), max_concurrency=1)
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.run, 'first')
        await entered.wait()
        tg.start_soon(agent.run, 'second')
        await anyio.wait_all_tasks_blocked()
        assert requests == ['first']
        release.set()

    assert requests == ['first', 'second']


# -- results --------------------------------------------------------------------------------------------------


async def test_usage_is_a_property_that_can_still_be_called_with_a_warning() -> None:
    async with Agent(TestModel()).iter('hi') as run:
        async for _ in run:
            pass
    result = run.result
    assert result is not None

    assert result.usage == RunUsage(input_tokens=51, output_tokens=4, requests=1)
    assert repr(result.usage) == 'RunUsage(input_tokens=51, output_tokens=4, requests=1)'
    assert result.usage != 'usage'
    with pytest.warns(DeprecationWarning, match='`usage` is no longer a method'):
        assert run.usage() == result.usage


async def test_the_result_gives_the_last_response_even_after_an_output_tool() -> None:
    result = await Agent(TestModel(), output_type=int).run('hi')

    assert isinstance(result.all_messages()[-1], ModelRequest)
    assert result.response is result.all_messages()[-2]


def test_a_result_without_messages_has_no_response() -> None:
    from edgewise.agent import AgentRunResult

    result: AgentRunResult[str] = AgentRunResult('x')

    with pytest.raises(ValueError, match='No response found'):
        _ = result.response
    assert (result.usage, result.run_id, result.conversation_id, result.metadata) == (RunUsage(), None, None, None)


@dataclass
class _Point:
    x: int


def test_output_json_schema_of_one_type_or_several() -> None:
    assert Agent(output_type=int).output_json_schema() == {'type': 'integer'}
    assert Agent().output_json_schema(output_type=[int, str]) == {'anyOf': [{'type': 'integer'}, {'type': 'string'}]}
    schema = Agent().output_json_schema(output_type=_Point | None)  # type: ignore[arg-type]
    assert schema['anyOf'][1] == {'type': 'null'}


def test_run_stream_sync_streams_from_synchronous_code() -> None:
    agent = Agent(TestModel(custom_output_text='one two three'))

    result = agent.run_stream_sync('hi', conversation_id='sync')
    pieces = list(result.stream_text(delta=True, debounce_by=None))

    assert ''.join(pieces) == 'one two three'
    assert (result.is_complete, result.conversation_id, len(result.run_id)) == (True, 'sync', 32)
    assert result.usage.requests == 1
    assert result.new_messages() == result.all_messages()
    assert result.new_messages_json() == result.all_messages_json()
    assert result.metadata is None
    assert repr(result) == '<StreamedRunResultSync is_complete=True>'


def test_run_stream_sync_get_output_and_close() -> None:
    agent = Agent(TestModel(custom_output_args={'x': 1}), output_type=_Point)

    assert agent.run_stream_sync('hi').get_output() == _Point(x=1)
    outputs = list(agent.run_stream_sync('hi').stream_output(debounce_by=None))
    assert outputs[-1] == _Point(x=1)
    responses = agent.run_stream_sync('hi')
    assert list(responses.stream_response(debounce_by=None))[-1].parts
    with pytest.warns(DeprecationWarning, match=r'stream_responses\(\)` is deprecated'):
        pairs = list(agent.run_stream_sync('hi').stream_responses(debounce_by=None))
    assert pairs[-1][1] is True
    unfinished = agent.run_stream_sync('hi')
    unfinished.close()
    unfinished.close()
    assert not unfinished.is_complete


def test_node_checks_narrow_the_nodes_of_a_run() -> None:
    async def nodes() -> list[str]:
        kinds: list[str] = []
        async with Agent(TestModel()).iter('hi') as run:
            node = run.next_node
            while True:
                kinds.append(
                    'user' if Agent.is_user_prompt_node(node) else
                    'request' if Agent.is_model_request_node(node) else
                    'tools' if Agent.is_call_tools_node(node) else 'end'
                )  # fmt: skip
                if Agent.is_end_node(node):
                    return kinds
                node = await run.next(node)

    assert anyio.run(nodes) == ['user', 'request', 'tools', 'end']


async def test_an_output_validator_retry_is_still_counted_against_the_run_budget() -> None:
    agent = Agent(_always_text('x'), retries={'output': 1})

    @agent.output_validator
    def never(output: str) -> str:
        raise ModelRetry('no')

    with pytest.raises(UnexpectedModelBehavior, match=r'output retries \(1\)'):
        await agent.run('go')


def test_no_warning_without_deprecated_arguments() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        Agent(TestModel(), retries=2, tool_timeout=1.0, max_concurrency=2, description='d')


async def test_a_history_ending_with_unanswered_tool_calls_takes_no_new_prompt() -> None:
    history: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart('hi')]),
        ModelResponse(parts=[ToolCallPart('t', {}, 'c1')]),
    ]

    with pytest.raises(UserError, match='Cannot provide a new user prompt when the message history contains'):
        await Agent(TestModel()).run('more', message_history=history)


async def test_a_history_ending_with_a_plain_response_gets_a_request_with_the_instructions_only() -> None:
    history: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart('hi')]), ModelResponse(parts=[TextPart('yo')])]

    result = await Agent(TestModel(custom_output_text='summary'), instructions='Summarize.').run(
        message_history=history
    )

    request = _first_request(result.new_messages())
    assert (request.parts, request.instructions, result.output) == ([], 'Summarize.', 'summary')


async def test_a_static_tool_choice_that_excludes_the_output_is_refused() -> None:
    settings: Any = {'tool_choice': 'required'}

    with pytest.raises(UserError, match="`tool_choice='required'` prevents the agent from producing a final response"):
        await Agent(TestModel()).run('hi', model_settings=settings)


async def test_a_run_is_captured_by_the_innermost_block_only() -> None:
    with capture_run_messages() as outer:
        await Agent(TestModel()).run('first')
        with capture_run_messages() as inner:
            assert inner == []
            await Agent(TestModel()).run('second')
        await Agent(TestModel()).run('third')  # the outer block's list is taken: not captured

    assert inner is not outer
    assert [m.parts[0].content for m in outer if isinstance(m, ModelRequest)] == ['first']  # type: ignore[union-attr]
    assert [m.parts[0].content for m in inner if isinstance(m, ModelRequest)] == ['second']  # type: ignore[union-attr]


async def test_a_run_inside_a_tool_of_a_captured_run_is_not_captured() -> None:
    inner_agent = Agent(TestModel(custom_output_text='inner'))
    outer_agent = Agent(TestModel(call_tools=['ask']))

    @outer_agent.tool_plain
    async def ask() -> str:
        return (await inner_agent.run('inner prompt')).output

    with capture_run_messages() as captured:
        await outer_agent.run('outer prompt')
    requests = [m for m in captured if isinstance(m, ModelRequest)]
    assert requests[0].parts[0].content == 'outer prompt'  # type: ignore[union-attr]
    assert all(getattr(p, 'content', None) != 'inner prompt' for m in requests for p in m.parts)


async def test_a_dynamic_system_prompt_returning_nothing_keeps_its_place() -> None:
    values = iter([None, 'filled'])
    agent = Agent(TestModel())

    @agent.system_prompt(dynamic=True)
    def maybe() -> str | None:
        return next(values)

    first = await agent.run('hi')
    second = await agent.run('again', message_history=first.all_messages())

    assert _first_request(first.all_messages()).parts[0] == SystemPromptPart('', timestamp=NOW, dynamic_ref=ANY_REF)
    assert _first_request(second.all_messages()).parts[0].content == 'filled'  # type: ignore[union-attr]


def test_output_json_schema_unwraps_output_markers_and_functions() -> None:
    def shout(text: str) -> str:
        return text.upper()  # pragma: no cover

    def untyped(x):
        return x  # pragma: no cover

    spec: Any = [ToolOutput(int), NativeOutput([bool]), TextOutput(shout), untyped]
    assert Agent().output_json_schema(output_type=spec) == {
        'anyOf': [{'type': 'integer'}, {'type': 'boolean'}, {'type': 'string'}]
    }


def test_run_stream_sync_that_cannot_start_raises_and_leaves_no_loop_behind() -> None:
    with pytest.raises(UserError, match='`model` must either be set'):
        Agent().run_stream_sync('hi')


async def test_a_history_ending_with_a_plain_response_and_no_instructions_ends_with_it() -> None:
    history: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart('hi')]), ModelResponse(parts=[TextPart('yo')])]

    result = await Agent(TestModel()).run(message_history=history)

    assert (result.output, result.new_messages()) == ('yo', [])


async def test_adjacent_responses_of_a_given_history_are_kept_merged() -> None:
    history: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart('hi')]),
        ModelResponse(parts=[TextPart('a')]),
        ModelResponse(parts=[TextPart('b')]),
    ]

    result = await Agent(TestModel()).run('more', message_history=history)

    assert [len(m.parts) for m in result.all_messages()] == [1, 2, 1, 1]


def test_run_stream_sync_validates_each_streamed_response_into_an_output() -> None:
    agent = Agent(TestModel(custom_output_args={'x': 3}), output_type=_Point)

    result = agent.run_stream_sync('hi')
    outputs = [
        result.validate_response_output(response, allow_partial=response.state == 'incomplete')
        for response in result.stream_response(debounce_by=None)
    ]

    # what arrived before the block, a snapshot after the part's end, then the complete response
    assert outputs == [_Point(x=3), _Point(x=3), _Point(x=3)]


@pytest.mark.parametrize('timeout', [0, -1.5])
def test_a_tool_timeout_that_is_not_positive_is_refused(timeout: float) -> None:
    with pytest.raises(UserError) as info:
        Agent(TestModel(), tool_timeout=timeout)
    assert str(info.value) == f'tool_timeout must be > 0, got {timeout}'
