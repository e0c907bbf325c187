"""`edgewise.agent.function_signature`: tools shown as Python function signatures (pydantic-ai 2.x's code mode)."""

from __future__ import annotations

import ast
from enum import StrEnum
from typing import Any

import pytest
from pydantic import BaseModel, Field

from edgewise.agent import RunContext, Tool, ToolDefinition
from edgewise.agent.function_signature import (
    FunctionParam,
    FunctionSignature,
    GenericTypeExpr,
    LiteralTypeExpr,
    SimpleTypeExpr,
    TypeFieldSignature,
    TypeSignature,
    UnionTypeExpr,
)
from edgewise.agent.models.test import TestModel
from edgewise.agent.tool_manager import ToolManager
from edgewise.agent.toolsets import FunctionToolset
from edgewise.agent.usage import RunUsage


def _object(properties: dict[str, Any], required: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    return {'type': 'object', 'properties': properties, 'required': required or [], **extra}


def _param_types(schema: dict[str, Any]) -> dict[str, str]:
    signature = FunctionSignature.from_schema(name='tool', parameters_schema=_object({'x': schema}, ['x']))
    return {key: str(param.type) for key, param in signature.params.items()}


def _compiles(source: str) -> None:
    ast.parse(source)


@pytest.mark.anyio
async def test_a_toolsets_tool_definition_renders_as_a_signature() -> None:
    toolset: FunctionToolset[object] = FunctionToolset()

    @toolset.tool_plain
    def add(a: int, b: int) -> int:
        return a + b

    ctx = RunContext[object](deps=None, model=TestModel(), usage=RunUsage())
    step = await ToolManager(toolset).for_run_step(ctx)
    assert step.tools is not None
    tool_def = step.tools['add'].tool_def
    assert list(tool_def.function_signature.params) == ['a', 'b']
    assert tool_def.function_signature is tool_def.function_signature  # made once
    assert tool_def.render_signature('...') == 'def add(*, a: int, b: int) -> int:\n    ...'


def test_render_signature_gives_the_tools_name_and_description_and_passes_options_on() -> None:
    def lookup(city: str, limit: int = 3) -> list[str]:
        """Find places.

        Args:
            city: Where to look.
            limit: How many at most,
                counting from the best.
        """
        return []  # pragma: no cover - never called

    tool_def = Tool(lookup).tool_def
    assert tool_def.render_signature('return await call()', is_async=True) == (
        'async def lookup(*, city: str, limit: int = 3) -> list[str]:\n'
        '    """\n'
        '    Find places.\n'
        '\n'
        '    Args:\n'
        '        city: Where to look.\n'
        '        limit: How many at most,\n'
        '            counting from the best.\n'
        '    """\n'
        '    return await call()'
    )


def test_a_definition_without_a_return_schema_returns_any() -> None:
    tool_def = ToolDefinition(name='ping', description='Check it is there.')
    assert tool_def.render_signature('...') == 'def ping() -> Any:\n    """Check it is there."""\n    ...'
    assert tool_def.function_signature.return_type == SimpleTypeExpr('Any')


def test_required_parameters_come_first_and_optional_ones_default_to_none() -> None:
    schema = _object(
        {
            'maybe': {'type': 'string'},
            'nullable': {'anyOf': [{'type': 'integer'}, {'type': 'null'}]},
            'either': {'oneOf': [{'type': 'integer'}, {'type': 'null'}]},
            'listed': {'type': ['string', 'null']},
            'with_default': {'type': 'string', 'default': 'x'},
            'needed': {'type': 'number', 'description': ''},
        },
        ['needed'],
    )
    signature = FunctionSignature.from_schema(name='f', parameters_schema=schema)
    assert list(signature.params) == ['needed', 'maybe', 'nullable', 'either', 'listed', 'with_default']
    assert signature.render('pass', name='g', description='') == (
        'def g(*, needed: float, maybe: str | None = None, nullable: int | None = None, either: int | None = None, '
        "listed: str | None = None, with_default: str = 'x') -> Any:\n    pass"
    )
    assert signature.params['needed'] == FunctionParam(name='needed', type=SimpleTypeExpr('float'))


def test_the_schemas_types_map_to_python_types() -> None:
    assert _param_types({'type': 'boolean'}) == {'x': 'bool'}
    assert _param_types({'type': 'null'}) == {'x': 'None'}
    assert _param_types({'enum': ['a', 'b']}) == {'x': "Literal['a', 'b']"}
    assert _param_types({'const': 42}) == {'x': 'Literal[42]'}
    assert _param_types({'type': 'array', 'items': {'type': 'integer'}}) == {'x': 'list[int]'}
    assert _param_types({'type': 'array'}) == {'x': 'list[Any]'}
    tuple_schema = {'type': 'array', 'items': [{'type': 'integer'}, {'type': 'string'}]}
    assert _param_types(tuple_schema) == {'x': 'tuple[int, str]'}
    assert _param_types({'type': 'object'}) == {'x': 'dict[str, Any]'}
    assert _param_types({'type': 'object', 'additionalProperties': True}) == {'x': 'dict[str, Any]'}
    assert _param_types({'type': 'object', 'additionalProperties': {'type': 'integer'}}) == {'x': 'dict[str, int]'}
    assert _param_types({'type': ['string', 'integer']}) == {'x': 'str | int'}
    assert _param_types({'type': ['null', 'string']}) == {'x': 'str | None'}
    assert _param_types({'type': ['array']}) == {'x': 'Any'}
    assert _param_types({'type': []}) == {'x': 'Any'}
    assert _param_types({'type': 'mystery'}) == {'x': 'Any'}
    assert _param_types({}) == {'x': 'Any'}
    assert _param_types({'allOf': [{'type': 'string'}]}) == {'x': 'str'}
    assert _param_types({'allOf': [{'type': 'string'}, {'minLength': 1}]}) == {'x': 'Any'}
    assert _param_types({'anyOf': [{'type': 'string'}, {'type': 'string'}, True]}) == {'x': 'str | Any'}


def test_boolean_schemas_read_as_any() -> None:
    signature = FunctionSignature.from_schema(name='f', parameters_schema=_object({'x': True}, ['x']))
    assert str(signature.params['x'].type) == 'Any'


def test_object_types_become_typed_dicts_named_by_title_or_by_path() -> None:
    schema = _object(
        {
            'user': _object(
                {
                    'name': {'type': 'string', 'description': 'Full name.'},
                    'home': _object({'street': {'type': 'string'}}, title='not an identifier'),
                    'tags': {'type': 'array', 'items': _object({'label': {'type': 'string'}})},
                },
                ['name'],
                title='User',
                description='Who asks.\nAnd why.',
            ),
            'maybe_user': {'type': ['object', 'null'], 'properties': {}, 'title': 'Empty'},
            'other': {'type': ['object'], 'properties': {}, 'title': 'Empty', 'description': 'Nothing inside.'},
        },
        ['user', 'maybe_user', 'other'],
    )
    signature = FunctionSignature.from_schema(name='get_user', parameters_schema=schema)
    assert signature.render('...') == (
        'def get_user(*, user: User, maybe_user: Empty | None, other: Empty) -> Any:\n'
        '    """\n'
        '    Args:\n'
        '        user: Who asks.\n'
        '            And why.\n'
        '        other: Nothing inside.\n'
        '    """\n'
        '    ...'
    )
    definitions = [type_sig.render_definition() for type_sig in signature.referenced_types]
    assert definitions == [
        'class User(TypedDict):\n'
        '    """\n'
        '    Who asks.\n'
        '    And why.\n'
        '    """\n'
        '    name: str\n'
        '    """Full name."""\n'
        '    home: NotRequired[GetUserUserHome]\n'
        '    tags: NotRequired[list[GetUserUserTagsitem]]',
        'class GetUserUserHome(TypedDict):\n    street: NotRequired[str]',
        'class GetUserUserTagsitem(TypedDict):\n    label: NotRequired[str]',
        'class Empty(TypedDict):\n    pass',  # the first schema titled `Empty` makes it
    ]
    for definition in definitions:
        _compiles(definition)
    assert [t.name for t in signature.referenced_types] == ['User', 'GetUserUserHome', 'GetUserUserTagsitem', 'Empty']


class Color(StrEnum):
    RED = 'red'
    BLUE = 'blue'


class Node(BaseModel):
    """A tree node."""

    value: int = Field(description='The value.')
    children: list[Node] = []


class WalkArgs(BaseModel):
    root: Node
    color: Color
    width: int | None


def test_a_pydantic_models_schema_with_defs_and_recursion() -> None:
    schema = WalkArgs.model_json_schema()
    signature = FunctionSignature.from_schema(
        name='walk', parameters_schema=schema, return_schema=schema['$defs']['Node']
    )
    assert signature.render('...') == (
        "def walk(*, root: Node, color: Literal['red', 'blue'], width: int | None) -> Node:\n    ..."
    )
    (node,) = signature.referenced_types
    assert node.render_definition() == (
        'class Node(TypedDict):\n'
        '    """A tree node."""\n'
        '    value: int\n'
        '    """The value."""\n'
        '    children: NotRequired[list[Node]]'
    )
    assert node.fields['children'].type == GenericTypeExpr(base='list', args=[node])


def test_non_object_definitions_are_written_out_where_used() -> None:
    schema = _object(
        {
            'color': {'$ref': '#/$defs/Color'},
            'json': {'$ref': '#/$defs/Json'},
            'alias': {'$ref': '#/$defs/Alias'},
            'missing': {'$ref': '#/$defs/Missing'},
        },
        ['color', 'json', 'alias', 'missing'],
        **{
            '$defs': {
                'Color': {'enum': ['red', 'blue']},
                'Json': {'anyOf': [{'type': 'string'}, {'type': 'array', 'items': {'$ref': '#/$defs/Json'}}]},
                'Alias': {'$ref': '#/$defs/Color'},
            }
        },
    )
    signature = FunctionSignature.from_schema(name='paint', parameters_schema=schema)
    assert {key: str(param.type) for key, param in signature.params.items()} == {
        'color': "Literal['red', 'blue']",
        'json': 'str | list[Any]',
        'alias': 'Alias',
        'missing': 'Missing',
    }
    assert signature.referenced_types == []


def test_names_that_are_not_identifiers_are_made_into_identifiers() -> None:
    schema = _object(
        {
            'from': {'type': 'string'},
            'user-id': {'type': 'integer'},
            'user_id': {'type': 'integer'},
            '2nd': {'type': 'integer'},
            '-': {'type': 'integer'},
            'class': {'type': 'integer'},
        },
        ['from', 'user-id', 'user_id', '2nd', '-', 'class'],
    )
    signature = FunctionSignature.from_schema(name='f', parameters_schema=schema)
    assert {key: param.name for key, param in signature.params.items()} == {
        'from': 'from_',
        'user-id': 'user_id_2',
        'user_id': 'user_id',
        '2nd': '_2nd',
        '-': '_',
        'class': 'class_',
    }
    _compiles(signature.render('...'))


def test_a_typed_dict_with_keys_that_are_not_identifiers_uses_the_functional_form() -> None:
    schema = _object(
        {
            'link': _object(
                {'@type': {'type': 'string', 'description': 'Kind.\nOf link.'}, 'from': {'type': 'string'}},
                ['@type'],
                title='Link',
                description='A link\0.',
            )
        },
        ['link'],
    )
    (link,) = FunctionSignature.from_schema(name='f', parameters_schema=schema).referenced_types
    definition = link.render_definition()
    assert definition == (
        '# A link\\x00.\n'
        "Link = TypedDict('Link', {\n"
        '    # Kind.\n'
        '    # Of link.\n'
        "    '@type': str,\n"
        "    'from': NotRequired[str],\n"
        '})'
    )
    _compiles(definition)
    link.description = None
    link.fields['@type'].description = None
    assert (
        link.render_definition() == "Link = TypedDict('Link', {\n    '@type': str,\n    'from': NotRequired[str],\n})"
    )


def test_descriptions_cannot_break_out_of_the_docstring() -> None:
    signature = FunctionSignature.from_schema(name='f', parameters_schema=_object({}))
    source = signature.render('...', description='Say """hi""" with a \\ and a \0.')
    assert source == 'def f() -> Any:\n    """Say \\"\\"\\"hi\\"\\"\\" with a \\\\ and a \\x00."""\n    ...'
    _compiles(source)
    namespace: dict[str, Any] = {}
    exec(source, {'Any': Any}, namespace)
    assert namespace['f'].__doc__ == 'Say """hi""" with a \\ and a \0.'


def test_stored_name_description_and_async_are_used_unless_overridden() -> None:
    signature = FunctionSignature(name='fetch', description='Get it.', return_type=SimpleTypeExpr('str'), is_async=True)
    assert signature.render('...') == 'async def fetch() -> str:\n    """Get it."""\n    ...'
    assert signature.render('...', name='get', description='', is_async=False) == 'def get() -> str:\n    ...'


def test_a_return_type_defined_like_a_parameter_type_is_listed_once() -> None:
    address = _object({'city': {'type': 'string'}}, ['city'], title='Address')
    other_address = _object({'zip': {'type': 'string'}}, ['zip'], title='Address')
    params = _object({'address': address}, ['address'])
    same = FunctionSignature.from_schema(name='f', parameters_schema=params, return_schema=address)
    assert [t.name for t in same.referenced_types] == ['Address']
    different = FunctionSignature.from_schema(name='f', parameters_schema=params, return_schema=other_address)
    assert [t.name for t in different.referenced_types] == ['Address', 'Address']


def test_signatures_rendered_together_share_equal_types_and_rename_conflicting_ones() -> None:
    address = _object({'city': {'type': 'string'}}, ['city'], title='Address')
    user = _object({'name': {'type': 'string'}, 'address': address}, ['name'], title='User')
    other_user = _object({'id': {'type': 'integer'}}, ['id'], title='User')
    first = FunctionSignature.from_schema(name='get_user', parameters_schema=_object({'user': user}, ['user']))
    second = FunctionSignature.from_schema(
        name='save_user', parameters_schema=_object({'user': user}, ['user']), return_schema=other_user
    )
    # A type whose made name would take a name already in use is numbered.
    third = FunctionSignature.from_schema(
        name='get',
        parameters_schema=_object(
            {'user': _object({'x': {'type': 'integer'}}, title='User'), 'u': _object({}, title='get_User')}
        ),
    )
    signatures = [first, second, third]
    conflicting = FunctionSignature.get_conflicting_type_names(signatures)
    assert conflicting == frozenset({'User'})
    # The equal `User` and `Address` of the first two signatures are one object now.
    assert first.referenced_types[1] is second.referenced_types[1]
    assert first.params['user'].type is second.params['user'].type
    definitions = FunctionSignature.render_type_definitions(signatures, conflicting)
    assert definitions == [
        'class get_user_User(TypedDict):\n    name: str\n    address: NotRequired[Address]',
        'class Address(TypedDict):\n    city: str',
        'class save_user_User(TypedDict):\n    id: int',
        'class get_User_2(TypedDict):\n    x: NotRequired[int]',
        'class get_User(TypedDict):\n    pass',
    ]
    assert (
        first.render('...', conflicting_type_names=conflicting)
        == 'def get_user(*, user: get_user_User) -> Any:\n    ...'
    )
    assert second.render('...', conflicting_type_names=conflicting) == (
        'def save_user(*, user: get_user_User) -> save_user_User:\n    ...'
    )
    # Outside such a render, types show their own names.
    assert str(first.params['user'].type) == 'User'
    assert first.render('...') == 'def get_user(*, user: User) -> Any:\n    ...'


def test_types_equal_in_name_but_not_all_the_way_down_stay_apart() -> None:
    def signature(name: str, city_type: str) -> FunctionSignature:
        inner = _object({'city': {'type': city_type}}, title='Address')
        return FunctionSignature.from_schema(
            name=name,
            parameters_schema=_object(
                {'u': _object({'a': {'anyOf': [{'type': 'array', 'items': inner}, {'type': 'null'}]}}, title='User')},
                ['u'],
            ),
        )

    first, second = signature('a', 'string'), signature('b', 'integer')
    assert first.referenced_types[0].structurally_equal(second.referenced_types[0])  # nested types by name only
    conflicting = FunctionSignature.get_conflicting_type_names([first, second])
    assert conflicting == frozenset({'User', 'Address'})
    assert FunctionSignature.render_type_definitions([first, second], conflicting) == [
        'class a_User(TypedDict):\n    a: NotRequired[list[a_Address] | None]',
        'class a_Address(TypedDict):\n    city: NotRequired[str]',
        'class b_User(TypedDict):\n    a: NotRequired[list[b_Address] | None]',
        'class b_Address(TypedDict):\n    city: NotRequired[int]',
    ]


def test_structural_equality_ignores_descriptions() -> None:
    def type_sig(required: bool, type_name: str = 'str', description: str | None = None) -> TypeSignature:
        field = TypeFieldSignature(name='a', type=SimpleTypeExpr(type_name), required=required)  # type: ignore[arg-type]
        return TypeSignature(name='T', description=description, fields={'a': field})

    assert type_sig(True).structurally_equal(type_sig(True, description='Other.'))
    assert not type_sig(True).structurally_equal(type_sig(False))
    assert not type_sig(True).structurally_equal(type_sig(True, 'int'))
    assert not type_sig(True).structurally_equal(TypeSignature(name='T'))


def test_expressions_render_as_python() -> None:
    user = TypeSignature(name='User')
    expr = UnionTypeExpr(
        members=[GenericTypeExpr(base='dict', args=[SimpleTypeExpr('str'), user]), LiteralTypeExpr(['a', 1])]
    )
    assert str(expr) == "dict[str, User] | Literal['a', 1]"
    assert str(FunctionParam(name='x', type=expr, default='None')) == "x: dict[str, User] | Literal['a', 1] = None"
    assert str(TypeFieldSignature(name='x', type=user, required=True)) == '    x: User'
