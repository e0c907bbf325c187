"""Tools: functions the model may call, their definitions, and the `RunContext` they (and validators) receive."""

from __future__ import annotations as _annotations

import dataclasses
import inspect
import json
import warnings
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Concatenate, Generic, Literal, Self, TypeAlias

from pydantic.json_schema import GenerateJsonSchema
from typing_extensions import ParamSpec, TypeVar

from ._function_schema import (
    DocstringFormat,
    FunctionSchema,
    GenerateToolJsonSchema,
    passthrough_schema,
)
from ._function_schema import function_schema as function_schema_of
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
    'ArgsValidatorFunc',
    'GenerateToolJsonSchema',
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

    @property
    def last_attempt(self) -> bool:
        """Whether this is the last attempt the retry budget allows (a failure now ends the run)."""
        return self.retry == self.max_retries

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
    timeout: float | None = None
    """Seconds a call may run before it is abandoned and the model asked to retry; no limit if `None`."""
    defer_loading: bool = False
    """Whether the tool is hidden from the model until a tool search surfaces it (as in pydantic-ai)."""
    unless_native: str | None = None
    """A native tool whose support by the model drops this tool from the request (pydantic-ai field)."""
    with_native: str | None = None
    """A native tool whose support keeps this tool in the request in that tool's format (pydantic-ai field)."""
    tool_kind: str | None = None
    """The typed call/return shape of framework tools (`'tool-search'`); `None` for function tools."""
    return_schema: dict[str, Any] | None = None
    """The JSON schema of what the tool returns; sent (in the description) only with `include_return_schema`."""
    include_return_schema: bool | None = None
    """Whether the model is told the return schema; not when `None` or `False`."""
    capability_id: str | None = None
    """The capability that contributed the tool, if any."""

    @property
    def defer(self) -> bool:
        """Whether calls of the tool are answered outside the run (external tools and tools awaiting approval)."""
        return self.kind in ('external', 'unapproved')

    def __repr__(self) -> str:
        # the fields that differ from their defaults, as pydantic-ai shows them
        shown = [f'name={self.name!r}', f'parameters_json_schema={self.parameters_json_schema!r}']
        for item in dataclasses.fields(self)[2:]:
            value = getattr(self, item.name)
            if value != item.default:
                shown.append(f'{item.name}={value!r}')
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
ArgsValidatorFunc: TypeAlias = Callable[Concatenate[RunContext[AgentDepsT], ToolParams], Awaitable[None] | None]
"""Checks a tool's validated arguments before the call (given as keyword arguments after the `RunContext`);
raises `ModelRetry` to send the model back with a message."""


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
    args_validator: ArgsValidatorFunc[AgentDepsT, ...] | None
    """Checks the validated arguments before each call; raises `ModelRetry` to have the model retry."""
    docstring_format: DocstringFormat
    """How the docstring is written."""
    require_parameter_descriptions: bool
    """Whether every parameter must have a description in the docstring."""
    requires_approval: bool
    """Whether calls wait for a human's approval (the tool's definition has kind `'unapproved'`)."""
    timeout: float | None
    """Seconds a call may run before it is abandoned and the model asked to retry; no limit if `None`."""
    defer_loading: bool
    """Whether the tool is hidden until a tool search surfaces it."""
    include_return_schema: bool | None
    """Whether the model is told the return schema (in the tool's description)."""
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
        args_validator: ArgsValidatorFunc[AgentDepsT, ...] | None = None,
        docstring_format: DocstringFormat = 'auto',
        require_parameter_descriptions: bool = False,
        schema_generator: type[GenerateJsonSchema] = GenerateToolJsonSchema,
        strict: bool | None = None,
        sequential: bool = False,
        requires_approval: bool = False,
        metadata: dict[str, Any] | None = None,
        timeout: float | None = None,
        defer_loading: bool = False,
        include_return_schema: bool | None = None,
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
            args_validator: Called with the `RunContext` and the validated arguments before each call; raises
                `ModelRetry` to have the model retry (sync or async).
            docstring_format: How the docstring is written (`'auto'` detects google, numpy and sphinx).
            require_parameter_descriptions: Fail if a parameter has no description in the docstring.
            schema_generator: The JSON schema generator of the arguments' schema.
            strict: Whether the model should follow the schema strictly.
            sequential: Run calls of this tool alone, never concurrently with other calls.
            requires_approval: Whether calls wait for a human's approval.
            metadata: Data for the application.
            timeout: Seconds a call may run before the model is asked to retry (`Timed out after ... seconds.`).
            defer_loading: Hide the tool until a tool search surfaces it.
            include_return_schema: Tell the model the return schema (in the tool's description).
            function_schema: A ready-made schema (used by `from_schema`).
        """
        self.function = function
        self.name = name or function.__name__
        self.function_schema = function_schema or function_schema_of(
            function, schema_generator, takes_ctx=takes_ctx, docstring_format=docstring_format,
            require_parameter_descriptions=require_parameter_descriptions, name=self.name,
        )  # fmt: skip
        self.takes_ctx = self.function_schema.takes_ctx
        self.max_retries = max_retries
        self.description = description or self.function_schema.description
        self.prepare = prepare
        self.args_validator = args_validator
        self.docstring_format = docstring_format
        self.require_parameter_descriptions = require_parameter_descriptions
        self.strict = strict
        self.sequential = sequential
        self.requires_approval = requires_approval
        self.metadata = metadata
        self.timeout = timeout
        self.defer_loading = defer_loading
        self.include_return_schema = include_return_schema

    @classmethod
    def from_schema(
        cls,
        function: Callable[..., Any],
        name: str,
        description: str | None,
        json_schema: dict[str, Any],
        takes_ctx: bool = False,
        sequential: bool = False,
        args_validator: ArgsValidatorFunc[Any, ...] | None = None,
    ) -> Self:
        """A tool whose argument schema is given as JSON schema; arguments reach `function` unvalidated.

        Args:
            function: Called with the arguments as keyword arguments (after the `RunContext` if `takes_ctx`).
            name: The tool's name.
            description: The tool's description for the model.
            json_schema: The JSON schema of the arguments.
            takes_ctx: Whether the function takes the `RunContext` first.
            sequential: Run calls of this tool alone.
            args_validator: Called with the `RunContext` and the arguments before each call (see `__init__`).
        """
        schema = passthrough_schema(
            function, json_schema=json_schema, description=description, takes_ctx=takes_ctx, name=name
        )
        return cls(function, takes_ctx=takes_ctx, name=name, description=description, sequential=sequential,
                   args_validator=args_validator, function_schema=schema)  # fmt: skip

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
            timeout=self.timeout,
            defer_loading=self.defer_loading,
            kind='unapproved' if self.requires_approval else 'function',
            return_schema=self.function_schema.return_schema,
            include_return_schema=self.include_return_schema,
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


def resolve_return_schema(tool_def: ToolDefinition) -> ToolDefinition:
    """The definition as the model gets it: the return schema added to the description when the tool asks for
    it (`include_return_schema`), else dropped, as pydantic-ai does for models without native return schemas.
    """
    if not tool_def.include_return_schema:
        if tool_def.return_schema is None:
            return tool_def
        return dataclasses.replace(tool_def, return_schema=None)
    if not tool_def.return_schema:
        warnings.warn(
            f'Tool {tool_def.name!r} has `include_return_schema` enabled but no meaningful return schema was '
            'generated. Set `include_return_schema=False` on this tool to suppress this warning.',
            UserWarning,
            stacklevel=2,
        )
        return dataclasses.replace(tool_def, return_schema=None)
    parts = [tool_def.description] if tool_def.description else []
    parts += ['Return schema:', json.dumps(tool_def.return_schema, indent=2)]
    return dataclasses.replace(tool_def, description='\n\n'.join(parts), return_schema=None)
