"""Tools: functions the model may call, their definitions, and the `RunContext` they (and validators) receive.

`ToolDefinition` and `RunContext` are defined lower down (models use them too) and re-exported here.
"""

from __future__ import annotations as _annotations

import inspect
import warnings
from collections.abc import Awaitable, Callable
from typing import Any, Concatenate, Generic, Self, TypeAlias

from pydantic.json_schema import GenerateJsonSchema
from typing_extensions import ParamSpec, TypedDict, Unpack

from ._functions.docstrings import UseEnumMemberDocstrings
from ._functions.keyword_options import KeywordOptions
from ._functions.schema import (
    DocstringFormat,
    FunctionSchema,
    GenerateToolJsonSchema,
    passthrough_schema,
)
from ._functions.schema import function_schema as function_schema_of
from ._functions.tool_selector import ToolSelector, ToolSelectorFunc, matches_tool_selector
from ._tools.deferred_calls import (
    DeferredToolApprovalResult,
    DeferredToolCallResult,
    DeferredToolRequests,
    DeferredToolResult,
    DeferredToolResults,
    ToolApproved,
    ToolDenied,
)
from ._tools.definition import ToolDefinition, ToolDefinitionKind
from ._tools.tool_kinds import ToolKindLike, tool_kind_id
from ._warnings import PydanticAIDeprecationWarning
from .exceptions import UserError
from .models._model import AgentDepsT, RunContext
from .native_tools import AbstractNativeTool

__all__ = (
    'AgentDepsT',
    'RunContext',
    'Tool',
    'ToolOptions',
    'ToolInitOptions',
    'ToolDefaults',
    'ToolDefinition',
    'ToolDefinitionKind',
    'ToolFuncContext',
    'ToolFuncPlain',
    'ToolFuncEither',
    'ToolPrepareFunc',
    'ToolsPrepareFunc',
    'DocstringFormat',
    'ArgsValidatorFunc',
    'GenerateToolJsonSchema',
    'UseEnumMemberDocstrings',
    'DeferredToolRequests',
    'DeferredToolResults',
    'DeferredToolResult',
    'DeferredToolApprovalResult',
    'DeferredToolCallResult',
    'ToolApproved',
    'ToolDenied',
    'ToolSelector',
    'ToolSelectorFunc',
    'matches_tool_selector',
    'NativeToolFunc',
    'AgentNativeTool',
    'SystemPromptFunc',
    'ObjectJsonSchema',
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
NativeToolFunc: TypeAlias = Callable[
    [RunContext[AgentDepsT]], Awaitable[AbstractNativeTool | None] | AbstractNativeTool | None
]
"""Builds a native tool for one step from the run context (sync or async), or returns `None` to leave it out."""
AgentNativeTool: TypeAlias = AbstractNativeTool | NativeToolFunc[AgentDepsT]
"""A native tool, or a function building it for each step."""
SystemPromptFunc: TypeAlias = (
    Callable[[RunContext[AgentDepsT]], str | None]
    | Callable[[RunContext[AgentDepsT]], Awaitable[str | None]]
    | Callable[[], str | None]
    | Callable[[], Awaitable[str | None]]
)
"""A system prompt function (`@agent.system_prompt`): with or without the `RunContext`, sync or async; the prompt
it returns, or `None` to add none to that request."""
ObjectJsonSchema: TypeAlias = dict[str, Any]
"""The JSON schema of an object, as a dict (a tool's `parameters_json_schema`)."""
ArgsValidatorFunc: TypeAlias = Callable[Concatenate[RunContext[AgentDepsT], ToolParams], Awaitable[None] | None]
"""Checks a tool's validated arguments before the call (given as keyword arguments after the `RunContext`);
raises `ModelRetry` to send the model back with a message."""


class ToolDefaults(TypedDict, total=False):
    """The options of a tool that a `FunctionToolset` can also set for all of its tools."""

    docstring_format: DocstringFormat
    """How the docstring is written (`'auto'`, the default, detects google, numpy and sphinx)."""
    require_parameter_descriptions: bool
    """Fail if a parameter has no description in the docstring (default `False`)."""
    schema_generator: type[GenerateJsonSchema]
    """The JSON schema generator of the arguments' schema (default `GenerateToolJsonSchema`)."""
    strict: bool | None
    """Whether the model should follow the schema strictly (`None`, the default: the model's choice)."""
    sequential: bool
    """Run calls of the tool alone, never concurrently with other calls (default `False`)."""
    requires_approval: bool
    """Whether calls wait for a human's approval (default `False`)."""
    metadata: dict[str, Any] | None
    """Data for the application, not sent to the model (a toolset's is merged under each tool's)."""
    timeout: float | None
    """Seconds a call may run before the model is asked to retry (`Timed out after ... seconds.`); `None`: no
    limit (a toolset's applies to the calls of its tools that set none)."""
    defer_loading: bool
    """Hide the tool until a tool search surfaces it (default `False`)."""
    include_return_schema: bool | None
    """Tell the model the return schema, in the tool's description (`None`, the default: only with the
    `IncludeToolReturnSchemas` capability)."""


class _ToolOwnOptions(ToolDefaults, Generic[AgentDepsT], total=False):
    """The options only a single tool has."""

    name: str | None
    """The tool's name; the function's name if `None`."""
    description: str | None
    """The description for the model; the function's docstring if `None`."""
    prepare: ToolPrepareFunc[AgentDepsT] | None
    """Called before each model request to adjust the tool's definition or hide the tool."""
    args_validator: ArgsValidatorFunc[AgentDepsT, ...] | None
    """Called with the `RunContext` and the validated arguments before each call; raises `ModelRetry` to have
    the model retry (sync or async)."""
    tool_kind: ToolKindLike | None
    """What the tool is, whatever it is named: a `ToolKind` or its id. Its calls and returns come as the typed
    parts registered for the kind (`class LookupCallPart(ToolCallPart[LookupArgs], kind=lookup)`)."""


class ToolOptions(_ToolOwnOptions[AgentDepsT], total=False):
    """The options of a function registered as a tool: the keyword arguments of `Agent.tool`,
    `Agent.tool_plain`, `FunctionToolset.tool`, `FunctionToolset.tool_plain` and `FunctionToolset.add_function`
    (used as `**options: Unpack[ToolOptions[AgentDepsT]]`)."""

    retries: int | None
    """How many times in a row the tool may be retried; the toolset's, else the agent's, if `None`."""


class ToolInitOptions(_ToolOwnOptions[AgentDepsT], total=False):
    """The keyword arguments of `Tool(function, ...)`: those of `ToolOptions`, with `max_retries` for `retries`,
    and `takes_ctx` and `function_schema`."""

    takes_ctx: bool | None
    """Whether the first parameter is the `RunContext`; inferred from its annotation if `None`."""
    max_retries: int | None
    """How many times in a row the tool may be retried; the agent's `retries` if `None`."""
    function_schema: FunctionSchema | None
    """A ready-made schema (used by `from_schema`)."""


TOOL_DEFAULTS: ToolDefaults = {
    'docstring_format': 'auto',
    'require_parameter_descriptions': False,
    'schema_generator': GenerateToolJsonSchema,
    'strict': None,
    'sequential': False,
    'requires_approval': False,
    'metadata': None,
    'timeout': None,
    'defer_loading': False,
    'include_return_schema': None,
}
"""The default of each of `ToolDefaults`."""

_OWN_DEFAULTS: dict[str, Any] = {'name': None, 'description': None, 'prepare': None, 'args_validator': None}
# `tool_kind` is a tool's own option, shown after `metadata` (as pydantic-ai 2.68 orders them).
_LATER = ('timeout', 'defer_loading', 'include_return_schema')
_WITH_KIND: dict[str, Any] = {
    **{k: v for k, v in TOOL_DEFAULTS.items() if k not in _LATER},
    'tool_kind': None,
    **{k: v for k, v in TOOL_DEFAULTS.items() if k in _LATER},
}
TOOL_OPTIONS = KeywordOptions(ToolOptions, {'retries': None, **_OWN_DEFAULTS, **_WITH_KIND})
"""The options of `ToolOptions` with their defaults (what the signatures of the `tool` decorators show)."""
TOOL_INIT_OPTIONS = KeywordOptions(
    ToolInitOptions, {'takes_ctx': None, 'max_retries': None, **_OWN_DEFAULTS, **_WITH_KIND, 'function_schema': None}
)
"""The options of `ToolInitOptions` with their defaults."""


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
    tool_kind: str | None
    """The id of the tool's `ToolKind`, if it has one."""
    function_schema: FunctionSchema
    """The argument schema and validator."""

    def __init__(
        self, function: ToolFuncEither[AgentDepsT, ...], **options: Unpack[ToolInitOptions[AgentDepsT]]
    ) -> None:
        """Make a tool of `function`.

        Args:
            function: The function; sync functions run in a worker thread.
            **options: The tool's options (`ToolInitOptions`: `name`, `description`, `max_retries`, `prepare`,
                `strict`, `timeout`, ...); each left out takes its default.

        Raises:
            TypeError: an option is not one of `ToolInitOptions`.
        """
        settings = TOOL_INIT_OPTIONS.resolve('Tool', options)
        self.function = function
        self.name = settings['name'] or function.__name__
        docstring_format = settings['docstring_format']
        require_parameter_descriptions = settings['require_parameter_descriptions']
        self.function_schema = settings['function_schema'] or function_schema_of(
            function, settings['schema_generator'], takes_ctx=settings['takes_ctx'], docstring_format=docstring_format,
            require_parameter_descriptions=require_parameter_descriptions, name=self.name,
        )  # fmt: skip
        self.takes_ctx = self.function_schema.takes_ctx
        self.max_retries = settings['max_retries']
        if self.max_retries is not None and self.max_retries < 0:
            raise UserError(f'max_retries must be >= 0, got {self.max_retries}')
        self.description = settings['description'] or self.function_schema.description
        self.prepare = settings['prepare']
        self.args_validator = settings['args_validator']
        self.docstring_format = docstring_format
        self.require_parameter_descriptions = require_parameter_descriptions
        self.strict = settings['strict']
        self.sequential = settings['sequential']
        self.requires_approval = settings['requires_approval']
        self.metadata = settings['metadata']
        self.timeout = settings['timeout']
        if self.timeout is not None and self.timeout <= 0:
            raise UserError(f'timeout must be > 0, got {self.timeout}')
        self.defer_loading = settings['defer_loading']
        self.include_return_schema = settings['include_return_schema']
        self.tool_kind = tool_kind_id(settings['tool_kind'])

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
            tool_kind=self.tool_kind,
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


TOOL_INIT_OPTIONS.signed(Tool.__init__)


_RENAMED = {'BuiltinToolFunc': 'NativeToolFunc', 'AgentBuiltinTool': 'AgentNativeTool'}


def __getattr__(name: str) -> Any:
    if name == 'ToolKind':  # pydantic-ai 2.68 gave the name to `messages.ToolKind`, what a tool is
        warnings.warn(
            '`edgewise.agent.tools.ToolKind` is deprecated, use `edgewise.agent.tools.ToolDefinitionKind` instead '
            '(`edgewise.agent.ToolKind` is now the class that says what a tool is).',
            PydanticAIDeprecationWarning,
            stacklevel=2,
        )
        return ToolDefinitionKind
    new_name = _RENAMED.get(name)
    if new_name is None:
        raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
    warnings.warn(
        f'`edgewise.agent.tools.{name}` is deprecated, use `edgewise.agent.tools.{new_name}` instead.',
        PydanticAIDeprecationWarning,
        stacklevel=2,
    )
    return globals()[new_name]
