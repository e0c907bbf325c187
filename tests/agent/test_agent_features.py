"""Agent configuration: instructions, system prompts, deps, iteration, override, history, as_tool."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime

import pytest

from edgewise.agent import (
    Agent,
    AgentRunResult,
    CallToolsNode,
    FinalResult,
    ModelRequestNode,
    RunContext,
    RunUsage,
    Tool,
    ToolDefinition,
    UserPromptNode,
)
from edgewise.agent.messages import (
    ImageUrl,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.test import TestModel
from edgewise.graph import End

from ._helpers import CONVERSATION_ID, NOW, RUN_ID, scripted

pytestmark = pytest.mark.anyio


@dataclass
class Deps:
    name: str


async def test_instructions_and_system_prompts_from_texts_and_functions() -> None:
    seen: list[str | None] = []

    def record(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(info.instructions)
        return ModelResponse(parts=[TextPart('ok')])

    agent = Agent(FunctionModel(record), deps_type=Deps, instructions='static', system_prompt=('one', 'two'))

    @agent.instructions
    def who(ctx: RunContext[Deps]) -> str:
        return f'user is {ctx.deps.name}'

    @agent.instructions
    async def nothing() -> str:
        return ''

    @agent.system_prompt
    async def prompt(ctx: RunContext[Deps]) -> str:
        return f'hello {ctx.deps.name}'

    result = await agent.run('x', deps=Deps('ann'))
    assert seen == ['static\n\nuser is ann']
    assert result.all_messages()[0] == ModelRequest(
        parts=[
            SystemPromptPart('one', timestamp=NOW),
            SystemPromptPart('two', timestamp=NOW),
            SystemPromptPart('hello ann', timestamp=NOW),
            UserPromptPart('x', timestamp=NOW),
        ],
        timestamp=NOW,
        instructions='static\n\nuser is ann',
        run_id=RUN_ID,
        conversation_id=CONVERSATION_ID,
    )


async def test_dynamic_system_prompts_are_refreshed_when_a_history_is_continued() -> None:
    agent = Agent(scripted([TextPart('a')], [TextPart('b')]), deps_type=Deps)

    @agent.system_prompt(dynamic=True)
    def greet(ctx: RunContext[Deps]) -> str:
        return f'hi {ctx.deps.name}'

    @agent.system_prompt
    def fixed() -> str:
        return 'fixed'

    first = await agent.run('one', deps=Deps('ann'))
    assert first.all_messages()[0].parts[0] == SystemPromptPart('hi ann', timestamp=NOW, dynamic_ref=greet.__qualname__)
    second = await agent.run('two', deps=Deps('bob'), message_history=first.all_messages())
    assert [getattr(p, 'content', None) for p in second.all_messages()[0].parts] == ['hi bob', 'fixed', 'one']
    assert [type(m) for m in second.new_messages()] == [ModelRequest, ModelResponse]
    assert first.all_messages()[0].parts[0] == SystemPromptPart('hi ann', timestamp=NOW, dynamic_ref=greet.__qualname__)


async def test_system_prompts_are_not_repeated_when_a_history_is_continued() -> None:
    agent = Agent(scripted([TextPart('a')], [TextPart('b')]), system_prompt='sys')
    first = await agent.run('one')
    second = await agent.run('two', message_history=first.new_messages())
    assert second.new_messages()[0].parts == [UserPromptPart('two', timestamp=NOW)]
    assert len(second.all_messages()) == 4


async def test_a_history_given_as_json_dicts_is_validated_into_messages() -> None:
    first = await Agent(scripted([TextPart('a')])).run('one')
    as_dicts = json.loads(first.all_messages_json())
    second = await Agent(scripted([TextPart('b')])).run('two', message_history=as_dicts)
    assert second.all_messages()[:2] == first.all_messages()
    assert ModelMessagesTypeAdapter.validate_json(second.new_messages_json()) == second.new_messages()


async def test_a_run_without_a_prompt_resends_the_last_request_of_the_history() -> None:
    agent = Agent(scripted([TextPart('answer')]))
    history: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart('pending')])]
    result = await agent.run(message_history=history)
    assert result.output == 'answer'
    assert [m.parts for m in result.all_messages()] == [
        [UserPromptPart('pending', timestamp=NOW)],
        [TextPart('answer')],
    ]


async def test_a_run_without_a_prompt_handles_the_tool_calls_of_the_last_response() -> None:
    agent = Agent(scripted([TextPart('done')]))

    @agent.tool_plain
    def t() -> int:
        return 7

    history: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart('go')]),
        ModelResponse(parts=[ToolCallPart('t', {}, 'c1')]),
    ]
    result = await agent.run(message_history=history)
    assert [m.parts for m in result.new_messages()] == [
        [ToolReturnPart('t', 7, 'c1', timestamp=NOW)],
        [TextPart('done')],
    ]


async def test_iter_yields_every_node_then_the_end() -> None:
    agent = Agent(scripted([ToolCallPart('t', {}, 'c1')], [TextPart('done')]))

    @agent.tool_plain
    def t() -> int:
        return 1

    async with agent.iter('go') as run:
        assert run.result is None
        kinds = [type(node).__name__ async for node in run]
        assert run.usage == RunUsage(input_tokens=103, output_tokens=5, requests=2, tool_calls=1)
        assert run.ctx.state.run_step == 2
    assert kinds == [
        'UserPromptNode',
        'ModelRequestNode',
        'CallToolsNode',
        'ModelRequestNode',
        'CallToolsNode',
        'End',
    ]
    assert run.result is not None
    assert run.result.output == 'done'
    assert isinstance(run.next_node, End)
    assert run.next_node.data == FinalResult('done')
    assert run.all_messages() == run.new_messages() == run.result.all_messages()
    assert repr(run) == '<AgentRun next_node=End>'


async def test_next_drives_a_run_node_by_node() -> None:
    agent = Agent(scripted([TextPart('done')]))
    async with agent.iter('go') as run:
        node = run.next_node
        assert isinstance(node, UserPromptNode)
        node = await run.next(node)
        assert isinstance(node, ModelRequestNode)
        assert node.request.parts == [UserPromptPart('go', timestamp=NOW)]
        node = await run.next(node)
        assert isinstance(node, CallToolsNode)
        assert node.model_response.parts == [TextPart('done')]
        end = await run.next()
        assert isinstance(end, End)
    assert run.result is not None
    assert run.result.output == 'done'


async def test_override_replaces_model_deps_and_tools_inside_the_block_only() -> None:
    agent = Agent('openai:gpt-4o', deps_type=Deps)

    @agent.tool
    def name(ctx: RunContext[Deps]) -> str:
        return ctx.deps.name  # pragma: no cover - replaced by the override

    def shout(ctx: RunContext[Deps]) -> str:
        return ctx.deps.name.upper()

    with agent.override(model=TestModel(), deps=Deps('zed'), tools=[shout]):
        result = await agent.run('x', deps=Deps('ann'))
    assert result.output == '{"shout":"ZED"}'
    with agent.override(model=TestModel()):
        assert (await agent.run('x', deps=Deps('ann'))).output == '{"name":"ann"}'


async def test_as_tool_lets_one_agent_delegate_to_another_with_shared_usage() -> None:
    specialist = Agent(scripted([ToolCallPart('final_result', {'response': 42})]), name='specialist', output_type=int)
    boss = Agent(scripted([ToolCallPart('specialist', {'input': 'answer?'}, 'c1')], [TextPart('it is 42')]))
    boss_tool = specialist.as_tool(description='Answers questions.')
    assert boss_tool.tool_def.description == 'Answers questions.'
    with boss.override(tools=[boss_tool]):
        result = await boss.run('ask')
    assert result.all_messages()[2].parts == [ToolReturnPart('specialist', 42, 'c1', timestamp=NOW)]
    assert result.usage.requests == 3
    default = Agent(scripted()).as_tool()
    assert (default.name, default.description) == (
        'agent',
        'Ask the agent agent. Pass it the full request as `input`.',
    )


async def test_run_usage_adds_to_a_given_usage() -> None:
    usage = RunUsage(requests=5)
    await Agent(scripted([TextPart('ok')])).run('x', usage=usage)
    assert usage.requests == 6


async def test_all_messages_can_replace_the_output_tool_acknowledgement() -> None:
    agent = Agent(scripted([ToolCallPart('final_result', {'response': 3}, 'c1')]), output_type=int)
    result = await agent.run('x')
    assert result.output == 3
    last = result.all_messages(output_tool_return_content='thanks')[-1]
    assert last.parts == [ToolReturnPart('final_result', 'thanks', 'c1', timestamp=NOW)]
    assert result.new_messages()[-1].parts[0].content == 'Final result processed.'  # type: ignore[union-attr]
    assert b'"thanks"' in result.all_messages_json(output_tool_return_content='thanks')
    assert b'"thanks"' in result.new_messages_json(output_tool_return_content='thanks')


async def test_replacing_the_output_acknowledgement_of_a_text_run_is_an_error() -> None:
    result = await Agent(scripted([TextPart('ok')])).run('x')
    with pytest.raises(ValueError, match='Cannot set output tool return content when the return type is `str`'):
        result.all_messages(output_tool_return_content='thanks')


async def test_replacing_an_output_acknowledgement_missing_from_the_history_is_a_lookup_error() -> None:
    agent = Agent(scripted([ToolCallPart('final_result', {'response': 3}, 'c1')]), output_type=int)
    result = await agent.run('x')
    result._output_tool_name = 'elsewhere'  # as if the run had ended on another output tool
    with pytest.raises(LookupError, match="No tool call found with tool name 'elsewhere'"):
        result.all_messages(output_tool_return_content='thanks')


def test_run_sync_runs_an_event_loop() -> None:
    result = Agent(scripted([TextPart('sync')])).run_sync('x')
    assert result.output == 'sync'
    assert repr(result) == "AgentRunResult(output='sync')"
    assert result.run_id == result.all_messages()[0].run_id


def test_duplicate_tool_names_are_rejected() -> None:
    from edgewise.agent import UserError

    agent = Agent(scripted(), output_type=int)

    def final_result() -> None:  # pragma: no cover - never called
        pass

    def twice() -> None:  # pragma: no cover - never called
        pass

    agent.tool_plain(twice)
    with pytest.raises(UserError, match="Tool name conflicts with existing tool: 'twice'"):
        agent.tool_plain(twice)
    with pytest.raises(UserError, match="conflicts with existing tool from the agent's output tools: 'final_result'"):
        Agent(scripted(), output_type=int, tools=[final_result])


def test_agent_reports_its_configuration() -> None:
    agent = Agent('test', output_type=int, deps_type=Deps, name='a', tools=[Tool(lambda: 1, name='one')])
    assert (agent.output_type, agent.deps_type) == (int, Deps)
    assert (
        repr(agent)
        == "Agent(model='test', name='a', end_strategy='graceful', model_settings=None, output_type=<class 'int'>)"
    )


async def test_a_run_without_prompt_or_history_sends_the_system_prompts_only() -> None:
    agent = Agent(scripted([TextPart('hi')]), system_prompt='sys')

    @agent.system_prompt
    def nothing() -> str:
        return ''

    result = await agent.run()
    assert result.all_messages()[0].parts == [SystemPromptPart('sys', timestamp=NOW)]


async def test_unknown_tools_next_to_the_output_run_in_exhaustive_mode_are_reported() -> None:
    calls = [ToolCallPart('final_result', {'response': 1}, 'c1'), ToolCallPart('nope', {}, 'c2')]
    result = await Agent(scripted(calls), output_type=int, end_strategy='exhaustive').run('x')
    assert result.output == 1
    assert [type(p).__name__ for p in result.all_messages()[-1].parts] == ['ToolReturnPart', 'RetryPromptPart']


async def test_tools_without_prepare_keep_their_definition_next_to_prepared_ones() -> None:
    seen: list[list[str]] = []

    def record(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(sorted(t.name for t in info.function_tools))
        return ModelResponse(parts=[TextPart('ok')])

    def keep(ctx: RunContext[object], tool_def: ToolDefinition) -> ToolDefinition:
        return tool_def

    agent = Agent(FunctionModel(record))
    agent.tool_plain(name='plain')(lambda: 1)
    agent.tool_plain(name='prepared', prepare=keep)(lambda: 2)
    await agent.run('x')
    assert seen == [['plain', 'prepared']]


async def test_an_unnamed_agent_takes_the_name_of_its_variable() -> None:
    weather_agent = Agent(scripted([TextPart('a')], [TextPart('b')], [TextPart('c')]))
    await weather_agent.run('x', infer_name=False)
    assert weather_agent.name is None
    async with weather_agent.iter('x') as run:
        async for _ in run:
            pass
    assert weather_agent.name == 'weather_agent'
    named = Agent(scripted([TextPart('a')]), name='kept')
    await named.run('x')
    assert named.name == 'kept'


def test_run_sync_infers_the_name_too() -> None:
    sync_agent = Agent(scripted([TextPart('a')]))
    quiet_agent = Agent(scripted([TextPart('a')]))
    quiet_agent.run_sync('x', infer_name=False)
    assert quiet_agent.name is None
    sync_agent.run_sync('x')
    assert sync_agent.name == 'sync_agent'


GLOBAL_AGENT = Agent(TestModel())


async def test_a_module_level_agent_takes_its_global_name() -> None:
    await GLOBAL_AGENT.run('x')
    assert GLOBAL_AGENT.name == 'GLOBAL_AGENT'


async def test_timestamp_is_the_last_response_time_and_still_callable() -> None:
    result = await Agent(scripted([TextPart('ok')])).run('x')
    assert result.timestamp == result.response.timestamp
    with pytest.warns(DeprecationWarning, match='`timestamp` is no longer a method'):
        called = result.timestamp()
    assert type(called) is datetime
    assert called == result.response.timestamp


async def test_early_end_skips_the_calls_of_known_and_unknown_tools_in_call_order() -> None:
    model = scripted(
        [ToolCallPart('final_result', {'response': 1}, 'c1'), ToolCallPart('nope', {}, 'c2'),
         ToolCallPart('ping', {}, 'c3')],
    )  # fmt: skip
    agent = Agent(model, output_type=int, end_strategy='early')

    @agent.tool_plain
    def ping() -> str:  # pragma: no cover - skipped: the output came first
        return 'pong'

    result = await agent.run('x')
    last = result.all_messages()[-1]
    assert [(getattr(p, 'tool_call_id', None), type(p).__name__) for p in last.parts] == [
        ('c1', 'ToolReturnPart'),
        ('c2', 'ToolReturnPart'),  # an unknown tool's call is skipped too (pydantic-ai 2.x), not retried
        ('c3', 'ToolReturnPart'),
    ]


async def test_a_function_model_keeps_the_messages_of_each_request_as_they_were_sent() -> None:
    received: list[list[ModelMessage]] = []

    async def remember(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        received.append(messages)
        if len(received) == 1:
            return ModelResponse(parts=[ToolCallPart('noop', {})])
        return ModelResponse(parts=[TextPart('done')])

    agent = Agent(FunctionModel(remember))

    @agent.tool_plain
    def noop() -> str:
        return 'ok'

    result = await agent.run('go')
    assert [len(messages) for messages in received] == [1, 3]  # not the run's history as it grew afterwards
    assert received[1] == result.all_messages()[:3]


async def test_resending_the_last_request_gives_its_prompt_to_the_run_and_this_runs_instructions() -> None:
    seen: list[object] = []
    agent = Agent(TestModel())

    @agent.instructions
    def current(ctx: RunContext[object]) -> str:
        seen.append(ctx.prompt)
        return 'New instructions'

    history: list[ModelMessage] = [
        ModelRequest(
            [UserPromptPart(['Hello', ImageUrl('https://example.com/a.jpg')]), UserPromptPart('How goes it?')],
            instructions='Old instructions',
            run_id='an-earlier-run',
        )
    ]
    result = await agent.run(message_history=history)
    assert seen[0] == ['Hello', ImageUrl('https://example.com/a.jpg'), 'How goes it?']
    request = result.all_messages()[0]
    assert isinstance(request, ModelRequest)
    assert request.instructions == 'New instructions'
    assert request.run_id == 'an-earlier-run'  # it belongs to the run that made it: not one of this run's messages
    assert result.new_messages() == result.all_messages()[1:]


async def test_run_results_compare_by_their_output() -> None:
    first = await Agent(TestModel(custom_output_text='same')).run('one')
    second = await Agent(TestModel(custom_output_text='same')).run('two')
    assert first == second  # as pydantic-ai's: the messages and ids are not compared
    assert first == AgentRunResult('same')
    assert first != AgentRunResult('other')


async def test_next_node_raises_the_error_of_the_node_that_failed_until_next_is_called_again() -> None:
    answers: list[ModelResponse | Exception] = [ValueError('the model failed'), ModelResponse([TextPart('fine')])]

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    async with Agent(FunctionModel(model)).iter('hi') as run:
        request = await run.next()
        assert isinstance(request, ModelRequestNode)
        with pytest.raises(ValueError, match='the model failed'):
            await run.next(request)
        with pytest.raises(ValueError, match='the model failed'):
            run.next_node  # noqa: B018
        # Running a node again (here a fresh request node) clears the error.
        retried = await run.next(ModelRequestNode(ModelRequest([UserPromptPart('again')])))
        assert isinstance(retried, CallToolsNode)
        assert run.next_node is retried
