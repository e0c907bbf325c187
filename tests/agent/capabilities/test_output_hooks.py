"""The output hooks of capabilities as a run calls them: `*_output_validate` around parsing a structured output,
`*_output_process` around the output function and the output validators, for every kind of output."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from edgewise.agent import Agent, ModelRetry, RunContext
from edgewise.agent.capabilities import (
    AbstractCapability,
    Hooks,
    OutputContext,
    RawOutput,
    WrapOutputProcessHandler,
    WrapOutputValidateHandler,
)
from edgewise.agent.messages import (
    BinaryImage,
    FilePart,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
)
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.test import TestModel
from edgewise.agent.output import NativeOutput, PromptedOutput, TextOutput
from edgewise.agent.profiles import ModelProfile

pytestmark = pytest.mark.anyio


class City(BaseModel):
    name: str
    population: int


@dataclass
class Recorder(AbstractCapability[Any]):
    """Records each output hook call as (hook, mode, value), changing nothing."""

    name: str = 'r'
    calls: list[tuple[str, str, Any]] = field(default_factory=list)

    async def before_output_validate(self, ctx: RunContext[Any], *, output_context: OutputContext, output: Any) -> Any:
        self.calls.append((f'{self.name}.before_validate', output_context.mode, output))
        return output

    async def wrap_output_validate(
        self, ctx: RunContext[Any], *, output_context: OutputContext, output: RawOutput,
        handler: WrapOutputValidateHandler,
    ) -> Any:  # fmt: skip
        self.calls.append((f'{self.name}.wrap_validate', output_context.mode, output))
        return await handler(output)

    async def after_output_validate(self, ctx: RunContext[Any], *, output_context: OutputContext, output: Any) -> Any:
        self.calls.append((f'{self.name}.after_validate', output_context.mode, output))
        return output

    async def before_output_process(self, ctx: RunContext[Any], *, output_context: OutputContext, output: Any) -> Any:
        self.calls.append((f'{self.name}.before_process', output_context.mode, output))
        return output

    async def wrap_output_process(
        self, ctx: RunContext[Any], *, output_context: OutputContext, output: Any, handler: WrapOutputProcessHandler
    ) -> Any:
        self.calls.append((f'{self.name}.wrap_process', output_context.mode, output))
        return await handler(output)

    async def after_output_process(self, ctx: RunContext[Any], *, output_context: OutputContext, output: Any) -> Any:
        self.calls.append((f'{self.name}.after_process', output_context.mode, output))
        return output


async def test_tool_output_goes_through_validate_then_process_hooks() -> None:
    recorder = Recorder()
    agent = Agent(TestModel(), output_type=City, capabilities=[recorder])
    result = await agent.run('a city')
    city = City(name='a', population=0)
    assert result.output == city
    assert recorder.calls == [
        ('r.before_validate', 'tool', {'name': 'a', 'population': 0}),
        ('r.wrap_validate', 'tool', {'name': 'a', 'population': 0}),
        ('r.after_validate', 'tool', city),
        ('r.before_process', 'tool', city),
        ('r.wrap_process', 'tool', city),
        ('r.after_process', 'tool', city),
    ]


async def test_text_output_goes_through_process_hooks_only() -> None:
    recorder = Recorder()
    agent = Agent(TestModel(custom_output_text='hello'), capabilities=[recorder])
    assert (await agent.run('hi')).output == 'hello'
    assert recorder.calls == [
        ('r.before_process', 'text', 'hello'),
        ('r.wrap_process', 'text', 'hello'),
        ('r.after_process', 'text', 'hello'),
    ]


@pytest.mark.parametrize('marker', [NativeOutput, PromptedOutput])
async def test_json_text_output_goes_through_validate_hooks(marker: Any) -> None:
    recorder = Recorder()
    answer = '{"name": "Oslo", "population": 700000}'

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart(answer)])

    agent = Agent(FunctionModel(model), output_type=marker(City), capabilities=[recorder])
    result = await agent.run('a city')
    assert result.output == City(name='Oslo', population=700000)
    assert [c[:2] for c in recorder.calls] == [
        ('r.before_validate', marker.__name__.removesuffix('Output').lower()),
        ('r.wrap_validate', marker.__name__.removesuffix('Output').lower()),
        ('r.after_validate', marker.__name__.removesuffix('Output').lower()),
        ('r.before_process', marker.__name__.removesuffix('Output').lower()),
        ('r.wrap_process', marker.__name__.removesuffix('Output').lower()),
        ('r.after_process', marker.__name__.removesuffix('Output').lower()),
    ]
    assert recorder.calls[0][2] == answer


async def test_hooks_nest_first_capability_outermost() -> None:
    first, second = Recorder('a'), Recorder('b')
    agent = Agent(TestModel(custom_output_text='x'), capabilities=[first, second])
    await agent.run('hi')
    assert [c[0] for c in first.calls] == ['a.before_process', 'a.wrap_process', 'a.after_process']
    # one shared log of the order: before in order, wrap first-outermost, after in reverse
    log: list[str] = []
    first.calls, second.calls = log, log  # type: ignore[assignment]
    await agent.run('hi')
    assert [c[0] for c in log] == [
        'a.before_process', 'b.before_process', 'a.wrap_process', 'b.wrap_process', 'b.after_process',
        'a.after_process',
    ]  # fmt: skip


async def test_before_output_validate_repairs_the_raw_output() -> None:
    async def repair(ctx: RunContext[None], *, output_context: OutputContext, output: RawOutput) -> RawOutput:
        assert isinstance(output, dict)
        return {**output, 'population': 42}

    agent = Agent(TestModel(), output_type=City, capabilities=[Hooks(before_output_validate=repair)])
    assert (await agent.run('hi')).output == City(name='a', population=42)


async def test_on_output_validate_error_returns_a_value_instead() -> None:
    seen: list[type[BaseException]] = []

    async def recover(
        ctx: RunContext[None], *, output_context: OutputContext, output: RawOutput, error: ValidationError | ModelRetry
    ) -> Any:
        seen.append(type(error))
        return City(name='fallback', population=1)

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {'name': 'x'})])

    agent = Agent(FunctionModel(model), output_type=City, capabilities=[Hooks(output_validate_error=recover)])
    assert (await agent.run('hi')).output == City(name='fallback', population=1)
    assert seen == [ValidationError]


async def test_model_retry_from_an_output_hook_asks_the_model_again() -> None:
    answers = iter(['first', 'second'])

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart(next(answers))])

    async def reject_first(ctx: RunContext[None], *, output_context: OutputContext, output: Any) -> Any:
        if output == 'first':
            raise ModelRetry('not that one')
        return output

    agent = Agent(FunctionModel(model), capabilities=[Hooks(after_output_process=reject_first)])
    result = await agent.run('hi')
    assert result.output == 'second'
    retry = result.all_messages()[2]
    assert isinstance(retry, ModelRequest)
    assert isinstance(retry.parts[0], RetryPromptPart)
    assert retry.parts[0].content == 'not that one'


async def test_wrap_output_process_wraps_the_output_function_and_validators() -> None:
    order: list[str] = []

    def shout(text: str) -> str:
        order.append('function')
        return text.upper()

    async def wrap(
        ctx: RunContext[None], *, output_context: OutputContext, output: Any, handler: WrapOutputProcessHandler
    ) -> Any:
        order.append('wrap in')
        assert output_context.has_function
        assert output_context.function_name == 'shout'
        result = await handler(output)
        order.append('wrap out')
        return f'<{result}>'

    agent = Agent(
        TestModel(custom_output_text='hey'), output_type=TextOutput(shout), capabilities=[Hooks(output_process=wrap)]
    )

    @agent.output_validator
    def validate(output: str) -> str:
        order.append('validator')
        return output

    assert (await agent.run('hi')).output == '<HEY>'
    assert order == ['wrap in', 'function', 'validator', 'wrap out']


async def test_on_output_process_error_recovers_from_an_output_function_error() -> None:
    def broken(city: City) -> str:
        raise RuntimeError('boom')

    async def recover(ctx: RunContext[None], *, output_context: OutputContext, output: Any, error: Exception) -> Any:
        return f'recovered {output.name} from {error}'

    agent = Agent(TestModel(), output_type=broken, capabilities=[Hooks(output_process_error=recover)])
    assert (await agent.run('hi')).output == 'recovered a from boom'


async def test_output_process_error_without_recovery_fails_the_run() -> None:
    def broken(city: City) -> str:
        raise RuntimeError('boom')

    agent = Agent(TestModel(), output_type=broken, capabilities=[Recorder()])
    with pytest.raises(RuntimeError, match='boom'):
        await agent.run('hi')


async def test_image_output_goes_through_process_hooks() -> None:
    image = BinaryImage(data=b'\x89PNG', media_type='image/png')
    recorder = Recorder()

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[FilePart(image)])

    model_ = FunctionModel(model, profile=ModelProfile(supports_image_output=True))
    agent = Agent(model_, output_type=BinaryImage, capabilities=[recorder])
    assert (await agent.run('draw')).output == image
    assert [c[:2] for c in recorder.calls] == [
        ('r.before_process', 'image'), ('r.wrap_process', 'image'), ('r.after_process', 'image'),
    ]  # fmt: skip


async def test_output_context_of_an_output_tool_call() -> None:
    contexts: list[OutputContext] = []

    async def keep(ctx: RunContext[None], *, output_context: OutputContext, output: Any) -> Any:
        contexts.append(output_context)
        return output

    agent = Agent(TestModel(), output_type=City, capabilities=[Hooks(before_output_validate=keep)])
    await agent.run('hi')
    (context,) = contexts
    assert context.mode == 'tool'
    assert context.output_type is City
    assert not context.has_function
    assert context.tool_call is not None
    assert context.tool_call.tool_name == 'final_result'
    assert context.tool_def is not None
    assert context.tool_def.kind == 'output'
    assert context.object_def is not None
    assert context.object_def.name == 'final_result'
