"""Tools: functions the model may call, their definitions, and the `RunContext` they (and validators) receive.

`ToolDefinition` and `RunContext` are defined lower down (models use them too) and re-exported here.
"""

from __future__ import annotations as _annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any, Concatenate, Generic, Self, TypeAlias

from typing_extensions import ParamSpec

from ._function_schema import (
    DocstringFormat,
    FunctionSchema,
    function_schema,
    passthrough_schema,
    takes_run_context,
)
from ._tool_definition import ToolDefinition, ToolKind
from .models._model import AgentDepsT, RunContext

__all__ = (
    'AgentDepsT',
    'RunContext',
    'Tool',
    'ToolDefinition',
    'ToolKind',
    'ToolFuncContext',
    'ToolFuncPlain',
    'ToolFuncEither',
    'ToolPrepareFunc',
    'ToolsPrepareFunc',
    'DocstringFormat',
)

ToolParams = ParamSpec('ToolParams', default=...)
"""Parameters of a tool function."""


ToolFuncContext: TypeAlias = Callable[Concatenate[RunContext[AgentDepsT], ToolParams], Any]
"""A tool function taking the `RunContext` first."""
ToolFuncPlain: TypeAlias = Callable[ToolParams, Any]
"""A tool function without the `RunContext`."""
ToolFuncEither: TypeAlias = ToolFuncContext[AgentDepsT, ToolParams] | ToolFuncPlain[ToolParams]
"""A tool function, with or without the `RunContext`."""
ToolPrepareFunc: TypeAlias = Callable[
    [RunContext[AgentDepsT], ToolDefinition], Awaitable[ToolDefinition | None] | ToolDefinition | None
]
"""Adjusts a tool's definition for one step, or returns `None` to hide the tool for that step."""
ToolsPrepareFunc: TypeAlias = Callable[
    [RunContext[AgentDepsT], list[ToolDefinition]], Awaitable[list[ToolDefinition] | None] | list[ToolDefinition] | None
]
"""Adjusts the definitions of all the tools of a step at once."""


class Tool(Generic[AgentDepsT]):
    """A function the model may call, with its name, description, argument schema and retry budget."""

    function: Callable[..., Any]
    """The function called."""
    takes_ctx: bool
    """Whether the function takes the `RunContext` first."""
    max_retries: int | None
    """How many times in a row the tool may be retried; the agent's `retries` when `None`."""
    name: str
    """The tool's name."""
    description: str | None
    """The tool's description for the model."""
    prepare: ToolPrepareFunc[AgentDepsT] | None
    """Adjusts or hides the tool for each step."""
    strict: bool | None
    """Whether the model should follow the schema strictly."""
    sequential: bool
    """Whether the tool must run alone, not concurrently with the other calls of a response."""
    metadata: dict[str, Any] | None
    """Data for the application; not sent to the model."""
    function_schema: FunctionSchema
    """The argument schema and validator."""

    def __init__(
        self,
        function: ToolFuncEither[AgentDepsT, ...],
        *,
        takes_ctx: bool | None = None,
        max_retries: int | None = None,
        name: str | None = None,
        description: str | None = None,
        prepare: ToolPrepareFunc[AgentDepsT] | None = None,
        docstring_format: DocstringFormat = 'auto',
        require_parameter_descriptions: bool = False,
        strict: bool | None = None,
        sequential: bool = False,
        metadata: dict[str, Any] | None = None,
        function_schema: FunctionSchema | None = None,
    ) -> None:
        """Make a tool of `function`.

        Args:
            function: The function; sync functions run in a worker thread.
            takes_ctx: Whether the first parameter is the `RunContext`; inferred from its annotation if `None`.
            max_retries: How many times in a row the tool may be retried; the agent's `retries` if `None`.
            name: The tool's name; the function's name if `None`.
            description: The description for the model; the function's docstring if `None`.
            prepare: Called before each model request to adjust the tool's definition or hide the tool.
            docstring_format: How the docstring is written (`'auto'` detects google, numpy and sphinx).
            require_parameter_descriptions: Fail if a parameter has no description in the docstring.
            strict: Whether the model should follow the schema strictly.
            sequential: Run calls of this tool alone, never concurrently with other calls.
            metadata: Data for the application.
            function_schema: A ready-made schema (used by `from_schema`).
        """
        if takes_ctx is None:
            takes_ctx = takes_run_context(function)
        self.function = function
        self.takes_ctx = takes_ctx
        self.max_retries = max_retries
        self.name = name or function.__name__
        self.function_schema = function_schema or _function_schema_of(
            function, takes_ctx, docstring_format, require_parameter_descriptions, self.name
        )
        self.description = description if description is not None else self.function_schema.description
        self.prepare = prepare
        self.strict = strict
        self.sequential = sequential
        self.metadata = metadata

    @classmethod
    def from_schema(
        cls,
        function: Callable[..., Any],
        name: str,
        description: str | None,
        json_schema: dict[str, Any],
        takes_ctx: bool = False,
        sequential: bool = False,
    ) -> Self:
        """A tool whose argument schema is given as JSON schema; arguments reach `function` unvalidated.

        Args:
            function: Called with the arguments as keyword arguments (after the `RunContext` if `takes_ctx`).
            name: The tool's name.
            description: The tool's description for the model.
            json_schema: The JSON schema of the arguments.
            takes_ctx: Whether the function takes the `RunContext` first.
            sequential: Run calls of this tool alone.
        """
        schema = passthrough_schema(function, json_schema=json_schema, description=description, takes_ctx=takes_ctx)
        return cls(function, takes_ctx=takes_ctx, name=name, description=description, sequential=sequential,
                   function_schema=schema)  # fmt: skip

    @property
    def tool_def(self) -> ToolDefinition:
        """The tool's definition as sent to the model (before `prepare`)."""
        return ToolDefinition(
            name=self.name,
            description=self.description,
            parameters_json_schema=self.function_schema.json_schema,
            strict=self.strict,
            sequential=self.sequential,
            metadata=self.metadata,
        )

    async def prepare_tool_def(self, ctx: RunContext[AgentDepsT]) -> ToolDefinition | None:
        """The tool's definition for this step: `tool_def` passed through `prepare`, or `None` to hide it."""
        tool_def = self.tool_def
        if self.prepare is None:
            return tool_def
        result = self.prepare(ctx, tool_def)
        if inspect.isawaitable(result):
            result = await result
        return result

    def __repr__(self) -> str:
        return f'Tool(name={self.name!r}, takes_ctx={self.takes_ctx}, max_retries={self.max_retries})'


def _function_schema_of(
    function: Callable[..., Any], takes_ctx: bool, docstring_format: DocstringFormat, require: bool, name: str
) -> FunctionSchema:
    return function_schema(
        function,
        takes_ctx=takes_ctx,
        docstring_format=docstring_format,
        require_parameter_descriptions=require,
        name=name,
    )
