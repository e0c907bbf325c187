"""Partial structured outputs built while the JSON grows: nested models, lists, dataclasses, TypedDicts."""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from typing import Any, NotRequired

from hypothesis import given, settings
from hypothesis import strategies as st
from inline_snapshot import snapshot
from pydantic import BaseModel, TypeAdapter, field_validator
from typing_extensions import TypedDict

from edgewise.agent._output.partial_json import IncrementalJsonParser
from edgewise.agent._output.partial_output import INVALID, PartialOutputBuilder


class Item(BaseModel):
    name: str
    tags: list[str] = []


class Order(BaseModel):
    id: int
    items: list[Item]
    note: str | None = None


@dataclass
class Point:
    x: int
    y: int = 0


class Shape(TypedDict):
    name: str
    points: list[Point]
    color: NotRequired[str]


class Positive(BaseModel):
    n: int

    @field_validator('n')
    @classmethod
    def positive(cls, value: int) -> int:
        if value <= 0:
            raise ValueError('must be positive')
        return value


def _partials(tp: Any, text: str, size: int = 4) -> list[Any]:
    builder = PartialOutputBuilder(tp)
    parser = IncrementalJsonParser(builder)
    seen: list[Any] = []
    for i in range(0, len(text), size):
        parser.feed(text[i : i + size])
        value = builder.value(parser)
        if value is not INVALID and (not seen or value != seen[-1]):
            seen.append(value)
    return seen


def test_a_model_with_a_list_of_models_fills_in_item_by_item() -> None:
    text = json.dumps({'id': 7, 'items': [{'name': 'ab', 'tags': ['x']}, {'name': 'c'}], 'note': 'hi'})
    assert _partials(Order, text, size=6) == snapshot(
        [
            Order(id=7, items=[]),
            Order(id=7, items=[Item(name='')]),
            Order(id=7, items=[Item(name='ab')]),
            Order(id=7, items=[Item(name='ab', tags=['x'])]),
            Order(id=7, items=[Item(name='ab', tags=['x']), Item(name='c')]),
            Order(id=7, items=[Item(name='ab', tags=['x']), Item(name='c')], note='hi'),
        ]
    )


def test_a_model_shows_only_once_its_required_fields_are_there() -> None:
    assert _partials(Order, '{"items": [], "id": 3}', size=3) == [Order(id=3, items=[])]


def test_a_typed_dict_of_dataclasses_and_a_list_of_scalars() -> None:
    text = json.dumps({'name': 'tri', 'points': [{'x': 1, 'y': 2}, {'x': 3}], 'color': 'red'})
    assert _partials(Shape, text, size=8) == snapshot(
        [
            {'name': 'tri', 'points': []},
            {'name': 'tri', 'points': [Point(x=1)]},
            {'name': 'tri', 'points': [Point(x=1, y=2)]},
            {'name': 'tri', 'points': [Point(x=1, y=2), Point(x=3)]},
            {'name': 'tri', 'points': [Point(x=1, y=2), Point(x=3)], 'color': 'red'},
        ]
    )
    assert _partials(list[int], '[1, 22, 333]', size=2) == snapshot([[], [1], [1, 22], [1, 22, 333]])


def test_a_completed_item_that_fails_validation_stops_the_partial_values() -> None:
    assert _partials(list[Positive], '[{"n": 1}, {"n": -1}, {"n": 2}]', size=5) == [[], [Positive(n=1)]]


def test_types_validated_as_a_whole_show_partial_values_through_pydantic() -> None:
    assert _partials(dict[str, list[int]], '{"a": [1, 2], "b": [3]}', size=5) == snapshot(
        [{}, {'a': [1]}, {'a': [1, 2]}, {'a': [1, 2], 'b': []}, {'a': [1, 2], 'b': [3]}]
    )
    assert _partials(str, '"hello"', size=2) == ['h', 'hel', 'hello']


def test_a_container_of_the_wrong_kind_never_validates() -> None:
    assert _partials(Order, '{"id": 1, "items": {"name": "x"}}', size=4) == []
    assert _partials(list[int], '{"a": 1}', size=4) == []


items = st.lists(st.builds(Item, name=st.text(max_size=8), tags=st.lists(st.text(max_size=4), max_size=3)), max_size=6)


@settings(max_examples=150, deadline=None)
@given(order_items=items, note=st.none() | st.text(max_size=10), cuts=st.lists(st.integers(0, 10_000), max_size=10))
def test_any_split_ends_with_what_pydantic_validates_and_partial_values_only_grow(
    order_items: list[Item], note: str | None, cuts: list[int]
) -> None:
    order = Order(id=1, items=order_items, note=note)
    text = order.model_dump_json()
    points = sorted({c % (len(text) + 1) for c in cuts})
    bounds = [0, *points, len(text)]
    builder = PartialOutputBuilder(Order)
    parser = IncrementalJsonParser(builder)
    seen: list[Order] = []
    for start, end in itertools.pairwise(bounds):
        parser.feed(text[start:end])
        value = builder.value(parser)
        if value is not INVALID:
            seen.append(value)
    assert seen[-1] == TypeAdapter(Order).validate_json(text)
    for earlier, later in itertools.pairwise(seen):
        # items only ever get added, and every item but the last is final once shown
        assert len(earlier.items) <= len(later.items)
        assert earlier.items[:-1] == later.items[: max(len(earlier.items) - 1, 0)]


class Loose(BaseModel, extra='allow'):
    name: str
    size: int = 0


def test_models_allowing_extra_fields_keep_them_in_partial_values() -> None:
    partials = _partials(list[Loose], '[{"name": "a", "color": "red"}, {"name": "b"}]', size=7)
    assert [[item.model_dump() for item in value] for value in partials] == snapshot(
        [
            [],
            [{'name': 'a', 'size': 0}],
            [{'name': 'a', 'size': 0, 'color': 'red'}],
            [{'name': 'a', 'size': 0, 'color': 'red'}, {'name': '', 'size': 0}],
            [{'name': 'a', 'size': 0, 'color': 'red'}, {'name': 'b', 'size': 0}],
        ]
    )
