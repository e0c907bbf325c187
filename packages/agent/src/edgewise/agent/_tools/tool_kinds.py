"""Tool kinds: what a tool is, whatever it is called (`ToolKind`), and the id parts and definitions store for it
(`ToolPartKind`). Kinds are kept in one process-wide registry, so an id read from a stored history can be checked
(`parse_tool_kind`)."""

from __future__ import annotations as _annotations

import dataclasses
import functools
import inspect
import warnings
from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass
from typing import Any, ClassVar, Generic, Literal, TypeAlias, final, get_args, get_origin

import pydantic
from typing_extensions import TypeVar

from .._messages.tool_parts import (
    CAPABILITY_LOAD_TOOL_KIND,
    KIND_CALL_PARTS,
    KIND_RETURN_PARTS,
    TOOL_SEARCH_TOOL_KIND,
    TYPED_PART_REGISTRAR,
    ArgsT_co,
    ContentT_co,
    LoadCapabilityArgs,
    LoadCapabilityReturn,
    ToolCallPart,
    ToolSearchArgs,
    ToolSearchReturnContent,
)
from .._warnings import PydanticAIDeprecationWarning
from ..exceptions import UserError

__all__ = ('ToolKind', 'ToolKindLike', 'ToolPartKind', 'parse_tool_kind', 'tool_kind_id')

ToolPartKind: TypeAlias = str
"""The id of a `ToolKind` as parts and tool definitions store it (`tool_kind`): `'{namespace}.{name}'`, or one of
the agent's own kinds, `'tool-search'` and `'capability-load'`, which have no namespace."""

_REGISTRY: dict[str, ToolKind[Any, Any]] = {}


@final
class ToolKind(Generic[ArgsT_co, ContentT_co]):
    """What a tool is, independent of the name it is given (a prefix or a rename leaves the kind as it is).

    Defining a kind registers its id for the process; defining the same id again is allowed only with the same
    shapes (a module imported twice, say), otherwise it is an error. Typed parts are registered for a kind with the
    `kind` class argument (`class LookupCallPart(ToolCallPart[LookupArgs], kind=lookup): ...`): the tool's calls and
    returns then come as those (with `typed_args` and `typed_content`), whatever the tool is named.

    Args:
        namespace: Who defines the kind (a package or capability); dotted names such as `'acme.tools'` are allowed.
        name: The kind's name inside its namespace.
        args: The shape of the tool's arguments (a `TypedDict`, say), or `None`.
        content: The shape of the tool's result, or `None`.

    Raises:
        UserError: The namespace or the name is empty, or the id is already defined with other shapes.
    """

    def __init__(
        self,
        namespace: str,
        name: str,
        *,
        args: type[ArgsT_co] | None = None,
        content: type[ContentT_co] | None = None,
    ) -> None:
        if not namespace or not all(namespace.split('.')):
            raise UserError(
                f'Tool kind {name!r} needs a namespace without empty segments (got {namespace!r}): name who '
                f"defines it, as in `ToolKind('my_package', {name!r})`."
            )
        if not name:
            raise UserError(f'A tool kind of namespace {namespace!r} needs a non-empty name.')
        self._register(namespace, name, args, content)

    def _register(self, namespace: str | None, name: str, args: type[Any] | None, content: type[Any] | None) -> None:
        self._namespace = namespace
        self._name = name
        self._id = name if namespace is None else f'{namespace}.{name}'
        self._args = args
        self._content = content
        known = _REGISTRY.get(self._id)
        if known is None:
            _REGISTRY[self._id] = self
        elif not (_same_shape(known._args, args) and _same_shape(known._content, content)):
            raise UserError(
                f'Tool kind {self._id!r} is already defined as {known!r}; a kind id means one thing in a process: '
                'give this one another name or namespace.'
            )

    @classmethod
    def _builtin(cls, name: str, *, args: type[Any], content: type[Any]) -> ToolKind[Any, Any]:
        """One of the agent's own kinds, whose ids carry no namespace."""
        kind: ToolKind[Any, Any] = object.__new__(cls)
        kind._register(None, name, args, content)
        return kind

    @property
    def namespace(self) -> str | None:
        """Who defines the kind; `None` only for the agent's own kinds."""
        return self._namespace

    @property
    def name(self) -> str:
        """The kind's name inside its namespace."""
        return self._name

    @property
    def id(self) -> ToolPartKind:
        """What parts and tool definitions store as `tool_kind`."""
        return self._id

    @property
    def args(self) -> type[ArgsT_co] | None:
        """The shape of the tool's arguments, if the kind gives one."""
        return self._args

    @property
    def content(self) -> type[ContentT_co] | None:
        """The shape of the tool's result, if the kind gives one."""
        return self._content

    def __repr__(self) -> str:
        head = repr(self._name) if self._namespace is None else f'{self._namespace!r}, {self._name!r}'
        shapes = ''.join(
            f', {label}={getattr(shape, "__qualname__", repr(shape))}'
            for label, shape in (('args', self._args), ('content', self._content))
            if shape is not None
        )
        return f'ToolKind({head}{shapes})'

    @functools.cached_property
    def _args_adapter(self) -> pydantic.TypeAdapter[Any]:
        return pydantic.TypeAdapter(dict[str, Any] if self._args is None else self._args)

    @functools.cached_property
    def _content_adapter(self) -> pydantic.TypeAdapter[Any] | None:
        return None if self._content is None else pydantic.TypeAdapter(self._content)

    def _validate_args(self, args: str | Mapping[str, Any] | None) -> Any:
        """`args` (JSON text, a dict, or none) validated against the kind's shape (a dict without one), or `None`
        when they do not fit or are not whole JSON yet."""
        try:
            if isinstance(args, str) and args:
                return self._args_adapter.validate_json(args)
            return self._args_adapter.validate_python(args or {})
        except pydantic.ValidationError:
            return None

    def _validate_content(self, content: Any) -> Any:
        """`content` validated against the kind's shape (as it is without one; a JSON string that does not fit as
        it is is parsed), or `None` when it does not fit."""
        adapter = self._content_adapter
        if adapter is None:
            return content
        try:
            return adapter.validate_python(content)
        except pydantic.ValidationError:
            pass
        if isinstance(content, str):
            try:
                return adapter.validate_json(content)
            except pydantic.ValidationError:
                pass
        return None


def _same_shape(known: type[Any] | None, given: type[Any] | None) -> bool:
    # A module run again (a reload, a test importing it twice) defines its classes again: same place, same shape.
    if known is given or known == given:
        return True
    return (
        isinstance(known, type)
        and isinstance(given, type)
        and (known.__module__, known.__qualname__) == (given.__module__, given.__qualname__)
    )


ToolKindLike: TypeAlias = 'ToolKind[Any, Any] | ToolPartKind'
"""A tool kind as a caller may give it: the `ToolKind` itself, or its id."""


def tool_kind_id(kind: ToolKindLike | None) -> ToolPartKind | None:
    """The id of `kind`, given as a `ToolKind` or already as its id."""
    return kind.id if isinstance(kind, ToolKind) else kind


def parse_tool_kind(value: str) -> ToolPartKind | None:
    """`value` when it is the id of a kind defined in this process, else `None` (for ids from untrusted input)."""
    return value if value in _REGISTRY else None


CAPABILITY_LOAD_KIND = ToolKind._builtin(
    CAPABILITY_LOAD_TOOL_KIND, args=LoadCapabilityArgs, content=LoadCapabilityReturn
)
"""The kind of the `load_capability` tool."""

TOOL_SEARCH_KIND = ToolKind._builtin(TOOL_SEARCH_TOOL_KIND, args=ToolSearchArgs, content=ToolSearchReturnContent)
"""The kind of the `search_tools` tool."""


def _shape_name(shape: Any) -> str:
    return shape.__qualname__ if isinstance(shape, type) else repr(shape)


def _register_typed_part(cls: type[Any], base: type[Any], payload: Literal['args', 'content'], kind: Any) -> None:
    """Check `cls`, a subclass of `ToolCallPart` or `ToolReturnPart` defined with the class argument `kind=`, and
    register it as the typed part of that kind: it becomes a dataclass whose `tool_kind` defaults to the kind's id.

    A subclass without `kind` registers nothing (one setting `tool_kind` in its body is warned about).

    Raises:
        UserError: `kind` is not a `ToolKind`, the base is parameterized with another shape than the kind's, the
            subclass adds fields, or the kind already has a typed part of this base.
    """
    if kind is None:
        if isinstance(cls.__dict__.get('tool_kind'), str):
            warnings.warn(
                f'{cls.__qualname__} sets `tool_kind` in its class body, which no longer makes it a typed tool part. '
                'Declare its kind with the `kind` class argument instead, e.g. '
                f"`class {cls.__name__}({base.__name__}, kind=ToolKind('my_capability', 'my_tool'))`.",
                PydanticAIDeprecationWarning,
                stacklevel=4,
            )
        return
    if not isinstance(kind, ToolKind):
        raise UserError(
            f'The `kind` of typed tool part {cls.__qualname__} must be a `ToolKind`, got {type(kind).__name__}: '
            "define one with `ToolKind('my_package', 'my_tool', args=..., content=...)`."
        )
    _check_declared_shape(cls, base, kind, payload)
    _check_no_added_fields(cls, base, payload)
    registry: dict[str, type[Any]] = KIND_CALL_PARTS if base is ToolCallPart else KIND_RETURN_PARTS
    known = registry.get(kind.id)
    if known is not None and (known.__module__, known.__qualname__) != (cls.__module__, cls.__qualname__):
        raise UserError(
            f'Tool kind {kind.id!r} already has a typed {base.__name__} subclass: '
            f'{known.__module__}.{known.__qualname__}.'
        )
    registry[kind.id] = cls
    cls._kind = kind
    # A dataclass (no decorator needed) whose `tool_kind` defaults to the kind's id; the KW_ONLY marker keeps it
    # keyword-only, as it is on the base.
    cls.__annotations__ = {'_': KW_ONLY, 'tool_kind': 'str | None', **_own_annotations(cls)}
    cls.tool_kind = kind.id
    dataclass(repr=False)(cls)


def _check_declared_shape(cls: type[Any], base: type[Any], kind: ToolKind[Any, Any], payload: str) -> None:
    shape = kind.args if payload == 'args' else kind.content
    for orig_base in cls.__dict__.get('__orig_bases__', ()):
        origin = get_origin(orig_base)
        declared = get_args(orig_base)
        if not (isinstance(origin, type) and issubclass(origin, base)) or len(declared) != 1:
            continue
        (declared_shape,) = declared
        if isinstance(declared_shape, TypeVar) or (
            declared_shape is Any if shape is None else _same_shape(declared_shape, shape)
        ):
            continue
        raise UserError(
            f'Typed tool part {cls.__qualname__} parameterizes {base.__name__} with {_shape_name(declared_shape)}, '
            f'but its kind {kind.id!r} declares `{payload}={_shape_name(shape) if shape is not None else None}`.'
        )


def _check_no_added_fields(cls: type[Any], base: type[Any], payload: str) -> None:
    base_fields = {f.name for f in dataclasses.fields(base)}
    inherited = [
        f.name
        for k in cls.__mro__[1:]
        if k is not base and issubclass(k, base) and dataclasses.is_dataclass(k)
        for f in dataclasses.fields(k)
    ]
    own = [name for name, annotation in _own_annotations(cls).items() if name != '_' and not _is_classvar(annotation)]
    added = list(dict.fromkeys(name for name in [*inherited, *own] if name not in base_fields))
    if added:
        raise UserError(
            f'Typed tool part {cls.__qualname__} adds the field(s) {", ".join(added)} to {base.__name__}. '
            f'Its kind declares the shape of its `{payload}`, and it may only add properties, so that it '
            'loses nothing when it falls back to the base part because its kind is not defined.'
        )


def _own_annotations(cls: type[Any]) -> dict[str, Any]:
    return dict(inspect.get_annotations(cls))


def _is_classvar(annotation: Any) -> bool:
    if isinstance(annotation, str):
        return annotation.startswith(('ClassVar', 'typing.ClassVar'))
    return annotation is ClassVar or get_origin(annotation) is ClassVar


TYPED_PART_REGISTRAR.append(_register_typed_part)
