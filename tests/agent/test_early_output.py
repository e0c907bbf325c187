"""`end_strategy='early'` with a response giving its own output beside tool calls (pydantic-ai 2.x): a valid image,
or text validated against a schema, ends the run when every call is of a function tool or an unknown one; the calls
are answered as skipped and never run. Also 2.x's other answers: unknown calls beside a valid output call are
skipped, a later valid output under 'exhaustive' is noted as not the output, and a step that fails keeps the
content of the `ToolReturn`s that finished."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import anyio
import pytest
from pydantic import BaseModel

from edgewise.agent import (
    Agent,
    BinaryImage,
    DeferredToolRequests,
    ModelRetry,
    NativeOutput,
    PromptedOutput,
    RunContext,
    ToolOutput,
    ToolReturn,
    capture_run_messages,
)
from edgewise.agent.capabilities import AbstractCapability
from edgewise.agent.messages import (
    FilePart,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.profiles import ModelProfile

pytestmark = pytest.mark.anyio

SKIPPED = 'Tool not executed - a final result was already processed.'
IMAGE = BinaryImage(b'image', media_type='image/png')


class Answer(BaseModel):
    value: str


def model_of(*responses: list[Any], draws: bool = False) -> FunctionModel:
    remaining = list(responses)

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(remaining.pop(0))

    return FunctionModel(answer, profile=ModelProfile(supports_image_output=True) if draws else None)


def with_lookup(agent: Agent[None, Any], ran: list[int]) -> Agent[None, Any]:
    @agent.tool_plain
    def lookup(x: int) -> int:
        ran.append(x)
        return x

    return agent


def last_request(messages: list[ModelMessage]) -> list[tuple[Any, Any]]:
    last = messages[-1]
    assert isinstance(last, ModelRequest)
    return [(getattr(p, 'tool_name', None), getattr(p, 'content', None)) for p in last.parts]


@pytest.mark.parametrize('output_type', [NativeOutput(Answer), PromptedOutput(Answer), Answer])
async def test_structured_text_beside_function_calls_is_the_output(output_type: Any) -> None:
    ran: list[int] = []
    model = model_of([TextPart('{"value": "final"}'), ToolCallPart('lookup', {'x': 1}), ToolCallPart('nope', {})])
    agent = with_lookup(Agent(model, output_type=output_type, end_strategy='early'), ran)
    result = await agent.run('go')
    assert result.output == Answer(value='final')
    assert ran == []
    assert last_request(result.all_messages()) == [('lookup', SKIPPED), ('nope', SKIPPED)]


async def test_an_image_beside_function_calls_is_the_output() -> None:
    ran: list[int] = []
    model = model_of([FilePart(IMAGE), ToolCallPart('lookup', {'x': 1})], draws=True)
    agent = with_lookup(Agent(model, output_type=BinaryImage, end_strategy='early'), ran)
    result = await agent.run('go')
    assert (result.output, ran) == (IMAGE, [])


async def test_text_that_does_not_validate_lets_the_calls_run() -> None:
    ran: list[int] = []
    model = model_of([TextPart('let me look'), ToolCallPart('lookup', {'x': 1})], [TextPart('{"value": "after"}')])
    agent = with_lookup(Agent(model, output_type=PromptedOutput(Answer), end_strategy='early'), ran)
    result = await agent.run('go')
    assert (result.output, ran, result.usage.requests) == (Answer(value='after'), [1], 2)


async def test_an_image_an_output_validator_rejects_lets_the_calls_run() -> None:
    ran: list[int] = []
    good = BinaryImage(b'good', media_type='image/png')
    model = model_of([FilePart(IMAGE), ToolCallPart('lookup', {'x': 1})], [FilePart(good)], draws=True)
    agent = with_lookup(Agent(model, output_type=BinaryImage, end_strategy='early'), ran)

    @agent.output_validator
    def only_good(image: BinaryImage) -> BinaryImage:
        if image.data != b'good':
            raise ModelRetry('not good')
        return image

    result = await agent.run('go')
    assert (result.output, ran) == (good, [1])


@pytest.mark.parametrize('output_type', [str, [Answer, str]])
async def test_plain_text_beside_function_calls_does_not_end_the_run(output_type: Any) -> None:
    ran: list[int] = []
    model = model_of([TextPart('looking'), ToolCallPart('lookup', {'x': 1})], [TextPart('found')])
    agent = with_lookup(Agent(model, output_type=output_type, end_strategy='early'), ran)
    assert ((await agent.run('go')).output, ran) == ('found', [1])


async def test_an_output_tool_call_wins_over_an_image_beside_it() -> None:
    model = model_of([FilePart(IMAGE), ToolCallPart('final_output', {'value': 'tool'})], draws=True)
    output: Any = [ToolOutput(Answer, name='final_output'), BinaryImage]
    agent = Agent(model, output_type=output, end_strategy='early')
    assert (await agent.run('go')).output == Answer(value='tool')


async def test_a_deferred_call_beside_structured_text_is_given_back() -> None:
    model = model_of([TextPart('{"value": "final"}'), ToolCallPart('ask', {})])
    output: Any = [NativeOutput(Answer), DeferredToolRequests]
    agent = Agent(model, output_type=output, end_strategy='early')

    @agent.tool_plain(requires_approval=True)
    def ask() -> str:  # pragma: no cover - never approved
        return 'asked'

    result = await agent.run('go')
    assert isinstance(result.output, DeferredToolRequests)
    assert [c.tool_name for c in result.output.approvals] == ['ask']


@dataclass
class Shout(AbstractCapability[Any]):
    """Upper-cases the output (an output hook, so the output goes through the hooks)."""

    async def after_output_process(self, ctx: RunContext[Any], *, output_context: Any, output: Any) -> Any:
        return Answer(value=output.value.upper()) if isinstance(output, Answer) else output


async def test_structured_text_beside_function_calls_goes_through_the_output_hooks() -> None:
    ran: list[int] = []
    model = model_of([TextPart('{"value": "final"}'), ToolCallPart('lookup', {'x': 1})])
    agent = Agent(model, output_type=NativeOutput(Answer), end_strategy='early', capabilities=[Shout()])
    result = await with_lookup(agent, ran).run('go')
    assert (result.output, ran) == (Answer(value='FINAL'), [])


async def test_an_image_beside_function_calls_goes_through_the_output_hooks() -> None:
    ran: list[int] = []
    model = model_of([FilePart(IMAGE), ToolCallPart('lookup', {'x': 1})], draws=True)
    agent = Agent(model, output_type=BinaryImage, end_strategy='early', capabilities=[Shout()])
    result = await with_lookup(agent, ran).run('go')
    assert (result.output, ran) == (IMAGE, [])


async def test_an_unknown_call_beside_a_valid_output_call_is_skipped_not_retried() -> None:
    model = model_of([ToolCallPart('nope', {}), ToolCallPart('final_result', {'value': 'v'})])
    result = await Agent(model, output_type=Answer, end_strategy='early').run('go')
    assert result.output == Answer(value='v')
    assert last_request(result.all_messages()) == [('final_result', 'Final result processed.'), ('nope', SKIPPED)]


async def test_a_later_valid_output_under_exhaustive_is_noted_as_not_the_output() -> None:
    model = model_of([ToolCallPart('final_result', {'value': 'a'}), ToolCallPart('final_result', {'value': 'b'})])
    result = await Agent(model, output_type=Answer, end_strategy='exhaustive').run('go')
    assert result.output == Answer(value='a')
    assert last_request(result.all_messages()) == [
        ('final_result', 'Final result processed.'),
        ('final_result', 'Output tool processed, but its value will not be the final result of the agent run.'),
    ]


async def test_a_failed_step_keeps_the_content_of_the_tool_returns_that_finished() -> None:
    model = model_of([ToolCallPart('good', {}, 'c1'), ToolCallPart('bad', {}, 'c2')])
    agent = Agent(model, end_strategy='exhaustive')

    @agent.tool_plain(sequential=True)
    def good() -> ToolReturn:
        return ToolReturn(return_value=10, content='extra context')

    @agent.tool_plain(sequential=True)
    def bad() -> int:
        raise RuntimeError('tool-failure')

    with capture_run_messages() as messages, pytest.raises(RuntimeError, match='tool-failure'):
        await agent.run('go')
    interrupted = messages[-1]
    assert isinstance(interrupted, ModelRequest)
    assert interrupted.state == 'interrupted'
    assert [(type(p), getattr(p, 'content', None)) for p in interrupted.parts] == [
        (ToolReturnPart, 10),
        (UserPromptPart, 'extra context'),
    ]


async def test_a_batch_failing_keeps_the_content_of_its_finished_tool_returns() -> None:
    model = model_of([ToolCallPart('good', {}, 'c1'), ToolCallPart('bad', {}, 'c2')])
    agent = Agent(model)
    good_done = anyio.Event()

    @agent.tool_plain
    async def good() -> ToolReturn:
        good_done.set()
        return ToolReturn(return_value=10, content='extra context')

    @agent.tool_plain
    async def bad() -> int:
        await good_done.wait()  # fails once the other call of its batch has finished
        raise RuntimeError('tool-failure')

    with capture_run_messages() as messages, pytest.raises(RuntimeError, match='tool-failure'):
        await agent.run('go')
    interrupted = messages[-1]
    assert isinstance(interrupted, ModelRequest)
    assert interrupted.state == 'interrupted'
    assert [(type(p), getattr(p, 'content', None)) for p in interrupted.parts] == [
        (ToolReturnPart, 10),
        (UserPromptPart, 'extra context'),
    ]
