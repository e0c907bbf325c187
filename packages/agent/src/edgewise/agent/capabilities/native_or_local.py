"""`NativeOrLocalTool`: a native tool (run by the model's provider) paired with a function tool run here, the model
being sent whichever of the two it can use.

The pairing is made on the tool definitions: every local tool gets `unless_native` set to the native tool's
`unique_id`, and each model, as it checks a request's native tools against those it supports, drops the native tool
it cannot run and keeps the local tools marked for it, or drops those local tools and sends the native tool.
"""

from __future__ import annotations as _annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from .._tools.definition import ToolDefinition
from ..common_tools._fallback_model import resolve_native_tool
from ..exceptions import UserError
from ..native_tools import AbstractNativeTool
from ..tools import AgentDepsT, AgentNativeTool, RunContext, Tool
from ..toolsets import AbstractToolset
from ..toolsets.function import FunctionToolset
from ..toolsets.prepared import PreparedToolset
from .abstract import AbstractCapability

__all__ = ('NativeOrLocalTool',)


@dataclass(init=False)
class NativeOrLocalTool(AbstractCapability[AgentDepsT]):
    """Gives the agent a native tool when the model can run it, and a local tool in its place when it cannot:
    `NativeOrLocalTool(native=CodeExecutionTool(), local=run_python)`.

    `WebSearch`, `WebFetch`, `ImageGeneration` and `XSearch` are subclasses that build their native tool from their
    own fields: they name its class in `_native_type` and its arguments in `_tool_settings`. A subclass of your own
    can do the same, or override `_default_native` (the tool built for `native=True`), and sets its other defaults by
    overriding `_default_local` (the local tool used when `local` is not given), `_resolve_local_strategy` (what
    `local=True` or a strategy name gives) and `_requires_native` (whether the capability's settings can only be
    honoured by the native tool).

    A request to a model that supports neither the native tool nor is given a local tool raises `UserError`.
    """

    native: AgentNativeTool[AgentDepsT] | bool = True
    """The native tool: `True` for the default one (subclasses), `False` for none (the local tool always), a
    native tool, or a function of the run context returning one (or `None`) per request."""

    local: str | Tool[AgentDepsT] | Callable[..., Any] | AbstractToolset[AgentDepsT] | bool | None = None
    """The local tool: `None` for the default one if there is one, `True` or a strategy name for one a subclass
    provides, `False` for none (the native tool always), a `Tool`, a toolset, or a function (made a `Tool`)."""

    id: str | None = None
    """A name for this capability, instead of one derived from its class."""

    description: str | None = None
    """What this capability is for, in a few words."""

    defer_loading: bool = False
    """Whether the capability is hidden until the model loads it (`AbstractCapability.defer_loading`)."""

    def __init__(
        self,
        *,
        native: AgentNativeTool[AgentDepsT] | bool = True,
        local: str | Tool[AgentDepsT] | Callable[..., Any] | AbstractToolset[AgentDepsT] | bool | None = None,
        id: str | None = None,
        defer_loading: bool = False,
        description: str | None = None,
    ) -> None:
        self._init_common(native=native, local=local, id=id, defer_loading=defer_loading, description=description)
        self.__post_init__()

    def _init_common(
        self,
        *,
        native: Any,
        local: Any,
        id: str | None,
        defer_loading: bool,
        description: str | None,
    ) -> None:
        """Set the fields every subclass has (its own `__init__` then sets its own fields and calls
        `__post_init__`)."""
        self.native = native
        self.local = local
        self.id = id
        self.description = description
        self.defer_loading = defer_loading

    def __post_init__(self) -> None:
        """Resolve `native=True` and `local` to tools, and refuse settings that contradict each other.

        Raises:
            UserError: both sides are disabled, `native=True` has no default, the local strategy is unknown,
                the capability's settings need the native tool that `native=False` disables, or `native=False`
                leaves no tool at all (no local tool given and no default one).
        """
        name = type(self).__name__
        if self.native is False and self.local is False:
            raise UserError(f'{name}: both `native` and `local` cannot be False')
        if self.native is True:
            default = self._default_native()
            if default is None:
                raise UserError(
                    f'{name}: native=True requires a subclass that overrides `_default_native()`, or pass an '
                    '`AbstractNativeTool` instance directly'
                )
            self.native = default
        local = self.local
        if local is None:
            self.local = self._default_local()
        elif local is True or isinstance(local, str):
            self.local = self._resolve_local_strategy(local)
        elif local is not False and not isinstance(local, Tool | AbstractToolset) and callable(local):
            self.local = Tool(local)
        if self.native is False and self._requires_native():
            raise UserError(f'{name}: constraint fields require the native tool, but native=False')
        if self.native is False and self.local is None:
            raise UserError(
                f'{name}(native=False) requires an explicit local tool: pass `local=` (a function, a `Tool`, a '
                'toolset, or a strategy name), or leave the native tool on.'
            )

    # -- what subclasses override ----------------------------------------------------------------------------

    _native_type: ClassVar[type[AbstractNativeTool] | None] = None
    """The class of the native tool `native=True` builds from `_tool_settings()`; `None`: no default native tool."""

    def _tool_settings(self) -> dict[str, Any]:
        """The native tool's arguments this capability's fields give, by argument name (`None`: not given)."""
        return {}

    def _given_tool_settings(self) -> dict[str, Any]:
        return {key: value for key, value in self._tool_settings().items() if value is not None}

    def _default_native(self) -> AbstractNativeTool | None:
        """The native tool `native=True` stands for: a `_native_type` built from the settings given; `None` without
        a `_native_type` (the tool must then be given)."""
        return None if self._native_type is None else self._native_type(**self._given_tool_settings())

    def _resolved_native(self) -> Any:
        """The native tool a fallback model is given: the `native` tool given (or a default one for `native=False`)
        with this capability's settings over its own; for a `native` function, a function of the run context that
        calls it at each call of the fallback tool and puts the settings over what it returns.

        Raises:
            UserError: `native` is a native tool of another kind.
        """
        tool_type = self._native_type
        assert tool_type is not None, 'only capabilities with a `_native_type` have a fallback model'
        settings = self._given_tool_settings()
        native = self.native
        if native is False:
            return tool_type(**settings)
        if isinstance(native, tool_type):
            return replace(native, **settings) if settings else native
        if isinstance(native, AbstractNativeTool) or not callable(native):
            raise UserError(
                f'{type(self).__name__}: `native` must be `True`, `False`, a `{tool_type.__name__}` or a function '
                f'returning one, not {native!r}.'
            )
        factory = native

        async def resolve(ctx: RunContext[Any]) -> AbstractNativeTool:
            found = await resolve_native_tool(tool_type, factory, ctx)
            return replace(found, **settings) if settings else found

        return resolve

    def _native_unique_id(self) -> str:
        """The `unique_id` of the native tool, set as `unless_native` on the local tool definitions (the kind of
        the `_native_type` when the native tool is a function).

        Raises:
            UserError: the native tool is a function, whose tool is only known per request, and there is no
                `_native_type`.
        """
        native = self.native
        if isinstance(native, AbstractNativeTool):
            return native.unique_id
        if self._native_type is not None:
            return self._native_type.kind
        raise UserError(
            f'{type(self).__name__}: cannot derive native unique_id — override `_native_unique_id()` in your subclass'
        )

    def _default_local(self) -> Tool[AgentDepsT] | AbstractToolset[AgentDepsT] | None:
        """The local tool used when `local` is not given; none here."""
        return None

    def _resolve_local_strategy(self, name: str | bool) -> Tool[AgentDepsT] | AbstractToolset[AgentDepsT]:
        """The local tool `local=True` or `local='<strategy>'` stands for.

        Raises:
            UserError: always here: this class has no strategies.
        """
        raise UserError(
            f'{type(self).__name__}: `local={name!r}` is not supported. Pass a `Tool`, `AbstractToolset`, or callable '
            'directly.'
        )

    def _requires_native(self) -> bool:
        """Whether the capability's settings can only be honoured by the native tool: then the local tool is left
        out, and a model without the native tool refuses the request."""
        return False

    # -- the capability --------------------------------------------------------------------------------------

    def get_native_tools(self) -> Sequence[AgentNativeTool[AgentDepsT]]:
        """The native tool, unless `native=False`."""
        native = self.native
        if isinstance(native, bool):
            return []
        return [native]

    def get_toolset(self) -> AbstractToolset[AgentDepsT] | None:
        """The local tool as a toolset whose definitions say which native tool they stand in for (none when there
        is no local tool, or when the settings need the native tool); a local `Tool` gets a toolset named by this
        capability's `id` (durable execution names toolsets by their ids)."""
        local = self.local
        if local is None or isinstance(local, bool | str) or self._requires_native():
            return None
        toolset: AbstractToolset[AgentDepsT] = (
            local if isinstance(local, AbstractToolset) else FunctionToolset([local], id=self.id)
        )
        if self.native is False:
            return toolset
        unique_id = self._native_unique_id()

        async def mark_unless_native(ctx: RunContext[AgentDepsT], defs: list[ToolDefinition]) -> list[ToolDefinition]:
            return [replace(d, unless_native=unique_id) for d in defs]

        return PreparedToolset(toolset, mark_unless_native)
