"""Tool options of pydantic-ai 1.x: one model-like parameter flattened, docstring returns, return schemas,
`args_validator`, `timeout`, an unannotated context parameter, renaming conflicts, custom schema generators."""

from __future__ import annotations

import dataclasses
import json
import re
import threading
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from pydantic import BaseModel, ValidationError
from pydantic.json_schema import GenerateJsonSchema
from typing_extensions import TypedDict

from edgewise.agent import Agent, ModelRetry, RunContext, Tool, ToolDefinition, ToolOutput, UserError
from edgewise.agent._functions.schema import takes_run_context
from edgewise.agent.messages import ModelMessage, ModelResponse, RetryPromptPart, TextPart, ToolCallPart
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.test import TestModel

pytestmark = pytest.mark.anyio


class City(BaseModel):
    """A city to look up."""

    name: str
    country: str = 'FR'


def lookup(city: City) -> str:
    return f'{city.name}, {city.country}'


def test_one_model_parameter_shows_the_model_its_schema_and_description() -> None:
    tool = Tool(lookup)
    assert tool.tool_def.parameters_json_schema == {
        'properties': {'name': {'type': 'string'}, 'country': {'default': 'FR', 'type': 'string'}},
        'required': ['name'],
        'title': 'City',
        'type': 'object',
    }
    assert tool.description == 'A city to look up.'
    assert tool.function_schema.validator.validate_python({'name': 'Lyon'}) == {'city': City(name='Lyon')}


def test_flattened_arguments_may_also_come_wrapped_under_the_parameter_name() -> None:
    schema = Tool(lookup).function_schema
    assert schema.validate({'city': {'name': 'Nice'}}) == {'city': City(name='Nice')}
    assert schema.validate('{"name": "Pau", "country": "FR"}') == {'city': City(name='Pau')}

    # the model's own field of the parameter's name wins when the input is valid as it is
    assert Tool(unbox).function_schema.validate({'box': 3}) == {'box': Box(box=3)}
    with pytest.raises(ValidationError):
        Tool(lookup).function_schema.validate({'city': {'country': 'FR'}})


class Box(BaseModel):
    box: int


def unbox(box: Box) -> int:  # pragma: no cover - never called
    return box.box


class Score(TypedDict):
    a: int
    """The first score."""


def score(data: Score) -> int:  # pragma: no cover - never called
    return data['a']


def test_a_typed_dict_parameter_is_flattened_too() -> None:
    assert Tool(score).tool_def.parameters_json_schema == {
        'properties': {'a': {'description': 'The first score.', 'type': 'integer'}},
        'required': ['a'],
        'title': 'Score',
        'type': 'object',
    }


async def test_a_model_parameter_beside_others_stays_a_property() -> None:
    def place(city: City, zoom: int) -> str:
        return f'{city.name}@{zoom}'

    tool = Tool(place)
    assert tool.tool_def.parameters_json_schema['properties'] == {
        'city': {'$ref': '#/$defs/City'},
        'zoom': {'type': 'integer'},
    }
    assert tool.tool_def.parameters_json_schema['$defs']['City']['properties']['name'] == {'type': 'string'}
    result = await Agent(TestModel(), tools=[tool]).run('x')
    assert result.output == '{"place":"a@0"}'


def test_a_returns_section_is_part_of_the_description() -> None:
    def area(width: int, height: int) -> int:  # pragma: no cover - never called
        """Compute an area.

        Args:
            width: The width.
            height: The height.

        Returns:
            int: The area.
        """
        return width * height

    def nothing_but_returns() -> str:  # pragma: no cover - never called
        """
        Returns:
            The text.
        """
        return ''

    assert Tool(area).description == (
        '<summary>Compute an area.</summary>\n<returns>\n<type>int</type>\n<description>The area.</description>\n'
        '</returns>'
    )
    assert Tool(nothing_but_returns).description == '<returns>\n<description>The text.</description>\n</returns>'


def test_return_schemas_come_from_the_return_annotation() -> None:
    def get_city() -> City:  # pragma: no cover - never called
        return City(name='x')

    def untyped():  # pragma: no cover - never called
        return None

    def none() -> None:  # pragma: no cover - never called
        pass

    assert Tool(get_city).tool_def.return_schema == {
        'description': 'A city to look up.',
        'properties': {'name': {'type': 'string'}, 'country': {'default': 'FR', 'type': 'string'}},
        'required': ['name'],
        'title': 'City',
        'type': 'object',
    }
    assert Tool(untyped).tool_def.return_schema == {}
    assert Tool(none).tool_def.return_schema == {'type': 'null'}


def test_an_unsupported_return_type_warns_and_is_unconstrained() -> None:
    class Opaque:
        pass

    def opaque() -> Opaque:  # pragma: no cover - never called
        return Opaque()

    with pytest.warns(UserWarning, match="Could not generate return schema for .*opaque'"):
        tool = Tool(opaque)
    assert tool.tool_def.return_schema == {}


async def test_the_return_schema_reaches_the_model_only_when_the_tool_asks() -> None:
    def double(x: int) -> int:
        return 2 * x

    model = TestModel()
    await Agent(model, tools=[Tool(double), Tool(double, name='shown', include_return_schema=True)]).run('x')
    assert model.last_model_request_parameters is not None
    plain, shown = model.last_model_request_parameters.function_tools
    assert (plain.return_schema, plain.description) == (None, None)
    assert (shown.return_schema, shown.description) == (None, 'Return schema:\n\n{\n  "type": "integer"\n}')

    def untyped(x: int):
        return x

    with pytest.warns(UserWarning, match='no meaningful return schema'):
        await Agent(TestModel(), tools=[Tool(untyped, include_return_schema=True)]).run('x')


async def test_args_validator_sees_the_validated_arguments_and_can_ask_for_a_retry() -> None:
    seen: list[tuple[str | None, int, int]] = []

    async def at_most_ten(ctx: RunContext[object], x: int) -> None:
        seen.append((ctx.tool_name, ctx.retry, x))
        if x > 10:
            raise ModelRetry('x must be at most 10')

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart('square', {'x': 12})])
        if len(messages) == 3:
            return ModelResponse(parts=[ToolCallPart('square', '{"x": "3"}')])
        return ModelResponse(parts=[TextPart('done')])

    def square(x: int) -> int:
        return x * x

    agent = Agent(FunctionModel(answer), tools=[Tool(square, args_validator=at_most_ten)])
    result = await agent.run('x')
    assert seen == [('square', 0, 12), ('square', 1, 3)]
    retry = result.all_messages()[2].parts[0]
    assert isinstance(retry, RetryPromptPart)
    assert retry.content == 'x must be at most 10'
    assert result.all_messages()[4].parts[0].content == 9  # type: ignore[union-attr]


async def test_a_tool_running_past_its_timeout_is_a_retry() -> None:
    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart('slow', {})])
        return ModelResponse(parts=[TextPart('gave up')])

    agent = Agent(FunctionModel(answer))

    @agent.tool_plain(timeout=0.01)
    async def slow() -> str:
        await anyio.sleep_forever()
        raise AssertionError('unreachable')  # pragma: no cover

    result = await agent.run('x')
    retry = result.all_messages()[2].parts[0]
    assert isinstance(retry, RetryPromptPart)
    assert retry.content == 'Timed out after 0.01 seconds.'
    assert agent._tools.function_toolset.tools['slow'].tool_def.timeout == 0.01


async def test_a_sync_tool_running_past_its_timeout_is_a_retry_and_its_thread_is_left_to_finish() -> None:
    release = threading.Event()
    finished = threading.Event()

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart('blocking', {})])
        return ModelResponse(parts=[TextPart('gave up')])

    agent = Agent(FunctionModel(answer))

    @agent.tool_plain(timeout=0.01)
    def blocking() -> str:
        release.wait(timeout=30)  # bounded: the test releases it once the run has given up on it
        finished.set()
        return 'late'

    result = await agent.run('x')
    release.set()

    retry = result.all_messages()[2].parts[0]
    assert isinstance(retry, RetryPromptPart)
    assert (retry.tool_name, retry.content) == ('blocking', 'Timed out after 0.01 seconds.')
    assert result.output == 'gave up'
    assert finished.wait(timeout=30)


async def test_a_prepare_function_may_change_the_timeout() -> None:
    async def no_limit(ctx: RunContext[object], tool_def: ToolDefinition) -> ToolDefinition:
        return dataclasses.replace(tool_def, timeout=None)

    async def quick() -> str:
        await anyio.lowlevel.checkpoint()
        return 'ok'

    result = await Agent(TestModel(), tools=[Tool(quick, timeout=5, prepare=no_limit)]).run('x')
    assert result.output == '{"quick":"ok"}'


async def test_last_attempt_tells_the_tool_its_budget_is_spent() -> None:
    agent = Agent(TestModel(), retries=2)
    attempts: list[bool] = []

    @agent.tool
    def stubborn(ctx: RunContext[object]) -> str:
        attempts.append(ctx.last_attempt)
        if not ctx.last_attempt:
            raise ModelRetry('again')
        return 'finally'

    assert (await agent.run('x')).output == '{"stubborn":"finally"}'
    assert attempts == [False, False, True]


async def test_an_unannotated_first_parameter_of_a_context_tool_is_the_run_context() -> None:
    agent = Agent(TestModel(), deps_type=int)

    @agent.tool
    def with_ctx(ctx, x: int) -> str:
        return f'{ctx.deps}-{x}'

    assert (await agent.run('x', deps=4)).output == '{"with_ctx":"4-0"}'


async def test_renaming_a_tool_onto_another_is_a_user_error() -> None:
    async def to_bar(ctx: RunContext[object], tool_def: ToolDefinition) -> ToolDefinition:
        return dataclasses.replace(tool_def, name='bar')

    def bar() -> None:  # pragma: no cover - never called
        pass

    def foo() -> None:  # pragma: no cover - never called
        pass

    first = Agent(TestModel(), tools=[Tool(bar), Tool(foo, prepare=to_bar)])
    with pytest.raises(UserError, match=r"Renaming tool 'foo' to 'bar' conflicts with existing tool\."):
        await first.run('x')
    second = Agent(TestModel(), tools=[Tool(foo, prepare=to_bar), Tool(bar)])
    with pytest.raises(UserError, match=r"Tool name conflicts with previously renamed tool: 'bar'\."):
        await second.run('x')


async def test_a_tool_subclass_may_prepare_its_own_definition() -> None:
    class Hidden(Tool[int]):
        async def prepare_tool_def(self, ctx: RunContext[int]) -> ToolDefinition | None:
            return None if ctx.deps == 42 else await super().prepare_tool_def(ctx)

    def shown(x: int) -> int:
        return x

    agent = Agent(TestModel(), tools=[Hidden(shown)], deps_type=int)
    assert (await agent.run('x', deps=1)).output == '{"shown":0}'
    assert (await agent.run('x', deps=42)).output == 'success (no tool calls)'


async def test_a_custom_schema_generator_and_variadic_keywords() -> None:
    class Titled(GenerateJsonSchema):
        def field_title_should_be_set(self, schema: Any) -> bool:
            return True

    def tagged(x: str = 'a', **tags: int) -> str:
        return json.dumps({'x': x, **tags})

    tool = Tool(tagged, schema_generator=Titled)
    assert tool.tool_def.parameters_json_schema == {
        'additionalProperties': {'type': 'integer'},
        'properties': {'x': {'default': 'a', 'title': 'X', 'type': 'string'}},
        'type': 'object',
    }
    assert (
        await Agent(TestModel(), tools=[tool]).run('x')
    ).output == '{"tagged":"{\\"x\\": \\"a\\", \\"additionalProperty\\": 0}"}'


def test_the_run_context_is_recognised_when_another_hint_does_not_resolve() -> None:
    class Local(BaseModel):  # not resolvable from the module (annotations are strings here)
        x: int

    def uses_ctx(ctx: RunContext[object], local: Local) -> str:  # pragma: no cover - never called
        return str(local)

    assert takes_run_context(uses_ctx) is True


@pytest.mark.parametrize(
    ('make', 'message'),
    [
        (lambda: Tool(lambda: None, max_retries=-1), 'max_retries must be >= 0, got -1'),
        (lambda: Tool(lambda: None, timeout=0), 'timeout must be > 0, got 0'),
        (lambda: Tool(lambda: None, timeout=-1.5), 'timeout must be > 0, got -1.5'),
        (lambda: ToolOutput(int, max_retries=-2), 'max_retries must be >= 0, got -2'),
    ],
)
def test_retry_budgets_and_timeouts_out_of_range_are_refused(make: Any, message: str) -> None:
    # as pydantic-ai 2.x checks them when the tool (or output tool) is made
    with pytest.raises(UserError, match=re.escape(message)):
        make()


def test_zero_retries_and_no_timeout_are_accepted() -> None:
    assert Tool(lambda: None, max_retries=0, timeout=None).max_retries == 0
    assert ToolOutput(int, max_retries=0).max_retries == 0
