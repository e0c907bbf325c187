"""The arguments `TestModel` makes up validate against the schema they were made from."""

from __future__ import annotations

import datetime
import ipaddress
import uuid
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Optional, Union, cast

import pytest
from annotated_types import Ge, Gt, Le, Lt, MaxLen, MinLen, MultipleOf
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import AnyUrl, BaseModel, Field, HttpUrl, Json, create_model

from edgewise.agent import Agent, RunContext
from edgewise.agent.models.test import TestModel, _chars, _JsonSchemaTestData

pytestmark = pytest.mark.anyio


def _made_up(model: type[BaseModel], seed: int = 0) -> Any:
    return _JsonSchemaTestData(model.model_json_schema(), seed).generate()


class _Nested(BaseModel):
    name: str
    count: Annotated[int, Ge(1)]


_SCALARS: list[Any] = [
    str,
    int,
    float,
    bool,
    bytes,
    None,
    Any,
    datetime.date,
    datetime.datetime,
    datetime.time,
    datetime.timedelta,
    uuid.UUID,
    ipaddress.IPv4Address,
    ipaddress.IPv6Address,
    ipaddress.IPv4Network,
    ipaddress.IPv6Interface,
    AnyUrl,
    HttpUrl,
    Literal['x', 'y', 'z'],
    Literal[0],
    _Nested,
    Json[list[int]],
    Annotated[str, Field(pattern=r'^[A-Z]{2}-\d{3,4}$')],
    Annotated[str, Field(pattern=r'^(cat|dog)s?$')],
    Annotated[str, Field(pattern=r'^[^a-z]+$')],
]


def _annotated(base: Any, parts: list[Any]) -> Any:
    return cast(Any, Annotated)[(base, *parts)]


def _unique_set(item: Any, size: int) -> Any:
    return Annotated[set[item], MinLen(size)]


@st.composite
def _constrained_int(draw: st.DrawFn) -> Any:
    low = draw(st.integers(-50, 50))
    width = draw(st.integers(0, 30))
    parts: list[Any] = [draw(st.sampled_from([Ge(low), Gt(low - 1)])), draw(st.sampled_from([Le(low + width),
                        Lt(low + width + 1)]))]  # fmt: skip
    if draw(st.booleans()):
        parts = [draw(st.sampled_from(parts))]
    step = draw(st.sampled_from([None, 2, 3, 5]))
    if step and (width >= step or len(parts) == 1):
        parts.append(MultipleOf(step))
    return _annotated(int, parts)


@st.composite
def _constrained_float(draw: st.DrawFn) -> Any:
    low = draw(st.floats(-100, 100, allow_nan=False).map(lambda f: round(f, 2)))
    width = draw(st.sampled_from([0.001, 0.5, 1.0, 7.25, 100.0]))
    lower = draw(st.sampled_from([Ge(low), Gt(low)]))
    upper = draw(st.sampled_from([Le(low + width), Lt(low + width)]))
    parts: list[Any] = draw(st.sampled_from([[lower], [upper], [lower, upper]]))
    if draw(st.booleans()) and width >= 1:
        parts.append(MultipleOf(0.5))
    return _annotated(float, parts)


@st.composite
def _constrained_str(draw: st.DrawFn) -> Any:
    low = draw(st.integers(0, 12))
    high = low + draw(st.integers(0, 5))
    return _annotated(str, draw(st.sampled_from([[MinLen(low)], [MaxLen(high)], [MinLen(low), MaxLen(high)]])))


def _types(depth: int) -> st.SearchStrategy[Any]:
    leaves = st.one_of(st.sampled_from(_SCALARS), _constrained_int(), _constrained_float(), _constrained_str())
    if depth == 0:
        return leaves
    inner = _types(depth - 1)
    return st.one_of(
        leaves,
        st.builds(lambda t: list[t], inner),  # type: ignore[valid-type]
        st.builds(lambda t, n: Annotated[list[t], MinLen(n)], inner, st.integers(0, 4)),  # type: ignore[valid-type]
        st.builds(_unique_set, st.sampled_from([str, int, datetime.date, uuid.UUID]), st.integers(0, 6)),
        st.builds(lambda a, b: tuple[a, b], inner, inner),  # type: ignore[valid-type]
        st.builds(lambda t: tuple[t, ...], inner),  # type: ignore[valid-type]
        st.builds(lambda t: dict[str, t], inner),  # type: ignore[valid-type]
        st.builds(lambda t: dict[uuid.UUID, t], inner),  # type: ignore[valid-type]
        st.builds(lambda a, b: Union[a, b], inner, inner),  # noqa: UP007 (members may be `None`)
        st.builds(lambda t: Optional[t], inner),  # noqa: UP045
    )


@st.composite
def _models(draw: st.DrawFn) -> type[BaseModel]:
    names = draw(st.lists(st.from_regex(r'[a-z]{1,8}', fullmatch=True), min_size=1, max_size=6, unique=True))
    fields: dict[str, Any] = {name: (draw(_types(1)), ...) for name in names}
    return create_model('Drawn', **fields)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(model=_models(), seed=st.integers(0, 200))
def test_made_up_arguments_validate_against_random_models(model: type[BaseModel], seed: int) -> None:
    model.model_validate(_made_up(model, seed))


def test_values_are_the_simplest_of_each_kind() -> None:
    class Args(BaseModel):
        text: str
        number: int
        when: datetime.date
        at: datetime.datetime
        clock: datetime.time
        span: datetime.timedelta
        ident: uuid.UUID
        address: ipaddress.IPv4Address
        url: HttpUrl
        positive: Annotated[int, Ge(1)]
        even: Annotated[int, Gt(3), MultipleOf(2)]
        half: Annotated[float, Gt(0), Lt(1)]
        code: Annotated[str, Field(pattern=r'^[A-Z]{2}-\d{3}$')]
        pair: tuple[int, str]

    data = _made_up(Args)
    assert data == {
        'text': 'a',
        'number': 0,
        'when': '2024-01-01',
        'at': '2024-01-01T00:00:00Z',
        'clock': '00:00:00',
        'span': 'P0D',
        'ident': '00000000-0000-4000-8000-000000000000',
        'address': '10.0.0.0',
        'url': 'https://example.com/a',
        'positive': 1,
        'even': 4,
        'half': 0.5,
        'code': 'AA-000',
        'pair': [0, 'a'],
    }
    Args.model_validate(data)


def test_seed_varies_values_and_unique_items_advance_it() -> None:
    class Args(BaseModel):
        tags: Annotated[set[str], MinLen(3)]
        day: datetime.date

    assert _made_up(Args, seed=1) == {'tags': ['b', 'c', 'd'], 'day': '2024-01-05'}
    assert _JsonSchemaTestData({'type': 'array', 'items': {'type': 'string'}, 'minItems': 2, 'uniqueItems': True},
                               seed=len(_chars) - 1).generate() == ['~', 'aa']  # fmt: skip


def test_only_required_properties_and_one_additional_property() -> None:
    class Args(BaseModel, extra='allow'):
        needed: int
        optional: str = 'x'

    assert _made_up(Args) == {'needed': 0, 'additionalProperty': 'a'}
    schema = {'type': 'object', 'additionalProperties': {'type': 'integer'}, 'minProperties': 2}
    assert _JsonSchemaTestData(schema).generate() == {'additionalProperty': 0, 'additionalProperty_': 0}
    assert _JsonSchemaTestData({'type': 'array', 'items': {'type': 'string'}, 'maxItems': 0}).generate() == []


def test_references_and_one_of_are_followed() -> None:
    @dataclass
    class Cat:
        kind: Literal['cat']
        lives: Annotated[int, Ge(1), Le(9)]

    @dataclass
    class Dog:
        kind: Literal['dog']

    class Pets(BaseModel):
        pet: Cat | Dog = Field(discriminator='kind')
        tree: list[Pets] | None

    assert _made_up(Pets) == {'pet': {'kind': 'cat', 'lives': 1}, 'tree': [{'pet': {'kind': 'cat', 'lives': 1},
                              'tree': [{'pet': {'kind': 'cat', 'lives': 1}, 'tree': None}]}]}  # fmt: skip


async def test_pydantic_ai_testing_example_runs_with_constrained_tool_arguments() -> None:
    agent = Agent('test', deps_type=int)

    @agent.tool
    async def weather_forecast(ctx: RunContext[int], location: str, forecast_date: datetime.date,
                               days: Annotated[int, Field(ge=1, le=7)]) -> str:  # fmt: skip
        return f'{location} on {forecast_date.isoformat()} for {days} day(s), user {ctx.deps}'

    result = await agent.run('What will the weather be like?', deps=7, model=TestModel())
    assert result.output == '{"weather_forecast":"a on 2024-01-01 for 1 day(s), user 7"}'


@pytest.mark.parametrize(
    ('schema', 'seed', 'value'),
    [
        ({'type': 'string', 'format': 'email'}, 0, 'a@example.com'),
        ({'type': 'string', 'format': 'name-email'}, 1, 'b <b@example.com>'),
        ({'type': 'string', 'format': 'hostname'}, 0, 'a.example.com'),
        ({'type': 'string', 'maxLength': 0, 'format': 'binary'}, 0, ''),
        ({'type': 'string', 'pattern': '^(?:red|green)[^a]x.$'}, 0, 'redbxa'),
        ({'type': 'string', 'pattern': r'^\w+-\s[^\d]$'}, 0, 'a- a'),
        ({'type': 'string', 'pattern': '^[q-z]+?(?=x)x$'}, 0, 'qx'),
        ({'type': 'string', 'pattern': 'no(?P<g>x)(?P=g)', 'minLength': 1}, 0, 'a'),  # backreference: not handled
        ({'type': 'string', 'pattern': '(', 'minLength': 2}, 0, 'aa'),  # not a regex
        ({'type': 'string', 'pattern': '^[^\\x00-\\U0010ffff]$'}, 0, 'a'),  # matches nothing: a plain string
        ({'type': 'string', 'pattern': '^[^aA0_ -]$', 'maxLength': 1}, 0, 'a'),  # no candidate fits the class
        ({'type': 'string', 'pattern': '^[^z]b$'}, 0, 'ab'),
        ({'type': 'string', 'pattern': '^[\\d]x$'}, 0, '0x'),
        ({'type': 'string', 'pattern': '^[^\\w]x$'}, 0, '-x'),
        ({'type': 'string', 'pattern': 'a$', 'maxLength': 0}, 0, ''),
        ({'examples': ['one', 'two']}, 1, 'two'),
        ({'allOf': [{'$ref': '#/$defs/N'}, {'minimum': 3}], '$defs': {'N': {'type': 'integer'}}}, 0, 3),
        ({'type': 'object', 'properties': {'me': {'$ref': '#'}}, 'required': []}, 0, {}),
        ({'type': 'object', 'additionalProperties': True, 'maxProperties': 0}, 0, {}),
        ({'type': 'object', 'additionalProperties': {'type': 'integer'}, 'minProperties': 2,
          'propertyNames': {'enum': ['k']}}, 0, {'k': 0, 'additionalProperty': 0}),
        ({'type': 'array', 'items': True, 'minItems': 1}, 0, ['a']),
        ({'type': 'array', 'prefixItems': [{'type': 'integer'}], 'uniqueItems': True, 'items': {'type': 'integer'}},
         0, [0, 1]),
        ({'type': 'integer', 'multipleOf': 4, 'maximum': 10}, 0, 8),
        ({'type': 'integer', 'multipleOf': 4}, 3, 4),
        ({'type': 'number', 'multipleOf': 0.5, 'exclusiveMinimum': 1}, 0, 2.0),
        ({'type': 'number', 'multipleOf': 2, 'exclusiveMaximum': 4}, 0, 2.0),
        ({'type': 'number', 'multipleOf': 0.25}, 1, 1.0),
        ({'type': 'number', 'minimum': 2, 'maximum': 2}, 5, 2.0),
        ({'type': 'integer', 'minimum': 5, 'maximum': 3}, 0, 5),
        ({'type': 'array', 'prefixItems': [True], 'items': False}, 0, ['a']),
        ({'type': ['null']}, 0, None),
    ],
)  # fmt: skip
def test_each_keyword_is_honoured(schema: Any, seed: int, value: Any) -> None:
    assert _JsonSchemaTestData(schema, seed).generate() == value


def test_an_unknown_type_is_reported() -> None:
    with pytest.raises(NotImplementedError, match="JSON schema type 'matrix'"):
        _JsonSchemaTestData({'type': 'matrix'}).generate()
