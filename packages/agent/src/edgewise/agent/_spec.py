"""Named specs: objects described as data (`'Name'`, `{'Name': arg}`, `{'Name': {kw: value}}`), the registries
that map those names to classes, and the JSON-schema forms of a registry's entries.

Agent specs (`edgewise.agent.agent.spec`) build their capabilities through these.
"""

from __future__ import annotations as _annotations

import inspect
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Literal, NotRequired, TypeVar

from pydantic import BaseModel, ConfigDict, model_serializer, model_validator
from pydantic_core import to_jsonable_python
from pydantic_core.core_schema import SerializationInfo, SerializerFunctionWrapHandler
from typing_extensions import TypedDict

from ._warnings import PydanticAIDeprecationWarning
from .exceptions import SpecError

__all__ = (
    'NamedSpec',
    'CapabilitySpec',
    'build_registry',
    'load_from_registry',
    'build_schema_types',
    'filter_serializable_type',
    'serializes_as_string_keyed_dict',
)

T = TypeVar('T')

_LONG_FORM_KEYS = frozenset({'name', 'arguments'})


def serializes_as_string_keyed_dict(value: Any) -> bool:
    """Whether `value` dumps to a dict whose keys are all strings: such a single argument cannot take the short
    form `{Name: value}`, which would read back as keyword arguments."""
    dumped = to_jsonable_python(value, serialize_unknown=True)
    return isinstance(dumped, dict) and all(isinstance(key, str) for key in dumped)


def _short_form_arguments(value: Any) -> tuple[Any] | dict[str, Any] | None:
    if isinstance(value, dict) and all(isinstance(key, str) for key in value):
        return value
    return (value,)


class NamedSpec(BaseModel):
    """How to build one named object: its `name` and constructor `arguments`.

    Read from the long form `{'name': ..., 'arguments': ...}` or one of the short forms: `'Name'` (no
    arguments), `{'Name': value}` (one positional argument) and `{'Name': {'key': value, ...}}` (keyword
    arguments).
    """

    # Schemas are built on first use: importing the agent builds none (the first build also loads pydantic's plugins).
    model_config = ConfigDict(defer_build=True)

    name: str
    """The registered name of the class to build."""
    arguments: tuple[Any] | dict[str, Any] | None
    """`None` (no arguments), a one-item tuple (one positional argument) or a dict (keyword arguments)."""

    @property
    def args(self) -> tuple[Any, ...]:
        """The positional arguments."""
        return self.arguments if isinstance(self.arguments, tuple) else ()

    @property
    def kwargs(self) -> dict[str, Any]:
        """The keyword arguments."""
        return self.arguments if isinstance(self.arguments, dict) else {}

    @model_validator(mode='before')
    @classmethod
    def _read_short_forms(cls, value: Any) -> Any:
        if isinstance(value, str):
            return {'name': value, 'arguments': None}
        if isinstance(value, dict) and not (set(value) == _LONG_FORM_KEYS and isinstance(value['name'], str)):
            if len(value) != 1:
                raise ValueError(f'Expected a single key containing the class name, found keys {list(value)}')
            [(name, arguments)] = value.items()
            return {'name': name, 'arguments': _short_form_arguments(arguments)}
        return value

    @model_serializer(mode='wrap')
    def _dump(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> Any:
        context = info.context
        if not (isinstance(context, dict) and context.get('use_short_form')):
            return handler(self)
        if self.arguments is None:
            return self.name
        if isinstance(self.arguments, dict):
            return {self.name: self.arguments}
        [argument] = self.arguments
        if serializes_as_string_keyed_dict(argument):
            return handler(self)
        return {self.name: argument}


class CapabilitySpec(NamedSpec):
    """The spec of one capability (an entry of `AgentSpec.capabilities`, or a capability nested in another's
    arguments)."""


_Instantiate = Callable[[type[Any], tuple[Any, ...], dict[str, Any]], Any]


@dataclass(frozen=True)
class CapabilitySpecContext:
    """The registry and builder of the spec being loaded, for capabilities whose arguments hold other
    capability specs (see `load_capability_from_nested_spec`)."""

    registry: Mapping[str, type[Any]]
    """The capabilities the spec may name."""
    instantiate: _Instantiate
    """Builds one capability from its class and arguments."""


capability_spec_context: ContextVar[CapabilitySpecContext | None] = ContextVar('capability_spec_context', default=None)
"""The context of the spec being loaded, `None` outside `Agent.from_spec` and a run's `spec=`."""


def build_registry(
    *,
    custom_types: Sequence[type[T]],
    defaults: Sequence[type[T]],
    get_name: Callable[[type[T]], str | None],
    label: str,
    validate: Callable[[type[T]], None] | None = None,
) -> Mapping[str, type[T]]:
    """Map names to classes: `custom_types` first (each checked by `validate`), then the `defaults` whose names
    are not taken; a default whose name is `None` is left out.

    Raises:
        ValueError: a custom class has no name, or two custom classes share one.
    """
    registry: dict[str, type[T]] = {}
    for cls in custom_types:
        if validate is not None:
            validate(cls)
        name = get_name(cls)
        if name is None:
            raise ValueError(f'Custom {label} class {cls.__name__} has opted out of serialization (name is None)')
        if name in registry:
            raise ValueError(f'Duplicate {label} class name: {name!r}')
        registry[name] = cls
    for cls in defaults:
        name = get_name(cls)
        if name is not None and name not in registry:
            registry[name] = cls
    return registry


def load_from_registry(
    registry: Mapping[str, type[T]],
    spec: NamedSpec,
    *,
    label: str,
    custom_types_param: str,
    context: str | None = None,
    instantiate: Callable[[type[T], tuple[Any, ...], dict[str, Any]], T] | None = None,
    legacy_aliases: Mapping[str, str] | None = None,
) -> T:
    """Build the object `spec` names, with `instantiate(cls, args, kwargs)` (by default `cls(*args, **kwargs)`).

    A name in `legacy_aliases` warns (`DeprecationWarning`) and stands for its new name.

    Raises:
        SpecError: the name is not in the registry, or building the object failed (the cause is chained).
    """
    name = spec.name
    if legacy_aliases is not None and name in legacy_aliases:
        import warnings

        new_name = legacy_aliases[name]
        warnings.warn(
            f'In {label} specs, {label} name {name!r} is deprecated, use {new_name!r} instead.',
            PydanticAIDeprecationWarning,
            stacklevel=2,
        )
        name = new_name
    cls = registry.get(name)
    if cls is None:
        raise SpecError(
            f'{label.capitalize()} {name!r} is not in the provided `{custom_types_param}`. '
            f'Valid choices: {list(registry)}. If you are trying to use a custom {label}, '
            f'you must include its type in the `{custom_types_param}` argument.'
        )
    try:
        if instantiate is None:
            return cls(*spec.args, **spec.kwargs)
        return instantiate(cls, spec.args, spec.kwargs)
    except Exception as error:
        where = f' for {context}' if context else ''
        raise SpecError(f'Failed to instantiate {label} {spec.name!r}{where}: {error}') from error


def filter_serializable_type(tp: Any) -> Any | None:
    """`tp` without what JSON cannot carry (type variables, callables): `None` when nothing is left, a union
    keeping only its serializable members."""
    if isinstance(tp, TypeVar):
        return None
    origin = typing.get_origin(tp)
    if origin is Callable:
        return None
    members = typing.get_args(tp)
    if origin is typing.Union or isinstance(tp, types.UnionType):
        kept = [k for member in members if (k := filter_serializable_type(member)) is not None]
        if not kept:
            return None
        return kept[0] if len(kept) == 1 else typing.Union[tuple(kept)]  # noqa: UP007
    if any(filter_serializable_type(member) is None for member in members):
        return None
    return tp


def _parameter_types(target: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The serializable parameters of `target` (all, required) with their types."""
    try:
        hints = typing.get_type_hints(target, include_extras=True)
    except Exception:
        hints = {}
    every: dict[str, Any] = {}
    required: dict[str, Any] = {}
    for parameter in inspect.signature(target).parameters.values():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        if parameter.name in ('self', 'cls') and parameter.kind is not parameter.KEYWORD_ONLY:
            continue
        hint = filter_serializable_type(hints.get(parameter.name, Any))
        if hint is None:
            continue
        if parameter.default is parameter.empty:
            every[parameter.name] = required[parameter.name] = hint
        else:
            every[parameter.name] = NotRequired[hint]
    return every, required


def _closed_typed_dict(title: str, fields: dict[str, Any]) -> Any:
    make_typed_dict: Any = TypedDict  # a functional TypedDict with a computed name, which type checkers refuse
    typed_dict = make_typed_dict(title, fields)
    typed_dict.__pydantic_config__ = ConfigDict(extra='forbid', arbitrary_types_allowed=True)
    return typed_dict


def build_schema_types(
    registry: Mapping[str, type[Any]],
    *,
    get_schema_target: Callable[[type[Any]], Any] | None = None,
) -> list[Any]:
    """The types of the spec forms each registered class accepts (for a JSON schema of a union of them): the
    bare name when no argument is required, `{name: value}` when one parameter (or one required parameter)
    can be given alone, `{name: {params}}` when there are several parameters.

    `get_schema_target(cls)` gives the callable whose signature is read (by default the class itself).
    """
    forms: list[Any] = []
    for name, cls in registry.items():
        target = cls if get_schema_target is None else get_schema_target(cls)
        every, required = _parameter_types(target)
        if not required:
            forms.append(Literal[name])
        alone = every if len(every) == 1 else required if len(required) == 1 else None
        if alone is not None:
            [hint] = alone.values()
            if typing.get_origin(hint) is NotRequired:
                [hint] = typing.get_args(hint)
            forms.append(_closed_typed_dict(f'short_spec_{name}', {name: hint}))
        if len(every) > 1:
            parameters = _closed_typed_dict(f'spec_params_{name}', every)
            forms.append(_closed_typed_dict(f'spec_{name}', {name: parameters}))
    return forms
