"""A function's signature and docstring turned into a JSON schema, and its arguments validated and applied.

Used for tools and for output functions. The parameters (less the `RunContext`) become a `TypedDict` built for
the function, so validated arguments are a dict of keyword arguments; a function whose only parameter is a
model-like type (a pydantic model, dataclass or `TypedDict`) shows the model that type's own schema, as
pydantic-ai 1.x does, and its arguments are validated into `{parameter: value}`.
"""

from __future__ import annotations as _annotations

import inspect
import types
import typing
import warnings
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, is_dataclass
from functools import partial
from typing import Annotated, Any, get_args, get_origin

import pydantic
import pydantic_core
import typing_extensions
from pydantic.errors import PydanticSchemaGenerationError, PydanticUserError
from pydantic.fields import FieldInfo
from pydantic.json_schema import GenerateJsonSchema
from pydantic_core import SchemaValidator, core_schema

from .._messages.content import ToolReturn
from .._threads import run_in_thread
from ..exceptions import UserError
from ..models._model import RunContext
from .docstrings import DocstringFormat, described_enum_schema, doc_descriptions

__all__ = (
    'DocstringFormat',
    'FunctionSchema',
    'GenerateOutputJsonSchema',
    'GenerateToolJsonSchema',
    'function_schema',
    'passthrough_schema',
)


class GenerateOutputJsonSchema(GenerateJsonSchema):
    """The JSON schema of output types: as pydantic's, with the members of a `UseEnumMemberDocstrings` enum
    described by their docstrings."""

    def enum_schema(self, schema: core_schema.EnumSchema) -> dict[str, Any]:
        """Pydantic's schema of an enum, its members described when the enum asks for it."""
        return described_enum_schema(schema['cls'], schema['members'], super().enum_schema(schema))


class GenerateToolJsonSchema(GenerateOutputJsonSchema):
    """The JSON schema of tool arguments: as pydantic's, without the titles it derives from field names."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        """Never: a property's name already says what its title would."""
        return False


@dataclass(kw_only=True)
class FunctionSchema:
    """A function with the JSON schema of its arguments and the validator that applies them."""

    function: Callable[..., Any]
    """The function."""
    description: str | None
    """The function's description, from its docstring (`None` without one)."""
    json_schema: dict[str, Any]
    """The JSON schema of the function's arguments (without the `RunContext` parameter)."""
    takes_ctx: bool
    """Whether the first parameter is the `RunContext`."""
    is_async: bool
    """Whether the function is a coroutine function (else it runs in a worker thread)."""
    validator: Any
    """Validates arguments (a dict, or JSON text with `validate_json`) into a dict of keyword arguments."""
    name: str | None = None
    """The tool's name."""
    single_arg_name: str | None = None
    """The parameter whose model-like type's schema is the whole argument schema, if any."""
    positional_fields: list[str] = field(default_factory=list)
    """Parameters that can only be passed positionally, in order."""
    var_positional_field: str | None = None
    """The `*args` parameter, if any (its values arrive as a list)."""
    return_schema: dict[str, Any] | None = field(default_factory=dict)
    """The JSON schema of what the function returns (`{}` when it is not annotated)."""

    def validate(self, args: str | dict[str, Any] | None, context: Any = None) -> dict[str, Any]:
        """Validate arguments given as a JSON string or a dict into keyword arguments (`context`: the pydantic
        validation context).

        Raises:
            pydantic.ValidationError: the arguments do not match the schema.
        """
        if isinstance(args, str):
            result: dict[str, Any] = self.validator.validate_json(args or '{}', context=context)
        else:
            result = self.validator.validate_python(args or {}, context=context)
        return result

    def validate_partial(self, args: str | dict[str, Any] | None) -> dict[str, Any]:
        """Validate arguments that may still be arriving (JSON text cut anywhere): an unfinished last value is
        left out, an unfinished string kept as far as it goes.

        Raises:
            pydantic.ValidationError, ValueError: the arguments so far do not validate.
        """
        if isinstance(args, dict) or args is None:
            return self.validate(args)
        if isinstance(self.validator, _SingleArgValidator):
            return self.validator.validate_partial_json(args or '{}')
        result: dict[str, Any] = self.validator.validate_json(args or '{}', allow_partial='trailing-strings')
        return result

    async def call(self, kwargs: dict[str, Any], ctx: Any) -> Any:
        """Call the function with validated keyword arguments (and `ctx` first when it takes one); what a sync
        function returns is awaited when it is awaitable (pydantic-ai 2.x)."""
        kwargs = dict(kwargs)
        positional: list[Any] = [ctx] if self.takes_ctx else []
        for name in self.positional_fields:
            positional.append(kwargs.pop(name))
        if self.var_positional_field is not None:
            positional.extend(kwargs.pop(self.var_positional_field, ()))
        if self.is_async:
            return await self.function(*positional, **kwargs)
        # Boxed: trio refuses a worker thread's result that is a coroutine, which a plain `def` may return.
        (result,) = await run_in_thread(_boxed_call, self.function, positional, kwargs)
        return await result if inspect.isawaitable(result) else result


def _boxed_call(function: Callable[..., Any], args: list[Any], kwargs: dict[str, Any]) -> tuple[Any]:
    return (function(*args, **kwargs),)


def _is_run_context(annotation: Any) -> bool:
    return annotation is RunContext or get_origin(annotation) is RunContext


def _hints_target(function: Any) -> Any:
    """What holds the annotations of `function`: itself, the function of a partial, or a callable's `__call__`."""
    while isinstance(function, partial):
        function = function.func
    if inspect.isfunction(function) or inspect.ismethod(function) or inspect.isbuiltin(function):
        return function
    if isinstance(function, staticmethod | classmethod):
        return function.__func__
    call = getattr(type(function), '__call__', None)  # noqa: B004 - the class's own `__call__`, for its hints
    return call if call is not None and not isinstance(function, type) else function


def _type_hints(function: Any) -> dict[str, Any]:
    target = _hints_target(function)
    try:
        return typing.get_type_hints(target, include_extras=True)
    except Exception:  # some hint does not resolve (a local class): resolve the others one by one
        pass
    namespace = dict(getattr(target, '__globals__', {}))
    hints: dict[str, Any] = {}
    for key, value in (getattr(target, '__annotations__', None) or {}).items():
        try:
            hints[key] = eval(value, namespace) if isinstance(value, str) else value  # as typing resolves them
        except Exception:  # left as text: pydantic may still resolve it
            hints[key] = value
    return hints


def takes_run_context(function: Callable[..., Any]) -> bool:
    """Whether the first parameter of `function` is annotated as a `RunContext` (of any deps type)."""
    try:
        params = list(inspect.signature(function).parameters.values())
    except (ValueError, TypeError):
        return False
    if not params:
        return False
    annotation = _type_hints(function).get(params[0].name, params[0].annotation)
    if isinstance(annotation, str):
        return annotation.startswith(('RunContext', 'tools.RunContext'))
    return _is_run_context(annotation)


_takes_ctx = takes_run_context  # the name pydantic-ai's own tests use


def is_model_like(annotation: Any) -> bool:
    """Whether a type's JSON schema is an object of named fields: a pydantic model, dataclass or `TypedDict`."""
    return (
        isinstance(annotation, type)
        and not isinstance(annotation, types.GenericAlias)
        and (
            issubclass(annotation, pydantic.BaseModel)
            or is_dataclass(annotation)
            or typing_extensions.is_typeddict(annotation)
            or bool(getattr(annotation, '__is_model_like__', False))
        )
    )


def _has_description(annotation: Any) -> bool:
    if get_origin(annotation) is not Annotated:
        return False
    return any(isinstance(meta, FieldInfo) and meta.description is not None for meta in get_args(annotation)[1:])


_CONFIG = pydantic.ConfigDict(use_attribute_docstrings=True)


def _adapter(annotation: Any) -> pydantic.TypeAdapter[Any]:
    """A type adapter reading attribute docstrings as field descriptions where the type takes a config."""
    try:
        return pydantic.TypeAdapter(annotation, config=_CONFIG)
    except PydanticUserError:  # models and pydantic dataclasses carry their own config
        return pydantic.TypeAdapter(annotation)


def _single_arg_schema(name: str, annotation: Any, generator: type[GenerateJsonSchema]) -> dict[str, Any] | None:
    """The schema of a `TypedDict` or plain dataclass with its attribute docstrings as descriptions.

    Those types take no config of their own, so the type is put in a `TypedDict` that has one (nested types
    inherit it) and its definition taken out; `None` when it cannot be (a recursive type).
    """
    if issubclass(annotation, pydantic.BaseModel) or hasattr(annotation, '__pydantic_config__'):
        return None
    make_typed_dict: Any = typing_extensions.TypedDict
    outer = make_typed_dict('Outer', {name: annotation})
    outer.__pydantic_config__ = _CONFIG
    schema = pydantic.TypeAdapter(outer).json_schema(schema_generator=generator)
    ref = schema['properties'][name].get('$ref', '')
    defs: dict[str, Any] = schema.get('$defs', {})
    key = ref.removeprefix('#/$defs/')
    if key not in defs:  # pragma: no cover - a model-like type is always a definition
        return None
    inner: dict[str, Any] = defs.pop(key)
    if ref in repr(inner) or ref in repr(defs):
        return None
    return {**inner, '$defs': defs} if defs else inner


class _SingleArgValidator:
    """Validates the arguments of a function taking one model-like parameter into `{parameter: value}`.

    The model sends the type's fields at the top level; `{parameter: {...fields}}` (arguments validated once
    already, sent again) is accepted too, unless the type itself has a field of the parameter's name and the
    input is valid as it is.
    """

    def __init__(self, name: str, adapter: pydantic.TypeAdapter[Any], keys: set[str]) -> None:
        self._name = name
        self._adapter = adapter
        self._keys = keys

    def _wrapped(self, value: Any) -> bool:
        return isinstance(value, dict) and list(value) == [self._name]

    def validate_python(self, value: Any, **kwargs: Any) -> dict[str, Any]:
        """Validate a dict of arguments."""
        if not self._wrapped(value):
            return {self._name: self._adapter.validate_python(value, **kwargs)}
        if self._name in self._keys:
            try:
                return {self._name: self._adapter.validate_python(value, **kwargs)}
            except pydantic.ValidationError:
                pass
        return {self._name: self._adapter.validate_python(value[self._name], **kwargs)}

    def validate_partial_json(self, text: str) -> dict[str, Any]:
        """Validate arguments given as JSON text that may be cut anywhere."""
        value = pydantic_core.from_json(text, allow_partial='trailing-strings')
        if self._wrapped(value):
            value = value[self._name]
        return {self._name: self._adapter.validate_python(value, experimental_allow_partial='trailing-strings')}

    def validate_json(self, text: str | bytes, **kwargs: Any) -> dict[str, Any]:
        """Validate arguments given as JSON text."""
        value = pydantic_core.from_json(text)
        if isinstance(value, dict) and not self._wrapped(value):
            return {self._name: self._adapter.validate_json(text, **kwargs)}
        return self.validate_python(value, **kwargs)


def _object_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema itself when it is an object; a reference to an object without references of its own, resolved."""
    if schema.get('type') == 'object':
        return schema
    ref = schema.get('$ref')
    if isinstance(ref, str) and ref.startswith('#/$defs/'):
        resolved = schema.get('$defs', {}).get(ref.removeprefix('#/$defs/'))
        if isinstance(resolved, dict) and resolved.get('type') == 'object' and '$ref' not in repr(resolved):
            return resolved
        return schema
    raise UserError('Schema must be an object')


def _return_type(annotation: Any, function: Any) -> Any:
    """The type whose schema describes what `function` returns: `Any` when unannotated, `Self` resolved."""
    if annotation is None:
        return Any
    if annotation is typing_extensions.Self or annotation is getattr(typing, 'Self', None):
        owner = getattr(function, '__self__', None)
        return type(owner) if owner is not None else Any
    # `ToolReturn[T]` returns a T to the model; a bare `ToolReturn` says nothing of it.
    if annotation is ToolReturn:
        return Any
    if typing.get_origin(annotation) is ToolReturn:
        return typing.get_args(annotation)[0]
    return annotation


_extract_return_schema_type = _return_type  # the name pydantic-ai's own tests use


def _return_schema(annotation: Any, function: Any, generator: type[GenerateJsonSchema], label: str) -> dict[str, Any]:
    try:
        return pydantic.TypeAdapter(_return_type(annotation, function)).json_schema(
            schema_generator=generator, mode='serialization'
        )
    except (PydanticSchemaGenerationError, PydanticUserError):
        warnings.warn(
            f'Could not generate return schema for {label!r}: unsupported return type {annotation!r}. '
            'Falling back to unconstrained schema.',
            UserWarning,
            stacklevel=4,
        )
        return {}


def function_schema(
    function: Callable[..., Any],
    schema_generator: type[GenerateJsonSchema] = GenerateToolJsonSchema,
    *,
    takes_ctx: bool | None = None,
    docstring_format: DocstringFormat = 'auto',
    require_parameter_descriptions: bool = False,
    name: str | None = None,
) -> FunctionSchema:
    """Build the schema of `function`'s arguments from its signature and docstring.

    Args:
        function: The function (a partial, method or callable object too).
        schema_generator: The JSON schema generator.
        takes_ctx: Whether the first parameter is the `RunContext`; inferred from its annotation if `None`
            (an unannotated first parameter is the context when `True`).
        docstring_format: How the docstring is written.
        require_parameter_descriptions: Fail when a parameter has no description in the docstring.
        name: The tool's name.

    Raises:
        UserError: the function has no signature, a `RunContext` where it should not (or the other way
            round), or lacks parameter descriptions while they are required; every problem is listed.
    """
    errors: list[str] = []
    try:
        signature = inspect.signature(function)
    except ValueError as exc:
        errors.append(str(exc))
        signature = inspect.Signature()
    hints = _type_hints(function)
    description, param_docs = doc_descriptions(_hints_target(function), docstring_format)
    fields: dict[str, Any] = {}
    model_like: dict[str, bool] = {}
    positional: list[str] = []
    var_positional: str | None = None
    var_keyword: Any = None
    missing: list[str] = []
    for index, (param_name, param) in enumerate(signature.parameters.items()):
        annotation = hints.get(param_name, param.annotation)
        if index == 0 and takes_ctx is None:
            takes_ctx = param.annotation is not param.empty and _is_run_context(annotation)
        if param.annotation is param.empty:
            if takes_ctx and index == 0:
                continue  # the run context, unannotated
            annotation = Any
        elif index == 0 and takes_ctx:
            if not _is_run_context(annotation):
                errors.append('First parameter of tools that take context must be annotated with RunContext[...]')
            continue
        elif _is_run_context(annotation):
            errors.append(
                'RunContext annotations can only be used with tools that take context'
                if not takes_ctx
                else 'RunContext annotations can only be used as the first argument'
            )
            continue
        if require_parameter_descriptions and param_name not in param_docs:
            missing.append(param_name)
        if param.kind is param.VAR_KEYWORD:
            var_keyword = annotation
            continue
        if param.kind is param.VAR_POSITIONAL:
            annotation = list[annotation]  # type: ignore[valid-type]
            var_positional = param_name
            positional = list(fields)  # the parameters before `*args` can only be given by position then
        elif param.kind is param.POSITIONAL_ONLY:
            positional.append(param_name)
        model_like[param_name] = is_model_like(annotation)
        doc = param_docs.get(param_name)
        extras: dict[str, Any] = {} if doc is None or _has_description(annotation) else {'description': doc}
        if param.default is param.empty:
            fields[param_name] = Annotated[annotation, pydantic.Field(**extras)] if extras else annotation
        else:
            fields[param_name] = typing_extensions.NotRequired[
                Annotated[annotation, pydantic.Field(param.default, **extras)]
            ]
    if missing:
        errors.append(f'Missing parameter descriptions for {", ".join(missing)}')
    if errors:
        label = getattr(function, '__qualname__', None) or getattr(function, '__name__', repr(function))
        raise UserError(f'Error generating schema for {label}:\n  ' + '\n  '.join(errors))

    single = next(iter(fields)) if len(fields) == 1 and var_keyword is None and model_like[next(iter(fields))] else None
    validator: Any
    if single is not None:
        adapter = _adapter(fields[single])
        json_schema = _single_arg_schema(single, fields[single], schema_generator) or adapter.json_schema(
            schema_generator=schema_generator
        )
        validator = _SingleArgValidator(single, adapter, set(json_schema.get('properties', {})))
        if not description:
            description = json_schema.pop('description', None)
    else:
        title = getattr(function, '__name__', 'arguments')
        make_typed_dict: Any = typing_extensions.TypedDict  # called with a name and fields known only now
        if var_keyword is None:
            typed_dict = make_typed_dict(title, fields)
            typed_dict.__pydantic_config__ = pydantic.ConfigDict(**_CONFIG, extra='forbid')
        else:
            typed_dict = make_typed_dict(title, fields, extra_items=var_keyword)
            typed_dict.__pydantic_config__ = _CONFIG
        adapter = pydantic.TypeAdapter(typed_dict)
        json_schema = adapter.json_schema(schema_generator=schema_generator)
        json_schema.pop('title', None)
        validator = adapter.validator
    label = str(getattr(function, '__qualname__', None) or getattr(function, '__name__', repr(function)))
    return FunctionSchema(
        function=function,
        name=name,
        description=description,
        json_schema=_object_schema(json_schema),
        takes_ctx=bool(takes_ctx),
        is_async=_is_async(function),
        validator=validator,
        single_arg_name=single,
        positional_fields=positional,
        var_positional_field=var_positional,
        return_schema=_return_schema(hints.get('return'), function, schema_generator, label),
    )


def _is_async(function: Any) -> bool:
    while isinstance(function, partial):
        function = function.func
    if inspect.iscoroutinefunction(function):
        return True
    call = getattr(function, '__call__', None)  # noqa: B004 - a callable object's `__call__`
    return not inspect.isfunction(function) and inspect.iscoroutinefunction(call)


_ANY_VALIDATOR = SchemaValidator(core_schema.any_schema())


def passthrough_schema(
    function: Callable[..., Any] | Callable[..., Awaitable[Any]],
    *,
    json_schema: dict[str, Any],
    description: str | None,
    takes_ctx: bool,
    name: str | None = None,
) -> FunctionSchema:
    """A schema given as JSON schema: arguments are passed to the function as they come, unvalidated."""
    return FunctionSchema(
        function=function,
        name=name,
        description=description,
        json_schema=json_schema,
        takes_ctx=takes_ctx,
        is_async=_is_async(function),
        validator=_ANY_VALIDATOR,
    )
