"""Tool schemas from signatures and docstrings (google, numpy, sphinx), and argument validation."""

from __future__ import annotations

from typing import Any

import pydantic
import pytest
from hypothesis import given
from hypothesis import strategies as st

from edgewise.agent import RunContext, Tool, UserError
from edgewise.agent._function_schema import function_schema, parse_docstring


def google(x: int, y: str = 'a') -> str:
    """Do a google thing.

    Args:
        x: the x value
        y: the y value

    Returns:
        Both, joined.
    """
    return f'{x}{y}'


def numpy(x: int) -> int:
    """Do a numpy thing.

    Parameters
    ----------
    x : int
        the x value
    """
    return x


def sphinx(x: int) -> int:
    """Do a sphinx thing.

    :param x: the x value
    """
    return x


def undocumented(x, /, *, y: list[int]):
    return (x, y)


def test_google_docstrings_describe_the_tool_and_its_parameters() -> None:
    assert Tool(google).tool_def.parameters_json_schema == {
        'additionalProperties': False,
        'properties': {
            'x': {'description': 'the x value', 'type': 'integer'},
            'y': {'default': 'a', 'description': 'the y value', 'type': 'string'},
        },
        'required': ['x'],
        'type': 'object',
    }
    assert Tool(google).description == 'Do a google thing.'


@pytest.mark.parametrize(('function', 'text'), [(numpy, 'Do a numpy thing.'), (sphinx, 'Do a sphinx thing.')])
def test_numpy_and_sphinx_docstrings_are_detected(function: Any, text: str) -> None:
    assert parse_docstring(function, 'auto') == (text, {'x': 'the x value'})


def test_an_explicit_docstring_format_is_used_as_given() -> None:
    assert parse_docstring(google, 'google') == ('Do a google thing.', {'x': 'the x value', 'y': 'the y value'})


def test_functions_without_docstrings_or_hints_get_a_plain_schema() -> None:
    tool = Tool(undocumented)
    assert tool.description is None
    assert tool.tool_def.parameters_json_schema == {
        'additionalProperties': False,
        'properties': {'x': {}, 'y': {'items': {'type': 'integer'}, 'type': 'array'}},
        'required': ['x', 'y'],
        'type': 'object',
    }


@pytest.mark.anyio
async def test_positional_only_parameters_are_passed_by_position() -> None:
    schema = function_schema(undocumented, takes_ctx=False)
    assert await schema.call(schema.validate({'x': 1, 'y': [2]}), None) == (1, [2])


def test_arguments_validate_from_a_json_string_or_a_dict() -> None:
    schema = function_schema(google, takes_ctx=False)
    assert schema.validate('{"x": "3"}') == {'x': 3, 'y': 'a'}
    assert schema.validate({'x': 4, 'y': 'b'}) == {'x': 4, 'y': 'b'}


def test_invalid_or_extra_arguments_are_validation_errors() -> None:
    schema = function_schema(google, takes_ctx=False)
    with pytest.raises(pydantic.ValidationError) as exc_info:
        schema.validate({'x': 1, 'z': 2})
    assert exc_info.value.errors(include_url=False) == [
        {'type': 'extra_forbidden', 'loc': ('z',), 'msg': 'Extra inputs are not permitted', 'input': 2}
    ]


def test_variadic_parameters_are_rejected() -> None:
    def star(*args: int) -> None:  # pragma: no cover - never called
        pass

    with pytest.raises(UserError, match=r"Tool 'star' takes `\*args`; tools need named parameters only."):
        Tool(star)


def test_a_context_tool_must_take_the_run_context_first() -> None:
    def plain(x: int) -> None:  # pragma: no cover - never called
        pass

    with pytest.raises(UserError, match="The first parameter of tool 'plain' must be annotated `RunContext"):
        Tool(plain, takes_ctx=True)


def test_a_run_context_in_a_plain_tool_is_rejected() -> None:
    def late(x: int, ctx: RunContext[None]) -> None:  # pragma: no cover - never called
        pass

    with pytest.raises(UserError, match="Parameter 'ctx' of tool 'late' is a `RunContext`"):
        Tool(late)


def test_missing_parameter_descriptions_can_be_required() -> None:
    with pytest.raises(UserError, match="Parameter 'x' of tool 'undocumented' has no description in its docstring\\."):
        Tool(undocumented, require_parameter_descriptions=True)


def test_the_run_context_is_detected_from_the_annotation() -> None:
    def with_ctx(ctx: RunContext[int], q: int) -> int:  # pragma: no cover - never called
        return q

    def no_params() -> None:  # pragma: no cover - never called
        pass

    assert Tool(with_ctx).takes_ctx is True
    assert Tool(no_params).takes_ctx is False
    assert list(Tool(with_ctx).tool_def.parameters_json_schema['properties']) == ['q']


_NAMES = st.from_regex(r'[a-z][a-z_]{0,8}', fullmatch=True)
_WORDS = st.lists(st.from_regex(r'[A-Za-z]{1,8}', fullmatch=True), min_size=1, max_size=5).map(' '.join)


def _docstring(style: str, summary: str, params: dict[str, str]) -> str:
    if style == 'google':
        body = '\n'.join(f'    {name}: {text}' for name, text in params.items())
        return f'{summary}\n\nArgs:\n{body}\n'
    if style == 'numpy':
        body = '\n'.join(f'{name} : int\n    {text}' for name, text in params.items())
        return f'{summary}\n\nParameters\n----------\n{body}\n'
    body = '\n'.join(f':param {name}: {text}' for name, text in params.items())
    return f'{summary}\n\n{body}\n'


@given(st.sampled_from(['google', 'numpy', 'sphinx']), _WORDS, st.dictionaries(_NAMES, _WORDS, min_size=1, max_size=4))
def test_each_docstring_style_is_detected_and_parsed(style: str, summary: str, params: dict[str, str]) -> None:
    def function() -> None:  # pragma: no cover - only its docstring is read
        pass

    function.__doc__ = _docstring(style, summary, params)
    assert parse_docstring(function, 'auto') == (summary, params)
