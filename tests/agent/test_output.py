"""Output kinds: tool output for structured types, unions, scalars, functions, native, prompted and text output."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
from inline_snapshot import snapshot
from pydantic import BaseModel
from typing_extensions import TypedDict

from edgewise.agent import (
    Agent,
    DeferredToolRequests,
    ModelRetry,
    NativeOutput,
    PromptedOutput,
    RunContext,
    TextOutput,
    ToolOutput,
    UserError,
)
from edgewise.agent._output.schema import build_output_schema
from edgewise.agent.messages import ModelMessage, ModelResponse, RetryPromptPart, TextPart, ToolCallPart
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.tools import ToolDefinition

from ._helpers import CALL_ID, NOW, scripted

pytestmark = pytest.mark.anyio


class City(BaseModel):
    name: str


class Country(BaseModel):
    """A country."""

    code: str


@dataclass
class Point:
    x: int


class Pair(TypedDict):
    a: int


def test_a_model_gets_one_output_tool_named_final_result() -> None:
    schema = build_output_schema(City)
    assert (schema.mode, schema.allow_text_output) == ('tool', False)
    assert schema.tool_defs == [
        ToolDefinition(
            name='final_result',
            parameters_json_schema={
                'properties': {'name': {'type': 'string'}},
                'required': ['name'],
                'title': 'City',
                'type': 'object',
            },
            description='The final response which ends this conversation',
            kind='output',
            toolset_id='<output>',
        )
    ]


def test_a_docstring_becomes_the_output_tool_description() -> None:
    assert build_output_schema(Country).tool_defs[0].description == 'A country.'


def test_unions_and_lists_of_types_get_one_tool_per_member() -> None:
    specs: list[Any] = [City | Country, [City, Country]]
    for spec in specs:
        schema = build_output_schema(spec)
        assert [(t.name, t.description) for t in schema.tool_defs] == [
            ('final_result_City', 'City: The final response which ends this conversation'),
            ('final_result_Country', 'A country.'),
        ]


def test_scalars_are_wrapped_as_a_response_object() -> None:
    tool_def = build_output_schema(int).tool_defs[0]
    assert tool_def.parameters_json_schema == {
        'properties': {'response': {'type': 'integer'}},
        'required': ['response'],
        'type': 'object',
    }
    assert tool_def.outer_typed_dict_key == 'response'


def test_str_in_a_union_allows_text_next_to_tools() -> None:
    schema = build_output_schema([str, City])
    assert (schema.mode, schema.allow_text_output, list(schema.tools)) == ('tool', True, ['final_result'])


def test_tool_output_sets_name_and_description() -> None:
    schema = build_output_schema([ToolOutput(City, name='city', description='A city.'), Country])
    assert [(t.name, t.description) for t in schema.tool_defs] == [
        ('city', 'A city.'),
        ('final_result_Country', 'A country.'),
    ]


def test_a_docstring_moves_from_the_schema_to_the_tool_description() -> None:
    tool_def = build_output_schema(Country).tool_defs[0]
    assert 'description' not in tool_def.parameters_json_schema
    assert tool_def.description == 'A country.'


def test_a_given_description_comes_before_the_docstring() -> None:
    tool_def = build_output_schema(ToolOutput(Country, description='Where it is')).tool_defs[0]
    assert tool_def.description == 'Where it is. A country.'


def test_an_output_function_docstring_is_the_tool_description_not_a_schema_field() -> None:
    def pick(code: str) -> str:
        """Pick a country by code."""
        return code

    tool_def = build_output_schema(ToolOutput(pick, description='Choose')).tool_defs[0]
    assert 'description' not in tool_def.parameters_json_schema
    assert tool_def.description == 'Choose. Pick a country by code.'


def test_field_titles_are_dropped_inside_definitions_of_wrapped_outputs() -> None:
    tool_def = build_output_schema(list[City]).tool_defs[0]
    assert tool_def.parameters_json_schema == {
        '$defs': {
            'City': {
                'properties': {'name': {'type': 'string'}},
                'required': ['name'],
                'title': 'City',
                'type': 'object',
            }
        },
        'properties': {'response': {'items': {'$ref': '#/$defs/City'}, 'type': 'array'}},
        'required': ['response'],
        'type': 'object',
    }


def test_output_tools_of_one_name_are_numbered_from_the_second() -> None:
    schema = build_output_schema([ToolOutput(City, name='same'), ToolOutput(Country, name='same')])
    assert list(schema.tools) == ['same', 'same_2']
    # Types of one name (generic containers) get distinct names the same way, as in pydantic-ai.
    assert list(build_output_schema(list[str] | list[int] | bool).tools) == snapshot(
        ['final_result_list', 'final_result_list_2', 'final_result_bool']
    )


@pytest.mark.parametrize('marker', [NativeOutput, PromptedOutput])
def test_native_or_prompted_output_cannot_be_mixed_with_other_outputs(marker: type[Any]) -> None:
    with pytest.raises(UserError) as info:
        build_output_schema([marker(City), str])
    assert str(info.value) == f'`{marker.__name__}` must be the only output type.'


@pytest.mark.parametrize('marker', [NativeOutput, PromptedOutput])
def test_deferred_tool_requests_inside_native_or_prompted_output_is_refused(marker: type[Any]) -> None:
    name = marker.__name__
    with pytest.raises(UserError) as info:
        build_output_schema(marker([City, DeferredToolRequests]))
    assert str(info.value) == (
        f'`{name}` cannot contain `DeferredToolRequests`. Include it alongside the {name[:-6].lower()} output marker '
        f'instead: `output_type=[{name}(...), DeferredToolRequests]`'
    )


@pytest.mark.parametrize('marker', [NativeOutput, PromptedOutput])
def test_deferred_tool_requests_beside_native_or_prompted_output_is_allowed(marker: type[Any]) -> None:
    schema = build_output_schema([marker(City), DeferredToolRequests])
    assert (schema.mode, schema.allows_deferred_tools) == (marker.__name__[:-6].lower(), True)


@pytest.mark.parametrize(
    ('output_type', 'args', 'expected'),
    [
        (Point, {'x': 1}, Point(x=1)),
        (Pair, '{"a": 2}', {'a': 2}),
        (list[int], {'response': [1, 2]}, [1, 2]),
        (City | Country, {'code': 'FR'}, Country(code='FR')),
    ],
)
async def test_structured_outputs_validate_from_their_output_tool(output_type: Any, args: Any, expected: Any) -> None:
    tool_name = build_output_schema(output_type).tool_defs[-1].name
    result = await Agent(scripted([ToolCallPart(tool_name, args)]), output_type=output_type).run('x')
    assert result.output == expected


async def test_an_output_function_gets_the_arguments_and_can_ask_for_a_retry() -> None:
    def to_city(ctx: RunContext[None], name: str) -> City:
        if name == 'bad':
            raise ModelRetry('not a city')
        return City(name=name.title())

    bad, good = [ToolCallPart('final_result', {'name': 'bad'}, 'c1')], [ToolCallPart('final_result', {'name': 'paris'})]
    agent = Agent(scripted(bad, good), output_type=to_city)
    result = await agent.run('x')
    assert result.output == City(name='Paris')
    assert result.all_messages()[2].parts == [
        RetryPromptPart('not a city', tool_name='final_result', tool_call_id='c1', timestamp=NOW)
    ]


async def test_a_failed_output_tool_keeps_its_retry_prompt_when_a_later_one_succeeds() -> None:
    calls = [ToolCallPart('final_result_City', {}, 'c1'), ToolCallPart('final_result_Country', {'code': 'FR'}, 'c2')]
    result = await Agent(scripted(calls), output_type=[City, Country]).run('x')
    assert result.output == Country(code='FR')
    assert [(p.tool_name, getattr(p, 'content', None)) for p in result.all_messages()[-1].parts] == [  # type: ignore[union-attr]
        ('final_result_City', [{'type': 'missing', 'loc': ('name',), 'msg': 'Field required', 'input': {}}]),
        ('final_result_Country', 'Final result processed.'),
    ]


async def test_text_output_functions_turn_text_into_the_output() -> None:
    def words(text: str) -> list[str]:
        return text.split()

    async def upper(ctx: RunContext[None], text: str) -> str:
        if text == 'retry':
            raise ModelRetry('say more')
        return text.upper()

    assert (await Agent(scripted([TextPart('a b')]), output_type=TextOutput(words)).run('x')).output == ['a', 'b']
    result = await Agent(scripted([TextPart('retry')], [TextPart('ok')]), output_type=TextOutput(upper)).run('x')
    assert result.output == 'OK'
    assert result.all_messages()[2].parts == [RetryPromptPart('say more', tool_call_id=CALL_ID, timestamp=NOW)]


async def test_native_output_parses_the_json_text_against_the_schema() -> None:
    seen: list[Any] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(info.model_request_parameters.output_object)
        return ModelResponse(parts=[TextPart('{"name": "Rome"}')])

    result = await Agent(FunctionModel(answer), output_type=NativeOutput(City, description='The city')).run('x')
    assert result.output == City(name='Rome')
    assert (seen[0].name, seen[0].description, seen[0].json_schema['title']) == ('City', 'The city', 'City')


async def test_prompted_output_adds_the_schema_to_the_instructions_and_accepts_fenced_json() -> None:
    instructions: list[str | None] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        instructions.append(info.instructions)
        return ModelResponse(parts=[TextPart('```json\n{"result": {"kind": "Country", "data": {"code": "IT"}}}\n```')])

    spec = PromptedOutput([City, Country], template='Schema: {schema}')
    result = await Agent(FunctionModel(answer), output_type=spec).run('x')
    assert result.output == Country(code='IT')
    assert instructions[0] is not None
    assert instructions[0].startswith('Schema: {"type": "object", "properties": {"result": {"anyOf": [')


async def test_prompted_output_retries_invalid_json_without_a_tool_name() -> None:
    result = await Agent(
        scripted([TextPart('nope')], [TextPart('{"name": "Oslo"}')]), output_type=PromptedOutput(City)
    ).run('x')
    assert result.output == City(name='Oslo')
    retry = result.all_messages()[2].parts[0]
    assert isinstance(retry, RetryPromptPart)
    assert retry.tool_name is None
    # The output instructions go to the model with each request, not into the history.
    assert [getattr(message, 'instructions', None) for message in result.all_messages()] == [None] * 4


async def test_the_run_output_type_overrides_the_agent_output_type() -> None:
    agent = Agent(scripted([ToolCallPart('final_result', {'response': 5})]))
    result = await agent.run('x', output_type=int)
    assert result.output == 5


def test_the_output_schema_class_says_the_output_mode() -> None:
    from edgewise.agent._output.schema import (
        NativeOutputSchema,
        PromptedOutputSchema,
        TextOutputProcessor,
        TextOutputSchema,
        ToolOutputSchema,
        build_output_schema,
    )
    from edgewise.agent.output import NativeOutput, PromptedOutput

    assert type(build_output_schema(str)) is TextOutputSchema
    assert type(build_output_schema(int)) is ToolOutputSchema
    assert type(build_output_schema([int, str])) is ToolOutputSchema
    assert type(build_output_schema(NativeOutput(int))) is NativeOutputSchema
    assert type(build_output_schema(PromptedOutput(int))) is PromptedOutputSchema
    assert build_output_schema([int, str]).allows_text
    assert not build_output_schema(int).allows_text
    schema = TextOutputSchema[str]()
    assert (schema.mode, schema.allow_text_output, schema.text_processor) == ('text', True, TextOutputProcessor())


@pytest.mark.anyio
async def test_the_text_output_processor_applies_the_text_output_function() -> None:
    from edgewise.agent import RunContext, TextOutput
    from edgewise.agent._output.schema import build_output_schema
    from edgewise.agent.models.test import TestModel
    from edgewise.agent.usage import RunUsage

    def shout(text: str) -> str:
        return text.upper()

    schema = build_output_schema(TextOutput(shout))
    ctx = RunContext(deps=None, model=TestModel(), usage=RunUsage())
    assert schema.text_processor is not None
    assert await schema.text_processor.process('shout', ctx) == 'SHOUT'
    assert await build_output_schema(str).process_text('as is', ctx) == 'as is'


async def test_a_wrapped_output_sent_as_a_json_string_is_accepted() -> None:
    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        args = json.dumps({'response': json.dumps([{'name': 'Oslo'}, {'name': 'Rome'}])})
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])

    result = await Agent(FunctionModel(answer), output_type=list[City]).run('x')
    assert result.output == [City(name='Oslo'), City(name='Rome')]


async def test_json_text_for_several_output_types_is_read_in_the_envelope_naming_its_kind() -> None:
    text = '{"result": {"kind": "Country", "data": {"code": "FR"}}}'
    result = await Agent(scripted([TextPart(text)]), output_type=[City, Country]).run('x')
    assert result.output == Country(code='FR')


async def test_json_text_for_several_output_types_that_does_not_validate_gets_a_retry_prompt() -> None:
    bad = '{"result": {"kind": "City", "data": {"code": "FR"}}}'
    good = '{"result": {"kind": "City", "data": {"name": "Paris"}}}'
    result = await Agent(scripted([TextPart(bad)], [TextPart(good)]), output_type=[City, Country]).run('x')
    assert result.output == City(name='Paris')
    retry = result.all_messages()[2].parts[0]
    assert isinstance(retry, RetryPromptPart)
    assert retry.content == [{'type': 'missing', 'loc': ('name',), 'msg': 'Field required', 'input': {'code': 'FR'}}]
