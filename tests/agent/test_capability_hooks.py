"""The capability hooks around tools, model requests and whole runs: `PrepareTools`, `PrepareOutputTools`,
`wrap_model_request`, `wrap_run`, and `CombinedCapability` applying several in order."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from edgewise.agent import Agent, RunContext, ToolDefinition, UnexpectedModelBehavior, UserError
from edgewise.agent.capabilities import (
    AbstractCapability,
    CombinedCapability,
    DynamicCapability,
    ModelRequestContext,
    PrepareOutputTools,
    PrepareTools,
    WrapModelRequestHandler,
    WrapRunHandler,
)
from edgewise.agent.exceptions import PrepareReturnedNoneError
from edgewise.agent.messages import ModelMessage, ModelResponse, RetryPromptPart, TextPart, ToolCallPart
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.test import TestModel
from edgewise.agent.output import ToolOutput
from edgewise.agent.result import AgentRunResult

pytestmark = pytest.mark.anyio


def _tool_agent(*capabilities: AbstractCapability[object]) -> tuple[Agent[None, str], list[list[str]]]:
    """An agent with tools `alpha` and `beta` whose model records the tool names it is shown, then answers."""
    shown: list[list[str]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        shown.append([t.name for t in info.function_tools])
        return ModelResponse(parts=[TextPart('done')])

    agent = Agent(FunctionModel(model), capabilities=list(capabilities))

    @agent.tool_plain
    def alpha() -> str:
        """Alpha."""
        return 'a'

    @agent.tool_plain
    def beta() -> str:
        """Beta."""
        return 'b'

    return agent, shown


async def test_prepare_tools_filters_the_tools_the_model_sees() -> None:
    async def only_alpha(ctx: RunContext[object], tool_defs: list[ToolDefinition]) -> list[ToolDefinition]:
        return [t for t in tool_defs if t.name == 'alpha']

    agent, shown = _tool_agent(PrepareTools(only_alpha))
    await agent.run('go')
    assert shown == [['alpha']]


async def test_a_tool_hidden_by_prepare_tools_cannot_be_called() -> None:
    def calls_beta(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart('beta', {})])
        return ModelResponse(parts=[TextPart('done')])

    agent = Agent(FunctionModel(calls_beta), capabilities=[PrepareTools(lambda ctx, defs: [])])

    @agent.tool_plain
    def beta() -> str:
        return 'b'

    result = await agent.run('go')
    retry = result.all_messages()[2].parts[0]
    assert isinstance(retry, RetryPromptPart)
    assert retry.content == "Unknown tool name: 'beta'. No tools available."


async def test_prepare_tools_can_change_a_description() -> None:
    seen: list[str | None] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.extend(t.description for t in info.function_tools)
        return ModelResponse(parts=[TextPart('done')])

    def reword(ctx: RunContext[object], tool_defs: list[ToolDefinition]) -> list[ToolDefinition]:
        return [ToolDefinition(**{**t.__dict__, 'description': f'step {ctx.run_step}'}) for t in tool_defs]

    agent = Agent(FunctionModel(model), capabilities=[PrepareTools(reword)])

    @agent.tool_plain
    def alpha() -> str:
        """Alpha."""
        return 'a'

    await agent.run('go')
    assert seen == ['step 1']


async def test_prepare_tools_cannot_add_a_tool() -> None:
    extra = ToolDefinition(name='invented', parameters_json_schema={'type': 'object', 'properties': {}})
    agent, _ = _tool_agent(PrepareTools(lambda ctx, defs: [*defs, extra]))
    with pytest.raises(UserError, match='Prepare function cannot add or rename tools'):
        await agent.run('go')


async def test_prepare_tools_returning_none_is_an_error_naming_the_function() -> None:
    def hide_all(ctx: RunContext[object], defs: list[ToolDefinition]) -> list[ToolDefinition] | None:
        return None

    agent, shown = _tool_agent(PrepareTools(hide_all))
    with pytest.raises(UserError) as info:
        await agent.run('go')
    assert str(info.value) == (
        "Prepare function 'hide_all' returned `None`; return `[]` to expose no tools, or return `tool_defs` to pass "
        'them through unchanged.'
    )
    assert isinstance(info.value, TypeError)  # as pydantic-ai 2.x's upgrade guide names it
    assert isinstance(info.value, PrepareReturnedNoneError)
    assert shown == []


async def test_prepare_output_tools_sees_only_output_tools_with_the_output_retry_count() -> None:
    seen: list[tuple[list[str], int, int]] = []

    def prep(ctx: RunContext[object], tool_defs: list[ToolDefinition]) -> list[ToolDefinition]:
        seen.append(([t.name for t in tool_defs], ctx.retry, ctx.max_retries))
        return tool_defs

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart('final_result', {'response': 'not a number'})])
        return ModelResponse(parts=[ToolCallPart('final_result', {'response': 3})])

    agent = Agent(FunctionModel(model), output_type=ToolOutput(int), retries={'output': 2},
                  capabilities=[PrepareOutputTools(prep)])  # fmt: skip

    @agent.tool_plain
    def alpha() -> str:
        return 'a'

    assert (await agent.run('go')).output == 3
    assert seen == [(['final_result'], 0, 2), (['final_result'], 1, 2)]


async def test_an_output_tool_hidden_by_prepare_output_tools_is_not_offered_nor_accepted() -> None:
    offered: list[list[str]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        offered.append([t.name for t in info.output_tools])
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart('final_result', {'response': 1})])
        return ModelResponse(parts=[TextPart('plain')])

    def hide_first(ctx: RunContext[object], tool_defs: list[ToolDefinition]) -> list[ToolDefinition]:
        return [] if ctx.run_step == 1 else tool_defs

    agent: Agent[None, int | str] = Agent(
        FunctionModel(model), output_type=[int, str], capabilities=[PrepareOutputTools(hide_first)]
    )
    result = await agent.run('go')
    assert result.output == 'plain'
    assert offered == [[], ['final_result']]
    retry = result.all_messages()[2].parts[0]
    assert isinstance(retry, RetryPromptPart)
    assert retry.tool_name == 'final_result'


async def test_prepare_output_tools_cannot_add_a_tool() -> None:
    extra = ToolDefinition(name='invented', parameters_json_schema={'type': 'object', 'properties': {}})
    agent = Agent(TestModel(), output_type=int, capabilities=[PrepareOutputTools(lambda ctx, defs: [*defs, extra])])
    with pytest.raises(UserError, match='Prepare function cannot add or rename tools'):
        await agent.run('go')


class Tag(AbstractCapability[object]):
    """Wraps each model request, recording its name around the call and appending it to the text answer."""

    def __init__(self, name: str, log: list[str]) -> None:
        self.name = name
        self.log = log

    async def wrap_model_request(
        self, ctx: RunContext[object], *, request_context: ModelRequestContext, handler: WrapModelRequestHandler
    ) -> ModelResponse:
        self.log.append(f'{self.name} in')
        response = await handler(request_context)
        self.log.append(f'{self.name} out')
        part = response.parts[0]
        assert isinstance(part, TextPart)
        return ModelResponse(parts=[TextPart(f'{part.content}+{self.name}')])


async def test_wrap_model_request_hooks_nest_the_first_outermost() -> None:
    log: list[str] = []
    agent = Agent(TestModel(custom_output_text='hi'), capabilities=[Tag('a', log), Tag('b', log)])
    result = await agent.run('go')
    assert result.output == 'hi+b+a'
    assert log == ['a in', 'b in', 'b out', 'a out']
    assert result.all_messages()[-1].parts == [TextPart('hi+b+a')]


async def test_wrap_model_request_can_answer_without_calling_the_model() -> None:
    class Canned(AbstractCapability[object]):
        async def wrap_model_request(
            self, ctx: RunContext[object], *, request_context: ModelRequestContext, handler: WrapModelRequestHandler
        ) -> ModelResponse:
            return ModelResponse(parts=[TextPart('canned')])

    def never(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise AssertionError('the model was called')

    assert (await Agent(FunctionModel(never), capabilities=[Canned()]).run('go')).output == 'canned'


async def test_wrap_model_request_may_change_the_request() -> None:
    class Settings(AbstractCapability[object]):
        async def wrap_model_request(
            self, ctx: RunContext[object], *, request_context: ModelRequestContext, handler: WrapModelRequestHandler
        ) -> ModelResponse:
            request_context.model_settings = {'temperature': 0.25}
            return await handler(request_context)

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart(str(info.model_settings))])

    assert (await Agent(FunctionModel(model), capabilities=[Settings()]).run('go')).output == "{'temperature': 0.25}"


class Around(AbstractCapability[object]):
    def __init__(self, log: list[Any]) -> None:
        self.log = log

    async def wrap_run(self, ctx: RunContext[object], *, handler: WrapRunHandler) -> AgentRunResult[Any]:
        self.log.append('start')
        result = await handler()
        self.log.append(('end', result.output))
        return result


async def test_wrap_run_surrounds_the_run() -> None:
    log: list[Any] = []
    result = await Agent(TestModel(custom_output_text='hi'), capabilities=[Around(log)]).run('go')
    assert result.output == 'hi'
    assert log == ['start', ('end', 'hi')]


async def test_wrap_run_surrounds_a_run_driven_by_iter() -> None:
    log: list[Any] = []
    agent = Agent(TestModel(custom_output_text='hi'), capabilities=[Around(log)])
    async with agent.iter('go') as run:
        assert log == ['start']
        async for _ in run:
            pass
    assert log == ['start', ('end', 'hi')]
    assert run.result is not None
    assert run.result.output == 'hi'


async def test_wrap_run_that_does_not_call_the_handler_skips_the_run() -> None:
    class Skip(AbstractCapability[object]):
        async def wrap_run(self, ctx: RunContext[object], *, handler: WrapRunHandler) -> AgentRunResult[Any]:
            return AgentRunResult('cached')

    def never(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise AssertionError('the model was called')

    assert (await Agent(FunctionModel(never), capabilities=[Skip()]).run('go')).output == 'cached'


async def test_wrap_run_can_recover_from_the_runs_error() -> None:
    class Recover(AbstractCapability[object]):
        async def wrap_run(self, ctx: RunContext[object], *, handler: WrapRunHandler) -> AgentRunResult[Any]:
            try:
                return await handler()
            except UnexpectedModelBehavior as exc:
                return AgentRunResult(f'recovered: {exc.message}')

    def bad(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[ToolCallPart('missing', {})])

    result = await Agent(FunctionModel(bad), capabilities=[Recover()]).run('go')
    assert result.output == "recovered: Tool 'missing' exceeded max retries count of 1"


async def test_an_unrecovered_error_comes_out_of_the_run() -> None:
    log: list[Any] = []

    def bad(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[ToolCallPart('missing', {})])

    with pytest.raises(UnexpectedModelBehavior, match="Tool 'missing' exceeded max retries count of 1"):
        await Agent(FunctionModel(bad), capabilities=[Around(log)]).run('go')
    assert log == ['start']


async def test_leaving_an_unfinished_iter_cancels_wrap_run_and_runs_its_cleanup() -> None:
    log: list[str] = []

    class Cleanup(AbstractCapability[object]):
        async def wrap_run(self, ctx: RunContext[object], *, handler: WrapRunHandler) -> AgentRunResult[Any]:
            try:
                return await handler()
            finally:
                log.append('cleaned up')

    agent = Agent(TestModel(), capabilities=[Cleanup()])
    async with agent.iter('go') as run:
        await run.next()
    assert run.result is None
    assert log == ['cleaned up']


async def test_cancelling_a_run_waiting_in_wrap_run_runs_its_cleanup() -> None:
    log: list[str] = []
    started = anyio.Event()

    class Stuck(AbstractCapability[object]):
        async def wrap_run(self, ctx: RunContext[object], *, handler: WrapRunHandler) -> AgentRunResult[Any]:
            try:
                started.set()
                await anyio.sleep_forever()
                raise AssertionError('unreachable')
            finally:
                log.append('cleaned up')

    agent = Agent(TestModel(), capabilities=[Stuck()])
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.run, 'go')
        await started.wait()
        tg.cancel_scope.cancel()
    assert log == ['cleaned up']


async def test_combined_capability_applies_each_hook_in_order() -> None:
    order: list[str] = []

    class Named(AbstractCapability[object]):
        def __init__(self, name: str) -> None:
            self.name = name

        async def prepare_tools(self, ctx: RunContext[object], tool_defs: list[ToolDefinition]) -> list[ToolDefinition]:
            order.append(self.name)
            return tool_defs

        def get_instructions(self) -> str:
            return f'be {self.name}'

    combined = CombinedCapability([Named('first'), Named('second'), AbstractCapability()])
    assert combined.overrides('prepare_tools')
    assert not combined.overrides('wrap_run')
    assert combined.get_instructions() == ['be first', 'be second']
    agent, shown = _tool_agent(combined)
    await agent.run('go')
    assert order == ['first', 'second']
    assert shown == [['alpha', 'beta']]
    assert CombinedCapability([]).get_instructions() is None


async def test_wrap_model_request_wraps_streamed_requests_too() -> None:
    log: list[str] = []
    agent = Agent(TestModel(custom_output_text='hi there'), capabilities=[Tag('a', log)])
    async with agent.run_stream('go') as stream:
        assert [t async for t in stream.stream_text(delta=True, debounce_by=None)] == ['hi ', 'there']
    assert log == ['a in', 'a out']
    assert stream.all_messages()[-1].parts == [TextPart('hi there+a')]


async def test_a_streamed_request_answered_by_the_hook_streams_its_answer_whole() -> None:
    class Canned(AbstractCapability[object]):
        async def wrap_model_request(
            self, ctx: RunContext[object], *, request_context: ModelRequestContext, handler: WrapModelRequestHandler
        ) -> ModelResponse:
            return ModelResponse(parts=[TextPart('canned')])

    async with Agent(TestModel(), capabilities=[Canned()]).run_stream('go') as stream:
        assert await stream.get_output() == 'canned'


async def test_cancelling_a_stream_waiting_in_wrap_model_request_runs_its_cleanup() -> None:
    log: list[str] = []
    started = anyio.Event()

    class Stuck(AbstractCapability[object]):
        async def wrap_model_request(
            self, ctx: RunContext[object], *, request_context: ModelRequestContext, handler: WrapModelRequestHandler
        ) -> ModelResponse:
            try:
                started.set()
                await anyio.sleep_forever()
                raise AssertionError('unreachable')
            finally:
                log.append('cleaned up')

    agent = Agent(TestModel(), capabilities=[Stuck()])

    async def consume() -> None:
        async with agent.run_stream_events('go') as events:
            async for _ in events:
                pass

    async with anyio.create_task_group() as tg:
        tg.start_soon(consume)
        await started.wait()
        tg.cancel_scope.cancel()
    assert log == ['cleaned up']


def test_the_agents_root_capability_holds_its_capabilities() -> None:
    first, second = Around([]), PrepareTools(lambda ctx, defs: defs)

    def per_run(ctx: RunContext[object]) -> None:
        return None

    agent = Agent(TestModel(), capabilities=[first, second, per_run])
    # a function of the run context stands there as the `DynamicCapability` that makes it per run
    assert list(agent.root_capability.capabilities) == [first, second, DynamicCapability(per_run)]
    assert agent.root_capability is agent.root_capability
