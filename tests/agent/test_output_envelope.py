"""Native and prompted output of several types: the `{"result": {"kind": ..., "data": ...}}` envelope the model is
asked for, how its answer is read (and retried), and partial outputs while it streams."""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from typing import Any

import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from inline_snapshot import snapshot
from pydantic import BaseModel

from edgewise.agent import Agent, NativeOutput, PromptedOutput, RunContext
from edgewise.agent._output.envelope import EnvelopeBuilder, read_envelope
from edgewise.agent._output.partial_json import IncrementalJsonParser
from edgewise.agent._output.partial_output import INVALID
from edgewise.agent._output.schema import build_output_schema
from edgewise.agent.messages import ModelMessage, ModelResponse, RetryPromptPart, TextPart
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.test import TestModel
from edgewise.agent.output import OutputObjectDefinition
from edgewise.agent.profiles import ModelProfile

from ._helpers import scripted
from ._streaming_helpers import streamed

pytestmark = pytest.mark.anyio


class City(BaseModel):
    """A city."""

    name: str
    country: str


@dataclass
class Point:
    x: int
    y: int


# Several output types in one marker want explicit generics from the type checker: these take them as they are.
Native: Any = NativeOutput
Prompted: Any = PromptedOutput


def _object_def(output_type: Any) -> OutputObjectDefinition:
    object_def = build_output_schema(output_type).object_def
    assert object_def is not None
    return object_def


def _answer(kind: str, data: Any) -> str:
    return json.dumps({'result': {'kind': kind, 'data': data}})


def test_several_types_are_asked_for_in_an_envelope_of_kind_and_data() -> None:
    object_def = _object_def(Native([City, Point, int]))
    assert (object_def.name, object_def.description, object_def.strict) == (None, None, None)
    assert object_def.json_schema == snapshot(
        {
            'type': 'object',
            'properties': {
                'result': {
                    'anyOf': [
                        {
                            'type': 'object',
                            'properties': {
                                'kind': {'type': 'string', 'const': 'City'},
                                'data': {
                                    'properties': {'name': {'type': 'string'}, 'country': {'type': 'string'}},
                                    'required': ['name', 'country'],
                                    'type': 'object',
                                },
                            },
                            'required': ['kind', 'data'],
                            'additionalProperties': False,
                            'title': 'City',
                            'description': 'A city.',
                        },
                        {
                            'type': 'object',
                            'properties': {
                                'kind': {'type': 'string', 'const': 'Point'},
                                'data': {
                                    'properties': {'x': {'type': 'integer'}, 'y': {'type': 'integer'}},
                                    'required': ['x', 'y'],
                                    'type': 'object',
                                },
                            },
                            'required': ['kind', 'data'],
                            'additionalProperties': False,
                            'title': 'Point',
                        },
                        {
                            'type': 'object',
                            'properties': {
                                'kind': {'type': 'string', 'const': 'int'},
                                'data': {
                                    'properties': {'response': {'type': 'integer'}},
                                    'required': ['response'],
                                    'type': 'object',
                                },
                            },
                            'required': ['kind', 'data'],
                            'additionalProperties': False,
                            'title': 'int',
                        },
                    ]
                }
            },
            'required': ['result'],
            'additionalProperties': False,
        }
    )


def _kinds(object_def: OutputObjectDefinition) -> list[tuple[str, str]]:
    choices = object_def.json_schema['properties']['result']['anyOf']
    return [(choice['properties']['kind']['const'], choice['title']) for choice in choices]


def test_kinds_of_one_name_are_numbered_from_the_second() -> None:
    class Other(BaseModel):
        model_config = pydantic.ConfigDict(title='City')
        code: str

    assert _kinds(_object_def(Prompted([list[str], list[int], City, Other, int, int]))) == [
        ('list', 'list'),
        ('list_2', 'list'),
        ('City', 'City'),
        ('City_2', 'City'),
        ('int', 'int'),
        ('int_2', 'int'),
    ]


def test_a_union_and_none_among_the_types_are_kinds_too() -> None:
    assert _kinds(_object_def(Native(City | None))) == [('City', 'City'), ('NoneType', 'NoneType')]


def test_name_description_and_strict_are_the_whole_schemas() -> None:
    object_def = _object_def(Native([City, Point], name='place', description='A place.', strict=True))
    assert (object_def.name, object_def.description, object_def.strict) == ('place', 'A place.', True)
    assert 'title' not in object_def.json_schema
    assert 'description' not in object_def.json_schema


def test_definitions_are_merged_at_the_top_and_a_clash_is_renamed_after_the_type() -> None:
    class Inner(BaseModel):
        a: int

    class First(BaseModel):
        inner: Inner

    def second_type() -> type[BaseModel]:
        class Inner(BaseModel):
            b: str

        class Second(BaseModel):
            inner: Inner
            again: Inner

        return Second

    schema = _object_def(Prompted([First, second_type(), First])).json_schema
    assert sorted(schema['$defs']) == ['Inner', 'Second_Inner_1']
    datas = [choice['properties']['data'] for choice in schema['properties']['result']['anyOf']]
    assert datas[0]['properties'] == {'inner': {'$ref': '#/$defs/Inner'}}
    assert datas[1]['properties'] == {
        'inner': {'$ref': '#/$defs/Second_Inner_1'},
        'again': {'$ref': '#/$defs/Second_Inner_1'},
    }
    assert datas[2] == datas[0]  # the same type twice shares its definitions
    assert schema['$defs']['Second_Inner_1']['properties'] == {'b': {'type': 'string'}}


def test_a_function_among_the_types_is_a_kind_with_its_docstring() -> None:
    def move(dx: int, dy: int) -> Point:
        """Move from the origin."""
        return Point(dx, dy)  # pragma: no cover

    choice = _object_def(Native([City, move])).json_schema['properties']['result']['anyOf'][1]
    assert (choice['properties']['kind'], choice['title'], choice['description']) == (
        {'type': 'string', 'const': 'move'},
        'move',
        'Move from the origin.',
    )
    assert choice['properties']['data']['required'] == ['dx', 'dy']


def _read(text: str) -> tuple[str, dict[str, Any]]:
    return read_envelope(text, {'City': None, 'Point': None})


def test_reading_an_envelope_gives_kind_and_data() -> None:
    assert _read(_answer('Point', {'x': 1})) == ('Point', {'x': 1})
    assert _read('{"result": {"data": {}, "kind": "City"}, "more": 1}') == ('City', {})


@pytest.mark.parametrize(
    ('text', 'errors'),
    [
        ('{"kind": "City", "data": {}}', [('missing', ('result',), 'Field required')]),
        ('{"result": {"kind": "City"}}', [('missing', ('result', 'data'), 'Field required')]),
        ('{"result": {"kind": "City", "data": 3}}', [('dict_type', ('result', 'data'), 'Input should be an object')]),
        (
            '{"result": {"kind": 3, "data": {}}}',
            [('string_type', ('result', 'kind'), 'Input should be a valid string')],
        ),
        (
            '{"result": {"kind": "Town", "data": {}}}',
            [('literal_error', ('result', 'kind'), "Input should be 'City' or 'Point'")],
        ),
    ],
    ids=['no-result', 'no-data', 'data-not-object', 'kind-not-string', 'unknown-kind'],
)
def test_an_answer_that_is_no_envelope_fails_validation_where_it_is_wrong(
    text: str, errors: list[tuple[str, tuple[str, ...], str]]
) -> None:
    with pytest.raises(pydantic.ValidationError) as info:
        _read(text)
    assert [(e['type'], e['loc'], e['msg']) for e in info.value.errors()] == errors


@pytest.mark.parametrize('marker', [NativeOutput, PromptedOutput])
async def test_the_answer_is_the_value_of_the_kind_named(marker: Any) -> None:
    answers = [
        [TextPart(_answer('City', {'name': 'Rome', 'country': 'Italy'}))],
        [TextPart(_answer('int', {'response': 7}))],
        [TextPart(_answer('NoneType', {'response': None}))],
        [TextPart('```json\n' + _answer('Point', {'x': 1, 'y': 2}) + '\n```')],
    ]
    agent = Agent(scripted(*answers), output_type=marker([City, int, Point, None]))
    outputs = [(await agent.run('x')).output for _ in answers]
    assert outputs == [City(name='Rome', country='Italy'), 7, None, Point(1, 2)]


async def test_an_output_function_among_the_types_is_called_with_its_data() -> None:
    def move(ctx: RunContext[int], dx: int, dy: int) -> Point:
        return Point(ctx.deps + dx, ctx.deps + dy)

    agent = Agent(scripted([TextPart(_answer('move', {'dx': 1, 'dy': 2}))]), deps_type=int)
    result = await agent.run('x', deps=10, output_type=Native([City, move]))
    assert result.output == Point(11, 12)


async def test_a_wrong_answer_gets_a_retry_prompt_with_errors_located_in_the_data() -> None:
    agent = Agent(
        scripted(
            [TextPart('{"kind": "Point", "data": {"x": 1, "y": 2}}')],
            [TextPart(_answer('Spot', {}))],
            [TextPart(_answer('Point', {'x': 1, 'y': 'two'}))],
            [TextPart(_answer('Point', {'x': 1, 'y': 2}))],
        ),
        output_type=Prompted([City, Point]),
        retries={'output': 3},
    )
    result = await agent.run('x')
    assert result.output == Point(1, 2)
    retries = [part for m in result.all_messages() for part in m.parts if isinstance(part, RetryPromptPart)]
    assert [[(e['loc'], e['msg']) for e in r.content if isinstance(e, dict)] for r in retries] == [
        [(('result',), 'Field required')],
        [(('result', 'kind'), "Input should be 'City' or 'Point'")],
        [(('y',), 'Input should be a valid integer, unable to parse string as an integer')],
    ]


async def test_prompted_output_puts_the_envelope_in_its_template() -> None:
    seen: list[AgentInfo] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(info)
        return ModelResponse(parts=[TextPart(_answer('int', {'response': 1}))])

    spec = Prompted([City, int], name='answer', template='Reply with: {schema}')
    assert (await Agent(FunctionModel(answer), output_type=spec).run('x')).output == 1
    instructions = seen[0].instructions
    assert instructions is not None
    assert instructions.startswith('Reply with: {"type": "object", "properties": {')
    schema = json.loads(instructions.removeprefix('Reply with: '))
    assert schema['title'] == 'answer'
    assert schema['properties']['result']['anyOf'][1]['properties']['kind'] == {'type': 'string', 'const': 'int'}
    no_template = Prompted([City, int], template=False)
    assert (await Agent(FunctionModel(answer), output_type=no_template).run('x')).output == 1
    assert seen[1].instructions is None


async def test_the_test_model_answers_with_a_valid_envelope() -> None:
    assert (await Agent(TestModel(), output_type=Native([City, Point])).run('x')).output == City(name='a', country='a')
    assert (await Agent(TestModel(), output_type=Prompted([int, str])).run('x')).output == 0


async def test_plain_types_asked_natively_by_the_models_profile_use_the_envelope() -> None:
    seen: list[AgentInfo] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(info)
        return ModelResponse(parts=[TextPart(_answer('Point', {'x': 3, 'y': 4}))])

    profile = ModelProfile(supports_json_schema_output=True, default_structured_output_mode='native')
    plain_types: Any = [City, Point]
    result = await Agent(FunctionModel(answer, profile=profile), output_type=plain_types).run('x')
    assert result.output == Point(3, 4)
    assert seen[0].model_request_parameters.output_mode == 'native'
    assert seen[0].model_request_parameters.output_object is not None
    assert _kinds(seen[0].model_request_parameters.output_object) == [('City', 'City'), ('Point', 'Point')]


def _chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


async def test_streaming_shows_partial_outputs_of_the_kind_named() -> None:
    text = _answer('City', {'name': 'Rome', 'country': 'Italy'})
    agent = Agent(streamed(_chunks(text, 5)), output_type=Native([City, Point]))
    async with agent.run_stream('x') as result:
        outputs = [output async for output in result.stream_output(debounce_by=None)]
    # chunks: ... '"Rome', '", "c', 'ountr', 'y": "', 'Italy', '"}}}': the last partial value, then the output
    assert outputs == [
        City(name='Rome', country=''),
        City(name='Rome', country='Italy'),
        City(name='Rome', country='Italy'),
        City(name='Rome', country='Italy'),
    ]


async def test_streaming_a_kind_that_comes_after_its_data_shows_once_the_kind_is_known() -> None:
    text = '{"result": {"data": {"response": [1, 2, 3]}, "kind": "list"}}'
    agent = Agent(streamed(_chunks(text, 4)), output_type=Prompted([City, list[int]]))
    async with agent.run_stream('x') as result:
        outputs = [output async for output in result.stream_output(debounce_by=None)]
    assert outputs == [[1, 2, 3], [1, 2, 3]]


async def test_streaming_calls_an_output_function_kind_with_the_partial_data() -> None:
    def total(ctx: RunContext[None], values: list[int]) -> str:
        return f'{"partial" if ctx.partial_output else "final"} {sum(values)}'

    text = _answer('total', {'values': [1, 2, 3]})
    agent = Agent(streamed(_chunks(text, 3)), output_type=Native([City, total]))
    async with agent.run_stream('x') as result:
        outputs = [output async for output in result.stream_output(debounce_by=None)]
    assert outputs == ['partial 1', 'partial 3', 'partial 6', 'final 6']


async def test_streaming_calls_a_single_native_output_function_with_the_partial_arguments() -> None:
    def total(ctx: RunContext[None], values: list[int]) -> str:
        return f'{"partial" if ctx.partial_output else "final"} {sum(values)}'

    text = json.dumps({'values': [1, 2, 3]})
    agent = Agent(streamed(_chunks(text, 3)), output_type=Native(total))
    async with agent.run_stream('x') as result:
        outputs = [output async for output in result.stream_output(debounce_by=None)]
    assert outputs == ['partial 0', 'partial 1', 'partial 3', 'partial 6', 'final 6']


async def test_streaming_with_an_output_function_kind_shows_other_kinds_as_they_grow() -> None:
    def total(values: list[int]) -> int:
        return sum(values)  # pragma: no cover

    text = _answer('City', {'name': 'Rome', 'country': 'Italy'})
    agent = Agent(streamed(_chunks(text, 6)), output_type=Native([City, total]))
    async with agent.run_stream('x') as result:
        outputs = [output async for output in result.stream_output(debounce_by=None)]
    assert outputs[-1] == City(name='Rome', country='Italy')
    assert all(isinstance(output, City) and output.name == 'Rome' for output in outputs)
    assert len(outputs) > 2


def _partials(member_types: Any, text: str) -> list[Any]:
    schema = build_output_schema(Native(member_types))
    processor = schema.object_processor
    assert processor is not None
    made = processor.partial_builder()
    assert made is not None
    builder, unwrap = made
    assert isinstance(builder, EnvelopeBuilder)
    parser = IncrementalJsonParser(builder)
    values: list[Any] = []
    for char in text:
        parser.feed(char)
        value = builder.value(parser)
        if value is not INVALID and (not values or values[-1] != unwrap(value)):
            values.append(unwrap(value))
    return values


@pytest.mark.parametrize(
    'text',
    [
        '{"result": {"kind": "Town", "data": {"x": 1, "y": 2}}}',
        '{"result": {"kind": 5, "data": {"x": 1, "y": 2}}}',
        '{"result": {"kind": "Point", "kind": "Point", "data": {"x": 1, "y": 2}}}',
        '["result", {"kind": "Point"}]',
    ],
    ids=['unknown-kind', 'kind-not-string', 'kind-twice', 'no-object'],
)
def test_no_partial_output_shows_for_an_answer_that_cannot_be_read(text: str) -> None:
    assert _partials([City, Point], text) == []


def test_partial_outputs_grow_with_the_data_and_ignore_other_keys() -> None:
    text = '{"note": {"kind": "City"}, "result": {"kind": "Point", "extra": [1], "data": {"x": 12, "y": 3}}}'
    assert _partials([City, Point], text) == [Point(12, 3)]
    text = '{"result": {"kind": "list", "data": {"response": ["ab", "c"]}}}'
    assert _partials([City, list[str]], text) == [[], [''], ['a'], ['ab'], ['ab', ''], ['ab', 'c']]


def test_a_second_data_shows_no_more_partial_outputs() -> None:
    text = '{"result": {"kind": "Point", "data": {"x": 1, "y": 2}, "data": {"x": 5, "y": 6}}}'
    assert _partials([City, Point], text) == [Point(1, 2)]


_answers = st.one_of(
    st.builds(
        lambda name, country: ('City', {'name': name, 'country': country}), st.text(max_size=8), st.text(max_size=8)
    ),
    st.builds(lambda x, y: ('Point', {'x': x, 'y': y}), st.integers(), st.integers()),
    st.builds(lambda items: ('list', {'response': items}), st.lists(st.text(max_size=4), max_size=4)),
)


@settings(max_examples=60, deadline=None)
@given(answer=_answers, kind_last=st.booleans(), cuts=st.lists(st.integers(0, 500), max_size=8))
def test_any_split_of_an_envelope_ends_with_the_validated_value(
    answer: tuple[str, dict[str, Any]], kind_last: bool, cuts: list[int]
) -> None:
    kind, data = answer
    result = {'data': data, 'kind': kind} if kind_last else {'kind': kind, 'data': data}
    text = json.dumps({'result': result})
    schema = build_output_schema(Native([City, Point, list[str]]))
    processor = schema.object_processor
    assert processor is not None
    made = processor.partial_builder()
    assert made is not None
    builder, unwrap = made
    parser = IncrementalJsonParser(builder)
    bounds = sorted({0, len(text), *(cut % (len(text) + 1) for cut in cuts)})
    last: Any = INVALID
    for start, end in itertools.pairwise(bounds):
        parser.feed(text[start:end])
        value = builder.value(parser)
        if value is not INVALID:
            last = unwrap(value)
    chosen = processor.validate(text)
    assert last == chosen.value
