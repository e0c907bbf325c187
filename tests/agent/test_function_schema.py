"""Tool schemas from signatures and docstrings (google, numpy, sphinx), and argument validation."""

from __future__ import annotations

import functools
from typing import Annotated, Any, Self

import pydantic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from edgewise.agent import RunContext, Tool, UserError
from edgewise.agent._functions.docstrings import doc_descriptions
from edgewise.agent._functions.schema import _extract_return_schema_type, function_schema, takes_run_context


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
    assert Tool(google).description == (
        '<summary>Do a google thing.</summary>\n<returns>\n<description>Both, joined.</description>\n</returns>'
    )


@pytest.mark.parametrize(('function', 'text'), [(numpy, 'Do a numpy thing.'), (sphinx, 'Do a sphinx thing.')])
def test_numpy_and_sphinx_docstrings_are_detected(function: Any, text: str) -> None:
    assert doc_descriptions(function, 'auto') == (text, {'x': 'the x value'})


def test_an_explicit_docstring_format_is_used_as_given() -> None:
    assert doc_descriptions(sphinx, 'google') == ('Do a sphinx thing.\n\n:param x: the x value', {})


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


async def _doubled(x: int) -> int:
    return x * 2


def returns_a_coroutine(x: int) -> Any:
    """A plain function handing back a coroutine."""
    return _doubled(x)


@pytest.mark.anyio
async def test_a_coroutine_returned_by_a_sync_function_is_awaited() -> None:
    schema = function_schema(returns_a_coroutine, takes_ctx=False)
    assert await schema.call({'x': 4}, None) == 8


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


@pytest.mark.anyio
async def test_variadic_parameters_become_a_list_and_extra_properties() -> None:
    def star(first: int, *args: int, **kwargs: str) -> tuple[Any, ...]:
        return (first, args, kwargs)

    schema = function_schema(star)
    assert schema.json_schema == {
        'additionalProperties': {'type': 'string'},
        'properties': {'first': {'type': 'integer'}, 'args': {'items': {'type': 'integer'}, 'type': 'array'}},
        'required': ['first', 'args'],
        'type': 'object',
    }
    kwargs = schema.validate({'first': 1, 'args': [2, 3], 'k': 'v'})
    assert await schema.call(kwargs, None) == (1, (2, 3), {'k': 'v'})


def test_a_context_tool_must_take_the_run_context_first() -> None:
    def plain(x: int) -> None:  # pragma: no cover - never called
        pass

    with pytest.raises(UserError) as exc_info:
        Tool(plain, takes_ctx=True)
    assert str(exc_info.value) == (
        'Error generating schema for test_a_context_tool_must_take_the_run_context_first.<locals>.plain:\n'
        '  First parameter of tools that take context must be annotated with RunContext[...]'
    )


def test_every_misplaced_run_context_is_reported() -> None:
    def late(x: int, ctx: RunContext[None]) -> None:  # pragma: no cover - never called
        pass

    with pytest.raises(UserError, match='RunContext annotations can only be used with tools that take context'):
        Tool(late, takes_ctx=False)
    with pytest.raises(UserError) as exc_info:
        Tool(late, takes_ctx=True)
    assert str(exc_info.value).splitlines()[1:] == [
        '  First parameter of tools that take context must be annotated with RunContext[...]',
        '  RunContext annotations can only be used as the first argument',
    ]


def test_a_builtin_without_a_signature_is_a_user_error() -> None:
    with pytest.raises(UserError, match='Error generating schema for min:\n  no signature found for builtin'):
        Tool(min)


def test_missing_parameter_descriptions_can_be_required() -> None:
    message = 'Error generating schema for undocumented:\n  Missing parameter descriptions for x, y'
    with pytest.raises(UserError, match=message):
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


@settings(suppress_health_check=[HealthCheck.too_slow])  # regex strategies draw slowly on a busy machine
@given(st.sampled_from(['google', 'numpy', 'sphinx']), _WORDS, st.dictionaries(_NAMES, _WORDS, min_size=1, max_size=4))
def test_each_docstring_style_is_detected_and_parsed(style: str, summary: str, params: dict[str, str]) -> None:
    def function() -> None:  # pragma: no cover - only its docstring is read
        pass

    function.__doc__ = _docstring(style, summary, params)
    assert doc_descriptions(function, 'auto') == (summary, params)


class _Callable:
    def __call__(self, ctx: RunContext[int], x: int) -> int:  # pragma: no cover - never called
        return x


class _Methods:
    def bound(self, ctx: RunContext[int], x: int) -> _Methods:  # pragma: no cover - never called
        return self

    @staticmethod
    def static(x: int) -> int:  # pragma: no cover - never called
        return x


def _ctx_first(ctx: RunContext[int], x: int, y: str) -> str:  # pragma: no cover - never called
    return y


@pytest.mark.parametrize(
    ('target', 'expected'),
    [
        (functools.partial(_ctx_first, y='b'), True),
        (functools.partial(functools.partial(_ctx_first, y='b'), x=1), True),
        (_Callable(), True),
        (_Methods().bound, True),
        (_Methods.static, False),
        (_Methods.__dict__['static'], False),
        (min, False),
        (lambda: None, False),
        (int, False),
    ],
)
def test_the_run_context_is_found_on_any_callable(target: Any, expected: bool) -> None:
    assert takes_run_context(target) is expected


def test_a_bound_method_returning_self_describes_its_class() -> None:
    class Weather(pydantic.BaseModel):
        degrees: float

        def read(self) -> Self:  # pragma: no cover - never called
            return self

    assert Tool(Weather(degrees=1).read).tool_def.return_schema == {
        'properties': {'degrees': {'type': 'number'}},
        'required': ['degrees'],
        'title': 'Weather',
        'type': 'object',
    }
    assert _extract_return_schema_type(Self, lambda: None) is Any


@pytest.mark.anyio
async def test_partial_and_callable_objects_are_called_with_their_arguments() -> None:
    async def add(x: int, y: int) -> int:
        return x + y

    schema = function_schema(functools.partial(add, y=2))
    assert schema.is_async is True
    assert await schema.call(schema.validate({'x': 1}), None) == 3

    class Doubler:
        async def __call__(self, x: int) -> int:
            return 2 * x

    doubler = function_schema(Doubler())
    assert doubler.is_async is True
    assert await doubler.call(doubler.validate('{"x": 4}'), None) == 8


def test_a_field_description_wins_over_the_docstring() -> None:
    def described(x: Annotated[int, pydantic.Field(description='from the field')]) -> None:  # pragma: no cover
        """Args:
        x: from the docstring
        """

    assert function_schema(described).json_schema['properties']['x'] == {
        'description': 'from the field',
        'type': 'integer',
    }


class _Point(pydantic.BaseModel):
    x: int


class _Holder(pydantic.BaseModel):  # a model with a field named as the parameter
    point: int = 0


def _move(point: _Point) -> None:  # pragma: no cover - never called
    pass


def _keep(point: _Holder) -> None:  # pragma: no cover - never called
    pass


def test_flattened_arguments_sent_wrapped_as_json_are_unwrapped() -> None:
    assert function_schema(_move).validate('{"point": {"x": 1}}') == {'point': _Point(x=1)}
    assert function_schema(_keep).validate('{"point": 2}') == {'point': _Holder(point=2)}
    assert function_schema(_keep).validate({'point': {'point': 3}}) == {'point': _Holder(point=3)}


def test_a_recursive_model_parameter_keeps_its_reference() -> None:
    schema = function_schema(_walk).json_schema
    assert schema['$ref'] == '#/$defs/_Node'
    assert set(schema['$defs']) == {'_Node'}
    with pytest.raises(UserError, match='Schema must be an object'):
        function_schema(_scalar_root)


class _Node(pydantic.BaseModel):
    children: list[_Node] = []


def _walk(node: _Node) -> None:  # pragma: no cover - never called
    pass


class _Wrapped(pydantic.RootModel[int]):
    __is_model_like__ = True


def _scalar_root(value: _Wrapped) -> None:  # pragma: no cover - never called
    pass
