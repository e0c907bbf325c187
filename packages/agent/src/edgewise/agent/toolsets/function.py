"""`FunctionToolset`: Python functions as tools (the agent's own tools are one too)."""

from __future__ import annotations as _annotations

import dataclasses
import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, overload

import anyio
from typing_extensions import Unpack

from .._functions.keyword_options import KeywordOptions
from .._messages.model_messages import InstructionPart
from .._threads import abandoning_threads_on_cancel
from ..exceptions import ModelRetry, UserError
from ..models._model import AgentDepsT, RunContext
from ..tools import (
    TOOL_DEFAULTS,
    TOOL_OPTIONS,
    Tool,
    ToolDefaults,
    ToolDefinition,
    ToolFuncEither,
    ToolOptions,
)
from .abstract import AbstractToolset, ToolsetInstructions, ToolsetTool

__all__ = ('FunctionToolset', 'FunctionToolsetTool')

_F = TypeVar('_F', bound=Callable[..., Any])


@dataclass(kw_only=True)
class FunctionToolsetTool(ToolsetTool[AgentDepsT]):
    """A function tool as its toolset lists it: with the function to call."""

    call_func: Callable[[dict[str, Any], RunContext[AgentDepsT]], Awaitable[Any]]
    """Calls the function with validated arguments."""
    is_async: bool
    """Whether the function is a coroutine function (sync ones run in a worker thread)."""
    timeout: float | None = None
    """Seconds a call may run before the model is asked to retry; no limit if `None`."""
    original_name: str | None = None
    """The name the toolset holds the tool under (a `prepare` function may have given `tool_def` another one);
    `None` when not known, then the same as `tool_def.name`."""


def _static(tool: Tool[Any]) -> bool:
    """Whether the tool's definition is the same at every step (no `prepare`, no `prepare_tool_def` override)."""
    return tool.prepare is None and type(tool).prepare_tool_def is Tool.prepare_tool_def


class FunctionToolset(AbstractToolset[AgentDepsT]):
    """Python functions as tools: `FunctionToolset([f, g])`, or register them with `@toolset.tool`."""

    tools: dict[str, Tool[Any]]
    """The tools, by their own name."""
    max_retries: int | None
    """The retry budget of tools that set none; the agent's when `None`."""
    timeout: float | None
    """Seconds a call of a tool that sets no timeout may run; no limit when `None`."""

    def __init__(
        self,
        tools: Sequence[Tool[AgentDepsT] | ToolFuncEither[AgentDepsT, ...]] = (),
        *,
        max_retries: int | None = None,
        id: str | None = None,
        instructions: str | Callable[..., Any] | Sequence[str | Callable[..., Any]] | None = None,
        **defaults: Unpack[ToolDefaults],
    ) -> None:
        """Make a toolset of `tools` (`Tool`s or functions, taking the `RunContext` first or not).

        Args:
            tools: The tools, `Tool`s or functions.
            max_retries: The retry budget of the tools that set none (the agent's when `None`).
            id: Names the toolset in errors and durable execution.
            instructions: Texts, or functions of the `RunContext` or of nothing (sync or async), added to each
                request of runs using the toolset.
            **defaults: The defaults of the tools added by function (`tool`, `tool_plain`, `add_function`): the
                options of `ToolDefaults`. `metadata` is merged under every tool's (`Tool`s added as they are
                too); `timeout` bounds the calls of the tools that set none.

        Raises:
            TypeError: an option is not one of `ToolDefaults`.
        """
        settings = _DEFAULTS.resolve('FunctionToolset', defaults)
        self.max_retries = max_retries
        self.timeout = settings['timeout']
        self._id = id
        self.docstring_format = settings['docstring_format']
        self.require_parameter_descriptions = settings['require_parameter_descriptions']
        self.schema_generator = settings['schema_generator']
        self.strict = settings['strict']
        self.sequential = settings['sequential']
        self.requires_approval = settings['requires_approval']
        self.metadata = settings['metadata']
        self._defer_loading = settings['defer_loading']
        self.include_return_schema = settings['include_return_schema']
        if isinstance(instructions, str) or callable(instructions):
            instructions = [instructions]
        self._instructions: list[str | Callable[..., Any]] = list(instructions or ())
        self.tools = {}
        self._cache: tuple[int, dict[str, ToolsetTool[AgentDepsT]]] | None = None
        for tool in tools:
            if isinstance(tool, Tool):
                self.add_tool(tool)
            else:
                self.add_function(tool)

    @property
    def id(self) -> str | None:
        """The id given to the constructor."""
        return self._id

    def instructions(self, func: Callable[..., Any], /) -> Callable[..., Any]:
        """Register an instructions function (`(ctx) -> str` or `() -> str`, sync or async): `@toolset.instructions`."""
        self._instructions.append(func)
        return func

    async def get_instructions(self, ctx: RunContext[AgentDepsT]) -> ToolsetInstructions:
        """The toolset's instructions, functions evaluated for this request; blank ones left out. A text given as
        such is a static block, a function's result a dynamic one."""
        parts: list[InstructionPart] = []
        for item in self._instructions:
            text: str | None
            if isinstance(item, str):
                text = item
            else:
                text = item(*((ctx,) if inspect.signature(item).parameters else ()))
                if inspect.isawaitable(text):
                    text = await text
            if text and text.strip():
                parts.append(InstructionPart(content=text, dynamic=not isinstance(item, str)))
        return parts or None

    @overload
    def tool(self, func: _F, /) -> _F: ...

    @overload
    def tool(self, /, **options: Unpack[ToolOptions[AgentDepsT]]) -> Callable[[_F], _F]: ...

    def tool(self, func: Any = None, /, **options: Unpack[ToolOptions[AgentDepsT]]) -> Any:
        """Register a function taking the `RunContext` first: `@toolset.tool` or `@toolset.tool(...)` (the
        options of `ToolOptions`; those left out take the toolset's defaults)."""

        def register(function: Any) -> Any:
            self.add_function(function, True, **options)
            return function

        return register if func is None else register(func)

    @overload
    def tool_plain(self, func: _F, /) -> _F: ...

    @overload
    def tool_plain(self, /, **options: Unpack[ToolOptions[AgentDepsT]]) -> Callable[[_F], _F]: ...

    def tool_plain(self, func: Any = None, /, **options: Unpack[ToolOptions[AgentDepsT]]) -> Any:
        """Register a function that does not take the `RunContext`: `@toolset.tool_plain` or `(...)`."""

        def register(function: Any) -> Any:
            self.add_function(function, False, **options)
            return function

        return register if func is None else register(func)

    def add_function(
        self,
        func: ToolFuncEither[AgentDepsT, ...],
        takes_ctx: bool | None = None,
        **options: Unpack[ToolOptions[AgentDepsT]],
    ) -> Tool[AgentDepsT]:
        """Add `func` as a tool; returns the `Tool`.

        Args:
            func: The function.
            takes_ctx: Whether its first parameter is the `RunContext`; inferred from its annotation if `None`.
            **options: The options of `ToolOptions`; those left out (or `None`) take the toolset's defaults.

        Raises:
            TypeError: an option is not one of `ToolOptions`.
        """
        if unknown := TOOL_OPTIONS.unknown(options):
            raise TypeError(f'add_function() got an unexpected keyword argument {unknown[0]!r}')
        settings: dict[str, Any] = dict(options)
        for name, default in self._tool_defaults().items():
            if settings.get(name) is None:
                settings[name] = default
        tool: Tool[AgentDepsT] = Tool(func, takes_ctx=takes_ctx, max_retries=settings.pop('retries', None), **settings)
        self.add_tool(tool)
        return tool

    def _tool_defaults(self) -> dict[str, Any]:
        """The toolset's defaults of its tools' options (`metadata` and `timeout` apply otherwise, see `__init__`)."""
        return {
            'docstring_format': self.docstring_format,
            'require_parameter_descriptions': self.require_parameter_descriptions,
            'schema_generator': self.schema_generator,
            'strict': self.strict,
            'sequential': self.sequential,
            'requires_approval': self.requires_approval,
            'defer_loading': self._defer_loading,
            'include_return_schema': self.include_return_schema,
        }

    def add_tool(self, tool: Tool[AgentDepsT]) -> None:
        """Add a `Tool`; its name must be new to the toolset."""
        if tool.name in self.tools:
            raise UserError(f'Tool name conflicts with existing tool: {tool.name!r}')
        if tool.max_retries is None and self.max_retries is not None:
            tool.max_retries = self.max_retries
        if self.metadata is not None:
            tool.metadata = self.metadata | (tool.metadata or {})
        self.tools[tool.name] = tool
        self._cache = None

    async def get_tools(self, ctx: RunContext[AgentDepsT]) -> dict[str, ToolsetTool[AgentDepsT]]:
        """The tools of this step, after each tool's `prepare`.

        When no tool has a `prepare` function the listing is the same at every step: it is built once (per
        default retry budget) and reused.
        """
        cache = self._cache
        if cache is not None and cache[0] == ctx.max_retries:
            return cache[1]
        tools: dict[str, ToolsetTool[AgentDepsT]] = {}
        static = True
        for own_name, tool in self.tools.items():
            max_retries = tool.max_retries if tool.max_retries is not None else ctx.max_retries
            tool_def: ToolDefinition | None = tool.tool_def
            if not _static(tool):
                static = False
                tool_ctx = dataclasses.replace(
                    ctx, tool_name=own_name, retry=ctx.retries.get(own_name, 0), max_retries=max_retries
                )
                tool_def = await tool.prepare_tool_def(tool_ctx)
            if tool_def is None:
                continue
            name = tool_def.name
            if name in tools:  # a `prepare` function renamed a tool onto another one
                if name != own_name:
                    raise UserError(f'Renaming tool {own_name!r} to {name!r} conflicts with existing tool.')
                raise UserError(f'Tool name conflicts with previously renamed tool: {name!r}.')
            tools[name] = self._tool_for(tool, tool_def, max_retries, own_name)
        if static:
            self._cache = (ctx.max_retries, tools)
        return tools

    def tool_for_tool_def(
        self, tool_def: ToolDefinition, *, ctx: RunContext[AgentDepsT], original_name: str | None = None
    ) -> FunctionToolsetTool[AgentDepsT]:
        """The tool to call for a definition `get_tools` gave already (e.g. in another process, as durable
        execution does), without running the tool's `prepare` function again.

        Args:
            tool_def: The definition as `get_tools` gave it.
            ctx: The run context whose `max_retries` is the budget of a tool without its own.
            original_name: The name the toolset holds the tool under (the listed tool's `original_name`);
                `tool_def.name` by default, which is that name unless a `prepare` function renamed the tool.

        Raises:
            KeyError: the toolset holds no tool of that name.
        """
        own_name = original_name if original_name is not None else tool_def.name
        tool = self.tools[own_name]
        max_retries = tool.max_retries if tool.max_retries is not None else ctx.max_retries
        return self._tool_for(tool, tool_def, max_retries, own_name)

    def _tool_for(
        self, tool: Tool[AgentDepsT], tool_def: ToolDefinition, max_retries: int, own_name: str
    ) -> FunctionToolsetTool[AgentDepsT]:
        schema = tool.function_schema
        return FunctionToolsetTool(
            toolset=self, tool_def=tool_def, max_retries=max_retries, args_validator=schema.validator,
            args_validator_func=tool.args_validator, call_func=schema.call, is_async=schema.is_async,
            timeout=tool_def.timeout, original_name=own_name,
        )  # fmt: skip

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[AgentDepsT], tool: ToolsetTool[AgentDepsT]
    ) -> Any:
        """Call the tool's function; one that runs past its timeout is a retry (`Timed out after ... seconds.`)."""
        assert isinstance(tool, FunctionToolsetTool)
        limit = tool.timeout if tool.timeout is not None else self.timeout
        if limit is None:
            return await tool.call_func(tool_args, ctx)
        try:
            with anyio.fail_after(limit), abandoning_threads_on_cancel():  # a sync tool's thread is not waited for
                return await tool.call_func(tool_args, ctx)
        except TimeoutError:
            raise ModelRetry(f'Timed out after {limit} seconds.') from None

    def __repr__(self) -> str:
        return f'FunctionToolset(tools={list(self.tools)!r}, id={self._id!r})'


_DEFAULTS = KeywordOptions(ToolDefaults, TOOL_DEFAULTS)
_DEFAULTS.signed(FunctionToolset.__init__)
TOOL_OPTIONS.signed(FunctionToolset.tool)
TOOL_OPTIONS.signed(FunctionToolset.tool_plain)
TOOL_OPTIONS.signed(FunctionToolset.add_function)
