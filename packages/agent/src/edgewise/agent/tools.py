"""Tools: functions the model may call, their definitions, and the `RunContext` they (and validators) receive."""

from __future__ import annotations as _annotations

import dataclasses
import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Concatenate, Generic, Literal, Self, TypeAlias

from typing_extensions import ParamSpec, TypeVar

from ._function_schema import (
    DocstringFormat,
    FunctionSchema,
    function_schema,
    passthrough_schema,
    takes_run_context,
)
from .usage import RunUsage

if TYPE_CHECKING:
    from .messages import ModelMessage
    from .models import Model

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

AgentDepsT = TypeVar('AgentDepsT', default=None, contravariant=True)
"""Type of an agent's dependencies."""
ToolParams = ParamSpec('ToolParams', default=...)
"""Parameters of a tool function."""


@dataclass(repr=False, kw_only=True)
class RunContext(Generic[AgentDepsT]):
    """What tools, instructions, system prompt functions and output validators receive about the run."""

    deps: AgentDepsT
    """The run's dependencies."""
    model: Model
    """The model of the run."""
    usage: RunUsage
    """The usage of the run so far."""
    prompt: str | None = None
    """The user prompt the run started with."""
    messages: list[ModelMessage] = field(default_factory=list)
    """The messages of the run so far."""
    retries: dict[str, int] = field(default_factory=dict)
    """How many times each tool has been retried in a row."""
    tool_call_id: str | None = None
    """The id of the tool call being handled, if any."""
    tool_name: str | None = None
    """The name of the tool being called, if any."""
    retry: int = 0
    """How many times the current tool (or the output) has been retried in a row."""
    max_retries: int = 0
    """The retry budget of the current tool (or of the output)."""
    run_step: int = 0
    """The number of model requests made so far in the run."""
    run_id: str | None = None
    """The id of the run."""
    partial_output: bool = False
    """Whether an output validator is seeing a partial output (streaming)."""

    def replace_with(self, **changes: Any) -> RunContext[AgentDepsT]:
        """A copy with the given fields changed."""
        return dataclasses.replace(self, **changes)

    def __repr__(self) -> str:
        return (
            f'RunContext(deps={self.deps!r}, model={self.model!r}, usage={self.usage!r}, run_step={self.run_step}, '
            f'tool_name={self.tool_name!r}, retry={self.retry})'
        )


ToolKind: TypeAlias = Literal['function', 'output', 'external', 'unapproved']
"""What a tool definition is for: a function tool, an output tool, or a tool run outside the agent."""


@dataclass(repr=False, kw_only=True)
class ToolDefinition:
    """What a model is told about a tool: its name, description and argument schema."""

    name: str
    """The tool's name, unique within a run."""
    parameters_json_schema: dict[str, Any] = field(
        default_factory=lambda: {'type': 'object', 'properties': {}, 'additionalProperties': False}
    )
    """The JSON schema of the tool's arguments."""
    description: str | None = None
    """What the tool does, for the model."""
    outer_typed_dict_key: str | None = None
    """For output tools wrapping a non-object type: the key the value is wrapped under (`'response'`)."""
    strict: bool | None = None
    """Whether the model should follow the schema strictly (for providers that support it)."""
    sequential: bool = False
    """Whether calls of this tool must not run concurrently with other tool calls."""
    kind: ToolKind = 'function'
    """What the tool is for."""
    metadata: dict[str, Any] | None = None
    """Data for the application; not sent to the model."""

    def __repr__(self) -> str:
        shown = [f'name={self.name!r}', f'parameters_json_schema={self.parameters_json_schema!r}']
        if self.description is not None:
            shown.append(f'description={self.description!r}')
        for name in ('outer_typed_dict_key', 'strict', 'metadata'):
            if (value := getattr(self, name)) is not None:
                shown.append(f'{name}={value!r}')
        if self.sequential:
            shown.append('sequential=True')
        if self.kind != 'function':
            shown.append(f'kind={self.kind!r}')
        return f'ToolDefinition({", ".join(shown)})'

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ToolDefinition):
            return NotImplemented
        return dataclasses.astuple(self) == dataclasses.astuple(other)

    __hash__ = None  # type: ignore[assignment]


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
