"""`AbstractToolset`: where an agent's tools come from, and `ToolsetTool`, one tool as a toolset lists it.

A toolset lists its tools for a step (`get_tools`) and calls them (`call_tool`); the agent validates the
arguments with the tool's `args_validator` in between. Toolsets that hold a connection open it in
`__aenter__` and close it in `__aexit__`. The methods at the end wrap a toolset in another one that changes
its tools (prefixes, filters, renames, prepares, asks for approval, defers loading, adds return schemas or
metadata).
"""

from __future__ import annotations as _annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from importlib import import_module
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, Self, TypeAlias

from .._messages.model_messages import InstructionPart
from .._tools.definition import ToolDefinition
from ..models._model import AgentDepsT, RunContext

if TYPE_CHECKING:
    from ..tools import ToolsPrepareFunc

__all__ = ('AbstractToolset', 'ToolsetTool', 'SchemaValidatorProt', 'ToolsetInstructions')

ToolsetInstructions: TypeAlias = str | InstructionPart | Sequence[str | InstructionPart] | None
"""What `AbstractToolset.get_instructions` returns: a text, a block, several of either, or nothing. A plain text
counts as dynamic (it may change from request to request); an `InstructionPart` says which it is."""


_WRAPPERS: dict[str, Callable[..., Any]] = {}
"""The wrapper toolset classes by method name, registered by their modules (which import this one)."""


def register_wrapper(method: str, cls: Callable[..., Any]) -> None:
    """Make `AbstractToolset.<method>(...)` wrap the toolset in `cls(toolset, ...)`."""
    _WRAPPERS[method] = cls


# The module registering each wrapper: the wrappers are imported on first use, not with the agent.
_WRAPPER_MODULES = {
    'filtered': 'filtered',
    'prefixed': 'prefixed',
    'prepared': 'prepared',
    'renamed': 'renamed',
    'approval_required': 'approval_required',
    'defer_loading': 'deferred_loading',
    'include_return_schemas': 'include_return_schemas',
    'with_metadata': 'set_metadata',
}


def _wrapper(method: str) -> Callable[..., Any]:
    """The wrapper registered for `method`, its module imported first if it has not been."""
    if method not in _WRAPPERS:
        import_module(f'{__package__}.{_WRAPPER_MODULES[method]}')
    return _WRAPPERS[method]


class SchemaValidatorProt(Protocol):
    """What a tool's argument validator offers: a pydantic-core `SchemaValidator` or anything alike."""

    def validate_json(
        self, input: str | bytes | bytearray, *, allow_partial: bool | Literal['off', 'on', 'trailing-strings'] = False,
        **kwargs: Any,
    ) -> Any: ...  # fmt: skip

    def validate_python(
        self, input: Any, *, allow_partial: bool | Literal['off', 'on', 'trailing-strings'] = False, **kwargs: Any
    ) -> Any: ...


@dataclass(kw_only=True)
class ToolsetTool(Generic[AgentDepsT]):
    """One tool as a toolset lists it: its definition, retry budget and argument validator."""

    toolset: AbstractToolset[AgentDepsT]
    """The toolset the tool comes from (named in errors)."""
    tool_def: ToolDefinition
    """What the model is told about the tool."""
    max_retries: int
    """How many times in a row the tool may be retried."""
    args_validator: SchemaValidatorProt
    """Validates the model's arguments (JSON text or a dict) into the keyword arguments of the call."""
    args_validator_func: Callable[..., Any] | None = None
    """Called with the `RunContext` and the validated arguments before the call; raises `ModelRetry` to retry."""


class AbstractToolset(ABC, Generic[AgentDepsT]):
    """A source of tools for an agent: lists them per step and calls them."""

    @property
    @abstractmethod
    def id(self) -> str | None:
        """An id unique among the toolsets of one agent (needed by durable execution), or `None`."""
        raise NotImplementedError()

    @property
    def label(self) -> str:
        """How errors name the toolset: its class and id."""
        label = type(self).__name__
        if self.id:
            label += f' {self.id!r}'
        return label

    @property
    def tool_name_conflict_hint(self) -> str:
        """What a name clash error suggests."""
        return 'Rename the tool or wrap the toolset in a `PrefixedToolset` to avoid name conflicts.'

    async def for_run(self, ctx: RunContext[AgentDepsT]) -> AbstractToolset[AgentDepsT]:
        """The toolset a run uses, asked once when the run starts (before it is entered); `self` by default."""
        return self

    async def for_run_step(self, ctx: RunContext[AgentDepsT]) -> AbstractToolset[AgentDepsT]:
        """The toolset a step uses, asked at each step; `self` by default."""
        return self

    async def __aenter__(self) -> Self:
        """Open what the toolset needs (a connection, a process); nothing by default."""
        return self

    async def __aexit__(self, *args: Any) -> bool | None:
        """Close what `__aenter__` opened; nothing by default."""
        return None

    async def get_instructions(self, ctx: RunContext[AgentDepsT]) -> ToolsetInstructions:
        """Instructions on the use of the toolset's tools, added to each request; none by default.

        Returns:
            A text, an `InstructionPart` (which also says whether it is static or dynamic, for prompt caching),
            a sequence of either, or `None`.
        """
        return None

    @abstractmethod
    async def get_tools(self, ctx: RunContext[AgentDepsT]) -> dict[str, ToolsetTool[AgentDepsT]]:
        """The tools available in this step, by the name the model sees."""
        raise NotImplementedError()

    @abstractmethod
    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[AgentDepsT], tool: ToolsetTool[AgentDepsT]
    ) -> Any:
        """Call the tool `name` (as `get_tools` gave it, `tool`) with validated arguments; return its result."""
        raise NotImplementedError()

    def apply(self, visitor: Callable[[AbstractToolset[AgentDepsT]], None]) -> None:
        """Call `visitor` on each leaf toolset (one that lists and calls its own tools)."""
        visitor(self)

    def visit_and_replace(
        self, visitor: Callable[[AbstractToolset[AgentDepsT]], AbstractToolset[AgentDepsT]]
    ) -> AbstractToolset[AgentDepsT]:
        """This toolset with each leaf toolset replaced by what `visitor` returns for it."""
        return visitor(self)

    def filtered(
        self, filter_func: Callable[[RunContext[AgentDepsT], ToolDefinition], bool | Awaitable[bool]]
    ) -> AbstractToolset[AgentDepsT]:
        """This toolset keeping only the tools for which `filter_func(ctx, tool_def)` is true."""
        wrapped: AbstractToolset[AgentDepsT] = _wrapper('filtered')(self, filter_func)
        return wrapped

    def prefixed(self, prefix: str) -> AbstractToolset[AgentDepsT]:
        """This toolset with its tool names starting with `{prefix}_`."""
        wrapped: AbstractToolset[AgentDepsT] = _wrapper('prefixed')(self, prefix)
        return wrapped

    def prepared(self, prepare_func: ToolsPrepareFunc[AgentDepsT]) -> AbstractToolset[AgentDepsT]:
        """This toolset with its definitions of each step passed through `prepare_func(ctx, tool_defs)`."""
        wrapped: AbstractToolset[AgentDepsT] = _wrapper('prepared')(self, prepare_func)
        return wrapped

    def renamed(self, name_map: dict[str, str]) -> AbstractToolset[AgentDepsT]:
        """This toolset with tools renamed: `name_map` maps each new name to the tool's own name."""
        wrapped: AbstractToolset[AgentDepsT] = _wrapper('renamed')(self, name_map)
        return wrapped

    def approval_required(
        self,
        approval_required_func: Callable[[RunContext[AgentDepsT], ToolDefinition, dict[str, Any]], bool] = (
            lambda ctx, tool_def, tool_args: True
        ),
    ) -> AbstractToolset[AgentDepsT]:
        """This toolset with calls waiting for approval when `approval_required_func(ctx, tool_def, args)` is true."""
        wrapped: AbstractToolset[AgentDepsT] = _wrapper('approval_required')(self, approval_required_func)
        return wrapped

    def defer_loading(self, tool_names: Sequence[str] | None = None) -> AbstractToolset[AgentDepsT]:
        """This toolset with its tools (all, or those in `tool_names`) hidden until a tool search finds them."""
        wrapped: AbstractToolset[AgentDepsT] = _wrapper('defer_loading')(self, tool_names)
        return wrapped

    def include_return_schemas(self) -> AbstractToolset[AgentDepsT]:
        """This toolset with the model told what each tool returns (`include_return_schema=True` where unset)."""
        wrapped: AbstractToolset[AgentDepsT] = _wrapper('include_return_schemas')(self)
        return wrapped

    def with_metadata(self, **metadata: Any) -> AbstractToolset[AgentDepsT]:
        """This toolset with `metadata` merged into each tool's `ToolDefinition.metadata`."""
        wrapped: AbstractToolset[AgentDepsT] = _wrapper('with_metadata')(self, **metadata)
        return wrapped
