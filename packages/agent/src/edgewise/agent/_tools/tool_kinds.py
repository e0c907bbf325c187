"""Tool kinds: what a tool is, whatever it is called (`ToolKind`), and the id parts and definitions store for it
(`ToolPartKind`). Kinds are kept in one process-wide registry, so an id read from a stored history can be checked
(`parse_tool_kind`)."""

from __future__ import annotations as _annotations

from typing import Any, Generic, TypeAlias, final

from typing_extensions import TypeVar

from .._messages.tool_parts import (
    CAPABILITY_LOAD_TOOL_KIND,
    TOOL_SEARCH_TOOL_KIND,
    LoadCapabilityArgs,
    LoadCapabilityReturn,
    ToolSearchArgs,
    ToolSearchReturnContent,
)
from ..exceptions import UserError

__all__ = ('ToolKind', 'ToolKindLike', 'ToolPartKind', 'parse_tool_kind', 'tool_kind_id')

ToolPartKind: TypeAlias = str
"""The id of a `ToolKind` as parts and tool definitions store it (`tool_kind`): `'{namespace}.{name}'`, or one of
the agent's own kinds, `'tool-search'` and `'capability-load'`, which have no namespace."""

ArgsT_co = TypeVar('ArgsT_co', covariant=True, default=Any)
"""The shape of the arguments of a kind's tools."""

ContentT_co = TypeVar('ContentT_co', covariant=True, default=Any)
"""The shape of the result of a kind's tools."""

_REGISTRY: dict[str, ToolKind[Any, Any]] = {}


@final
class ToolKind(Generic[ArgsT_co, ContentT_co]):
    """What a tool is, independent of the name it is given (a prefix or a rename leaves the kind as it is).

    Defining a kind registers its id for the process; defining the same id again is allowed only with the same
    shapes (a module imported twice, say), otherwise it is an error.

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
