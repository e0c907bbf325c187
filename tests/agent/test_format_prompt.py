"""`format_as_xml` and `StructuredDict`."""

from __future__ import annotations

import datetime
import enum
import uuid
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import pytest
from pydantic import BaseModel, Field, computed_field

from edgewise.agent import Agent, StructuredDict, UserError, format_as_xml
from edgewise.agent.models.test import TestModel

pytestmark = pytest.mark.anyio


class Color(enum.Enum):
    RED = 'red'


class Size(str, enum.Enum):  # noqa: UP042 - a str mixin, not a StrEnum
    BIG = 'big'


def test_a_mapping_under_a_root_tag_is_indented() -> None:
    assert format_as_xml({'name': 'Ada', 'born': 1815}, root_tag='person') == (
        '<person>\n  <name>Ada</name>\n  <born>1815</born>\n</person>'
    )


def test_without_a_root_tag_the_items_follow_one_another() -> None:
    assert format_as_xml({'a': 1, 'b': [True, None]}) == '<a>1</a>\n<b>\n  <item>True</item>\n  <item>null</item>\n</b>'
    assert format_as_xml([1, 2], indent=None) == '<item>1</item><item>2</item>'
    assert format_as_xml('plain') == '<item>plain</item>'
    assert format_as_xml(['x'], item_tag='row', none_str='-', root_tag='rows') == '<rows>\n  <row>x</row>\n</rows>'


def test_scalars_are_written_as_text() -> None:
    values = {
        'day': datetime.date(2024, 5, 6),
        'at': datetime.datetime(2024, 5, 6, 7, 8),
        'span': datetime.timedelta(hours=1),
        'price': Decimal('1.50'),
        'id': uuid.UUID(int=1),
        'color': Color.RED,
        'size': Size.BIG,
        'raw': b'bytes',
        'ratio': 0.5,
    }
    assert format_as_xml(values, indent=None) == (
        '<day>2024-05-06</day><at>2024-05-06T07:08:00</at><span>1:00:00</span><price>1.50</price>'
        '<id>00000000-0000-0000-0000-000000000001</id><color>Color.RED</color><size>big</size><raw>bytes</raw>'
        '<ratio>0.5</ratio>'
    )


def test_dataclasses_and_models_are_tagged_with_their_class_name() -> None:
    @dataclass
    class Point:
        x: int
        y: int

    class Shape(BaseModel):
        name: str
        points: list[Point]

    shape = Shape(name='line', points=[Point(0, 0), Point(1, 2)])
    assert format_as_xml([shape], indent=None) == (
        '<Shape><name>line</name><points><Point><x>0</x><y>0</y></Point><Point><x>1</x><y>2</y></Point></points>'
        '</Shape>'
    )
    assert format_as_xml(shape, root_tag='shape', indent=None).startswith('<shape><name>line</name>')


def test_field_titles_and_descriptions_become_attributes() -> None:
    @dataclass
    class Step:
        text: str = field(metadata={'description': 'what to do', 'other': 'ignored'})

    class Recipe(BaseModel):
        title: str = Field(description='the dish', title='Title')
        steps: list[Step]

        @computed_field(description='how many steps')  # type: ignore[prop-decorator]
        @property
        def count(self) -> int:
            return len(self.steps)

    recipe = Recipe(title='soup', steps=[Step('boil'), Step('eat')])
    assert format_as_xml(recipe, include_field_info=True, indent=None) == (
        '<title title="Title" description="the dish">soup</title><steps><Step><text description="what to do">boil'
        '</text></Step><Step><text description="what to do">eat</text></Step></steps>'
        '<count description="how many steps">2</count>'
    )
    assert format_as_xml(recipe, include_field_info='once', indent=None) == (
        '<title title="Title" description="the dish">soup</title><steps><Step><text description="what to do">boil'
        '</text></Step><Step><text>eat</text></Step></steps><count description="how many steps">2</count>'
    )


def test_unsupported_values_and_keys_are_type_errors() -> None:
    with pytest.raises(TypeError, match="Unsupported type for XML formatting: <class 'object'>"):
        format_as_xml(object())
    with pytest.raises(TypeError, match='Unsupported key type for XML formatting:'):
        format_as_xml({(1, 2): 'x'})
    assert format_as_xml({1: 'x'}) == '<1>x</1>'


def test_structured_dict_is_a_dict_type_with_its_schema() -> None:
    schema: dict[str, Any] = {
        'type': 'object',
        'properties': {'pet': {'$ref': '#/$defs/Pet'}},
        'required': ['pet'],
        '$defs': {'Pet': {'type': 'object', 'properties': {'name': {'type': 'string'}}, 'required': ['name']}},
    }
    owner = StructuredDict(schema, name='Owner', description='Someone with a pet')
    assert owner.__name__ == 'Owner'
    import pydantic

    adapter = pydantic.TypeAdapter(owner)
    assert adapter.json_schema() == {
        'type': 'object',
        'properties': {
            'pet': {'type': 'object', 'properties': {'name': {'type': 'string'}}, 'required': ['name']},
        },
        'required': ['pet'],
        'title': 'Owner',
        'description': 'Someone with a pet',
    }
    assert adapter.validate_python({'pet': 1}) == {'pet': 1}  # only a dict with string keys is checked


async def test_structured_dict_as_output_type_is_an_output_tool_taking_its_properties() -> None:
    person = StructuredDict(
        {'type': 'object', 'properties': {'name': {'type': 'string'}, 'age': {'type': 'integer', 'minimum': 18}},
         'required': ['name', 'age']},
    )  # fmt: skip
    model = TestModel()
    result = await Agent(model, output_type=person).run('Make up a person')
    assert result.output == {'name': 'a', 'age': 18}
    assert model.last_model_request_parameters is not None
    assert [t.outer_typed_dict_key for t in model.last_model_request_parameters.output_tools] == [None]


def test_structured_dict_rejects_what_it_cannot_describe() -> None:
    with pytest.raises(UserError, match='Schema must be an object'):
        StructuredDict({'type': 'string'})
    recursive = {'type': 'object', 'properties': {'next': {'$ref': '#/$defs/Node'}},
                 '$defs': {'Node': {'type': 'object', 'properties': {'next': {'$ref': '#/$defs/Node'}}}}}  # fmt: skip
    with pytest.raises(UserError, match='does not currently support recursive'):
        StructuredDict(recursive)


def test_structured_dict_takes_a_top_level_reference_to_an_object() -> None:
    plain = {'$ref': '#/$defs/Pet', '$defs': {'Pet': {'type': 'object', 'properties': {'name': {'type': 'string'}}}}}
    import pydantic

    assert pydantic.TypeAdapter(StructuredDict(plain)).json_schema() == {
        'type': 'object',
        'properties': {'name': {'type': 'string'}},
    }
    node = {'type': 'object', 'properties': {'next': {'$ref': '#/$defs/Node'}}}
    recursive = {'$ref': '#/$defs/Node', '$defs': {'Node': node}}
    with pytest.raises(UserError, match='does not currently support recursive'):
        StructuredDict(recursive)
    with pytest.raises(UserError, match='Schema must be an object'):
        StructuredDict({'anyOf': [{'type': 'string'}]})
