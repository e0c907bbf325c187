"""Output specs: how a run's output is asked of the model (a tool call, native structured output, a prompt,
or plain text) and turned into a typed value.

Give `Agent(output_type=...)` a type (`str`, a pydantic model, a dataclass, a TypedDict, a scalar, a union
or list of them), a function (its arguments become the schema; its return value is the output), or one of
the markers below.
"""

from __future__ import annotations as _annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Literal, TypeAlias, cast, overload

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic_core import core_schema
from typing_extensions import TypeAliasType, TypeVar

from ._messages.model_messages import ModelResponse, ToolCallPart
from ._tools.deferred_calls import DeferredToolRequests
from ._tools.definition import ToolDefinition
from .exceptions import UserError

__all__ = (
    'OutputDataT',
    'OutputMode',
    'OutputSpec',
    'ToolOutput',
    'NativeOutput',
    'PromptedOutput',
    'TextOutput',
    'OutputObjectDefinition',
    'OutputContext',
    'StructuredDict',
    'PendingModelResponse',
    'Choice',
    'Choices',
    'BoolCriteria',
    'DEFAULT_OUTPUT_TOOL_NAME',
    'DEFAULT_OUTPUT_TOOL_DESCRIPTION',
    'DeferredToolRequests',
    'StructuredOutputMode',
    'OutputTypeOrFunction',
    'TextOutputFunc',
)

OutputDataT = TypeVar('OutputDataT', default=str, covariant=True)
"""Type of a run's output."""
T_co = TypeVar('T_co', covariant=True)
ChoiceValueT = TypeVar('ChoiceValueT')
"""What a `Choice` made in a call stands for (a type variable of the call, so `Choice.__init__` can type `self`)."""

DEFAULT_OUTPUT_TOOL_NAME = 'final_result'
"""The name of the output tool (`final_result_<Name>` for each member of a union)."""
DEFAULT_OUTPUT_TOOL_DESCRIPTION = 'The final response which ends this conversation'
"""The description of an output tool whose type has no docstring."""

StructuredOutputMode: TypeAlias = Literal['tool', 'native', 'prompted']
"""How structured output is asked of a model (a profile's `default_structured_output_mode`)."""

OutputTypeOrFunction = TypeAliasType(
    'OutputTypeOrFunction',
    type[T_co] | Callable[..., T_co] | Callable[..., Awaitable[T_co]],
    type_params=(T_co,),
)
"""One output type, or a function whose return value is the output (sync or async)."""

# The first parameter is the `RunContext` (typed `Any` here: this vocabulary module imports no engine).
TextOutputFunc = TypeAliasType(
    'TextOutputFunc',
    Callable[[Any, str], Awaitable[T_co] | T_co] | Callable[[str], Awaitable[T_co] | T_co],
    type_params=(T_co,),
)
"""The function of a `TextOutput`: called with the model's text (after the `RunContext` when it takes one), sync or
async; returns the output."""

OutputMode: TypeAlias = Literal['text', 'tool', 'native', 'prompted', 'tool_or_text', 'image', 'auto']
"""How the output is asked of the model (`'tool'` also when text is allowed too; `'tool_or_text'` is no longer used,
as in pydantic-ai 1.x). `'image'`: only an image is the output. `'auto'`: the mode of the model's profile
(`default_structured_output_mode`), chosen when a run starts, so that a model is never sent `'auto'`."""


@dataclass(init=False)
class ToolOutput(Generic[T_co]):
    """Ask for the output as a call of an output tool (the default for structured types)."""

    output: Any
    """The output type, or a function whose return value is the output."""
    name: str | None
    """The output tool's name; `final_result` (or `final_result_<Name>`) if `None`."""
    description: str | None
    """The output tool's description; the type's docstring if `None`."""
    max_retries: int | None
    """How many times in a row this output tool may be retried; the agent's output retries if `None`."""
    strict: bool | None
    """Whether the model should follow the schema strictly."""
    sequential: bool
    """Whether a call of this output tool is a barrier: the calls made before it finish first, it runs alone, and
    the calls after it start when it is done (pydantic-ai 2.x)."""

    def __init__(
        self,
        type_: type[T_co] | Callable[..., T_co] | Callable[..., Awaitable[T_co]],
        *,
        name: str | None = None,
        description: str | None = None,
        max_retries: int | None = None,
        strict: bool | None = None,
        sequential: bool = False,
    ) -> None:
        self.output = type_
        self.name = name
        self.description = description
        if max_retries is not None and max_retries < 0:
            raise UserError(f'max_retries must be >= 0, got {max_retries}')
        self.max_retries = max_retries
        self.strict = strict
        self.sequential = sequential


@dataclass(init=False)
class NativeOutput(Generic[T_co]):
    """Ask for the output with the model's native structured output (a JSON response matching a schema)."""

    outputs: Any
    """The output type or types."""
    name: str | None
    """The name of the schema sent to the model."""
    description: str | None
    """The description of the schema sent to the model."""
    strict: bool | None
    """Whether the model should follow the schema strictly."""

    def __init__(
        self,
        outputs: type[T_co] | Sequence[type[T_co]],
        *,
        name: str | None = None,
        description: str | None = None,
        strict: bool | None = None,
    ) -> None:
        self.outputs = outputs
        self.name = name
        self.description = description
        self.strict = strict


@dataclass(init=False)
class PromptedOutput(Generic[T_co]):
    """Ask for the output as JSON text, by adding the schema to the instructions; works with any model."""

    outputs: Any
    """The output type or types."""
    name: str | None
    """The name of the schema."""
    description: str | None
    """The description of the schema."""
    template: str | Literal[False] | None
    """The instructions text, with `{schema}` where the JSON schema goes; a built-in text if `None`; `False`:
    no instructions at all (the prompt asks for the JSON itself)."""

    def __init__(
        self,
        outputs: type[T_co] | Sequence[type[T_co]],
        *,
        name: str | None = None,
        description: str | None = None,
        template: str | Literal[False] | None = None,
    ) -> None:
        self.outputs = outputs
        self.name = name
        self.description = description
        self.template = template


@dataclass
class TextOutput(Generic[T_co]):
    """Take the model's plain text answer and turn it into the output with `output_function`."""

    output_function: Callable[..., T_co] | Callable[..., Awaitable[T_co]]
    """Called with the text (after the `RunContext` if its first parameter is one); returns the output."""


@dataclass(kw_only=True)
class OutputObjectDefinition:
    """The schema of a structured output sent to models for native or prompted output."""

    json_schema: dict[str, Any]
    """The JSON schema of the output."""
    name: str | None = None
    """The schema's name."""
    description: str | None = None
    """The schema's description."""
    strict: bool | None = None
    """Whether the model should follow the schema strictly."""


@dataclass
class OutputContext:
    """What the output hooks of capabilities (`before_output_validate`, ...) are told about the output at hand."""

    mode: OutputMode | Literal['image', 'auto']
    """The output mode of the run's output schema (`'tool'` also when the model answered in text that the schema
    accepts too: see `tool_call`)."""
    output_type: Any
    """The type the model is asked for (for an output function, the type of its argument), if known."""
    object_def: OutputObjectDefinition | None
    """The schema of the structured output, if there is one."""
    has_function: bool
    """Whether an output function turns the validated value into the output."""
    function_name: str | None = None
    """The name of that output function, when known."""
    tool_call: ToolCallPart | None = None
    """The output tool call the output came in, or `None` for text."""
    tool_def: ToolDefinition | None = None
    """The definition of that output tool."""
    allows_text: bool = False
    """Whether the schema accepts a text answer."""
    allows_image: bool = False
    """Whether the schema accepts an image answer."""
    allows_deferred_tools: bool = False
    """Whether the schema accepts `DeferredToolRequests` as the output."""


_OutputItem: TypeAlias = (
    type[T_co] | ToolOutput[T_co] | TextOutput[T_co] | Callable[..., T_co] | Callable[..., Awaitable[T_co]]
)
OutputSpec: TypeAlias = _OutputItem[T_co] | NativeOutput[T_co] | PromptedOutput[T_co] | Sequence[_OutputItem[T_co]]
"""Anything `Agent(output_type=...)` accepts: a type, a function, a marker, or a sequence of them."""


def _inline_defs(schema: Any, defs: dict[str, Any], seen: tuple[str, ...] = ()) -> Any:
    """`schema` with every `#/$defs/...` reference replaced by the definition (a recursive one is a `UserError`)."""
    if isinstance(schema, list):
        return [_inline_defs(item, defs, seen) for item in schema]
    if not isinstance(schema, dict):
        return schema
    ref = schema.get('$ref')
    if isinstance(ref, str) and ref.startswith('#/$defs/'):
        key = ref.removeprefix('#/$defs/')
        if key in seen or key not in defs:
            raise UserError(
                '`StructuredDict` does not currently support recursive `$ref`s and `$defs`. '
                'See https://github.com/pydantic/pydantic/issues/12145 for more information.'
            )
        siblings = {k: v for k, v in schema.items() if k != '$ref'}
        return {**_inline_defs(defs[key], defs, (*seen, key)), **_inline_defs(siblings, defs, seen)}
    return {k: _inline_defs(v, defs, seen) for k, v in schema.items() if k != '$defs'}


def _object_json_schema(json_schema: dict[str, Any]) -> dict[str, Any]:
    """`json_schema` if it is an object; for a top-level `$ref`, the object it points to (when that object has no
    references of its own), else the schema as given (its definitions are inlined after)."""
    if json_schema.get('type') == 'object':
        return dict(json_schema)
    ref = json_schema.get('$ref')
    if not isinstance(ref, str):
        raise UserError('Schema must be an object')
    target = json_schema.get('$defs', {}).get(ref.removeprefix('#/$defs/')) if ref.startswith('#/$defs/') else None
    if isinstance(target, dict) and target.get('type') == 'object' and not _has_ref(target):
        return dict(cast(dict[str, Any], target))
    return dict(json_schema)


def _has_ref(schema: Any) -> bool:
    if isinstance(schema, dict):
        return '$ref' in schema or any(_has_ref(value) for value in cast(dict[str, Any], schema).values())
    if isinstance(schema, list):
        return any(_has_ref(item) for item in schema)
    return False


def StructuredDict(
    json_schema: dict[str, Any], name: str | None = None, description: str | None = None
) -> type[dict[str, Any]]:
    """A `dict[str, Any]` type carrying a JSON schema, for a structured output known only as JSON schema.

    The model is given `json_schema` (its `$defs` inlined); the output is the dict the model answers, not
    validated beyond being a dict with string keys.

    ```python
    from edgewise.agent import Agent, StructuredDict
    from edgewise.agent.models.test import TestModel

    person = StructuredDict(
        {'type': 'object', 'properties': {'name': {'type': 'string'}, 'age': {'type': 'integer'}},
         'required': ['name', 'age']},
        name='Person',
    )
    agent = Agent(TestModel(), output_type=person)
    print(agent.run_sync('Make up a person').output)
    #> {'name': 'a', 'age': 0}
    ```

    Args:
        json_schema: The JSON schema of an object.
        name: The schema's name (its `title`); the schema's own `title` if `None`.
        description: The schema's description; the schema's own `description` if `None`.

    Raises:
        UserError: the schema is not an object, or its definitions refer to themselves.
    """
    schema = _object_json_schema(json_schema)
    if '$defs' in schema:
        schema = _inline_defs(schema, schema['$defs'])
    if name:
        schema['title'] = name
    if description:
        schema['description'] = description

    class _StructuredDict(dict[str, Any]):
        __is_model_like__ = True  # its schema is an object: an output tool takes it as its arguments, unwrapped

        @classmethod
        def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
            return core_schema.dict_schema(keys_schema=core_schema.str_schema(), values_schema=core_schema.any_schema())

        @classmethod
        def __get_pydantic_json_schema__(
            cls, schema_: core_schema.CoreSchema, handler: GetJsonSchemaHandler
        ) -> dict[str, Any]:
            return schema

    _StructuredDict.__doc__ = schema.get('description')
    _StructuredDict.__name__ = _StructuredDict.__qualname__ = str(schema.get('title') or 'StructuredDict')
    return _StructuredDict


@dataclass(kw_only=True)
class PendingModelResponse:
    """An output type for a run that may end while the provider is still working on a response (a batch request,
    a background response): put it beside the output type (`output_type=[Answer, PendingModelResponse]`) and a run
    whose model response comes back with `state='suspended'` ends with this as its output instead of waiting.

    The run's message history ends in the suspended response, kept for the application to look at later.
    """

    response: ModelResponse
    """The response the provider is still working on (its `state` is `'suspended'`)."""


_UNSET: Any = object()


@dataclass(init=False)
class Choice(Generic[T_co]):
    """One option of a `Choices` set, with what it means to the model and what picking it gives.

    Needed only when an option stands for something else than its own key: `Choice('Paid by card', value=4)`.
    """

    description: str | None
    """What the option means, shown to the model next to its key."""
    value: T_co
    """What the option gives when the model picks it (its key when not given). A callable is called, with no
    arguments, once the model's pick is final, and the output is what it returns (it may be `async`; a plain
    function runs in a worker thread); such a set can only be an agent's `output_type`."""

    @overload
    def __init__(self: Choice[str], description: str | None = None) -> None: ...

    @overload
    def __init__(
        self: Choice[ChoiceValueT], description: str | None = None, *, value: Callable[[], Awaitable[ChoiceValueT]]
    ) -> None: ...

    @overload
    def __init__(
        self: Choice[ChoiceValueT], description: str | None = None, *, value: Callable[[], ChoiceValueT]
    ) -> None: ...

    @overload
    def __init__(self: Choice[ChoiceValueT], description: str | None = None, *, value: ChoiceValueT) -> None: ...

    def __init__(self, description: str | None = None, *, value: Any = _UNSET) -> None:
        """Describe an option.

        Raises:
            UserError: `value` is a callable that cannot be called without arguments.
        """
        if _needs_arguments(value):
            raise UserError(
                'A callable `Choice` value is called with no arguments when the model picks it, '
                f'but {value!r} requires some. Bind them with `functools.partial` or a closure.'
            )
        self.description = description
        self.value = value


def _needs_arguments(value: Any) -> bool:
    """Whether `value` is callable but cannot be called without arguments (unknown signatures pass)."""
    if not callable(value):
        return False
    try:
        parameters = inspect.signature(value).parameters.values()
    except (TypeError, ValueError):
        return False
    required = (
        inspect.Parameter.POSITIONAL_ONLY,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
        inspect.Parameter.KEYWORD_ONLY,
    )
    return any(p.default is inspect.Parameter.empty and p.kind in required for p in parameters)


class _ChoicesWithActions:
    """The base of the type `Choices` gives when one of its values is callable: the model picks a key (validated by
    `keys_type`), and the output schema calls what that key stands for once the pick is final. Anywhere else than
    an agent's output type nothing would call it, so its pydantic schema refuses to be built."""

    keys_type: ClassVar[type[Any]]
    """The same set of keys, without values: what validates the model's pick."""
    values: ClassVar[Mapping[str, Any]]
    """What each key stands for."""

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        raise UserError(
            "A `Choices` set with a callable `Choice` value can only be used as an agent's `output_type`, "
            'as that is the only place Edgewise can call the action the model picked. '
            'To pick one as a tool parameter or a model field, give the choices plain values and call the '
            'action yourself.'
        )


@overload
def Choices(
    choices: Sequence[str] | Mapping[str, str], *, name: str | None = None, description: str | None = None
) -> type[str]: ...


@overload
def Choices(
    choices: Mapping[str, Choice[T_co]], *, name: str | None = None, description: str | None = None
) -> type[T_co]: ...


@overload
def Choices(
    choices: Mapping[str, str | Choice[T_co]], *, name: str | None = None, description: str | None = None
) -> type[str | T_co]: ...


def Choices(
    choices: Sequence[str] | Mapping[str, str | Choice[Any]],
    *,
    name: str | None = None,
    description: str | None = None,
) -> type[Any]:
    """A type whose value is one of `choices`, for options known only while the program runs (for options known
    when the code is written, a `Literal` or an `Enum` with `UseEnumMemberDocstrings` checks more).

    It is a type, so it can be an output type, a field of a pydantic model or a tool parameter. The model is shown
    each key with its description; the value is the key picked, or the `Choice.value` it stands for.

    ```python
    from edgewise.agent import Agent, Choices
    from edgewise.agent.models.test import TestModel

    Intent = Choices({'refund': 'Money back.', 'replace': 'A new unit.'}, description='What the customer wants.')
    agent = Agent(TestModel(custom_output_args='replace'), output_type=Intent)
    print(agent.run_sync('Send me another one.').output)
    #> replace
    ```

    Args:
        choices: The keys; or a mapping of each key to its description, or to a `Choice`.
        name: The name of the output tool or schema (`'Choices'` if `None`).
        description: What the model is asked to pick.

    Raises:
        UserError: `choices` is a single string, or empty.
    """
    resolved = _choices_by_key(choices)
    values: dict[str, Any] = {key: key if choice.value is _UNSET else choice.value for key, choice in resolved.items()}
    maps_values = any(value is not key for key, value in values.items())
    has_actions = any(callable(value) for value in values.values())
    json_schema = _choices_json_schema(resolved, description)
    type_name = name or 'Choices'

    class _Choices:
        @classmethod
        def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
            schema: core_schema.CoreSchema = core_schema.literal_schema(list(values))
            # Actions are called by the output schema once the pick is final (a validator cannot await, and a
            # streamed value is validated again with each chunk); plain values are looked up here.
            if maps_values and not has_actions:
                schema = core_schema.no_info_after_validator_function(values.__getitem__, schema)
            return schema

        @classmethod
        def __get_pydantic_json_schema__(
            cls, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
        ) -> dict[str, Any]:
            return dict(json_schema)

    _Choices.__name__ = _Choices.__qualname__ = type_name
    if not has_actions:
        return _Choices
    actions = type(type_name, (_ChoicesWithActions,), {'keys_type': _Choices, 'values': values})
    actions.__qualname__ = type_name
    return actions


def _choices_by_key(choices: Sequence[str] | Mapping[str, str | Choice[Any]]) -> dict[str, Choice[Any]]:
    if isinstance(choices, str):
        raise UserError('`Choices` takes a sequence or mapping of choices, not a single string.')
    if isinstance(choices, Mapping):
        resolved = {key: Choice(item) if isinstance(item, str) else item for key, item in choices.items()}
    else:
        resolved = {key: Choice() for key in choices}
    if not resolved:
        raise UserError('`Choices` requires at least one choice.')
    return resolved


def _choices_json_schema(choices: dict[str, Choice[Any]], description: str | None) -> dict[str, Any]:
    """A string among the keys: an `enum`, or, when some keys are described, `anyOf` one `const` per key (the shape
    of an enum whose members have docstrings, see `UseEnumMemberDocstrings`)."""
    json_schema: dict[str, Any]
    if any(choice.description for choice in choices.values()):
        options = [
            {'const': key, **({'description': choice.description} if choice.description else {})}
            for key, choice in choices.items()
        ]
        json_schema = {'type': 'string', 'anyOf': options}
    else:
        json_schema = {'type': 'string', 'enum': list(choices)}
    if description:
        json_schema['description'] = description
    return json_schema


@dataclass(frozen=True, kw_only=True)
class BoolCriteria:
    """What a yes and a no each mean, for a `bool` field or parameter: `Annotated[bool, BoolCriteria(true=...,
    false=...)]`. The schema shows the model both meanings (`anyOf` the two constants, each described); the value
    stays a plain `bool`.

    Raises:
        UserError: (when the schema is made) it annotates something else than a plain `bool`.
    """

    true: str
    """What `True` means."""
    false: str
    """What `False` means."""

    def __get_pydantic_json_schema__(
        self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> dict[str, Any]:
        json_schema = dict(handler(schema))
        # The rendered schema is checked (a `bool` behind a validator passes); a `Literal[True]` renders as a boolean
        # too, but its `const`/`enum` would contradict the two meanings.
        if json_schema.get('type') != 'boolean' or 'const' in json_schema or 'enum' in json_schema:
            raise UserError(
                '`BoolCriteria` says what each answer of a `bool` means, so it can only annotate a plain `bool`, '
                'not a `Literal` of `True` and/or `False` or any other type.'
            )
        json_schema['anyOf'] = [{'const': True, 'description': self.true}, {'const': False, 'description': self.false}]
        return json_schema
