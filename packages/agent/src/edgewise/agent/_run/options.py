"""What an agent's configuration and a run's arguments resolve to: retry budgets, instructions, model settings
given as dicts or as functions of the run context, and run metadata."""

from __future__ import annotations as _annotations

import warnings
from collections.abc import AsyncIterable, AsyncIterator, Callable, Mapping, Sequence
from typing import Any, TypeAlias

from typing_extensions import TypedDict

from .._warnings import PydanticAIDeprecationWarning, application_caller
from ..exceptions import UserError
from ..messages import AgentStreamEvent
from ..native_tools._base import AbstractNativeTool
from ..settings import ModelSettings, merge_model_settings
from ..tools import AgentDepsT, RunContext

__all__ = (
    'AgentRetries',
    'AgentInstructions',
    'AgentMetadata',
    'AgentModelSettings',
    'EventStreamProcessor',
    'agent_retry_budgets',
    'instruction_items',
    'run_retry_budgets',
    'settings_resolver',
    'resolve_metadata',
    'pop_deprecated',
    'pop_deprecated_builtin_tools',
    'run_native_tools',
    'check_agent_native_tools',
    'check_native_tool_ids',
)


class AgentRetries(TypedDict, total=False):
    """Retry budgets by kind: `Agent(retries={'tools': 3, 'output': 1})`; a missing key keeps the default (1)."""

    tools: int
    """How many times in a row each tool may be retried (tools setting no `retries` of their own)."""
    output: int
    """How many times the output may be retried (a run-wide count for text output; the default budget of each
    output tool)."""


AgentInstructions: TypeAlias = 'str | Callable[..., Any] | Sequence[str | Callable[..., Any]] | None'
"""Instructions: a text, a function (`(ctx) -> str` or `() -> str`, sync or async), or a sequence of them."""

AgentModelSettings: TypeAlias = ModelSettings | Callable[[RunContext[AgentDepsT]], ModelSettings | None]
"""Model settings, or a function of the run context returning them (called before every model request)."""

EventStreamProcessor: TypeAlias = Callable[
    [RunContext[AgentDepsT], AsyncIterable[AgentStreamEvent]], AsyncIterator[AgentStreamEvent]
]
"""An async generator function of the run context and a node's events, yielding the events the run goes on with
(`ProcessEventStream(handler=...)`): it may change, drop or add events."""

AgentMetadata: TypeAlias = 'Mapping[str, Any] | Callable[[RunContext[Any]], Mapping[str, Any] | None]'
"""Run metadata, or a function of the run context returning it (called when the run starts and once it ends)."""

_DEFAULT_RETRIES = 1
_UNSET: Any = object()


def agent_retry_budgets(retries: int | AgentRetries | None, legacy: dict[str, Any]) -> tuple[int, int]:
    """The `(tools, output)` budgets of `Agent(retries=..., tool_retries=..., output_retries=...)`.

    The last two are deprecated (as in pydantic-ai 1.107): each warns and, when given, wins over `retries`.
    """
    normalized = _normalize(retries)
    budgets: dict[str, int] = {key: normalized[key] for key in ('tools', 'output') if key in normalized}
    for key, name in (('tools', 'tool_retries'), ('output', 'output_retries')):
        value = legacy.pop(name, _UNSET)
        if value is _UNSET:
            continue
        warnings.warn(
            f'`Agent({name}=...)` is deprecated and will be removed in v2.0. '
            f"Use `retries={{'{key}': ...}}` (or `retries=<int>` to set the same budget for both tool and output "
            'retries) instead.',
            PydanticAIDeprecationWarning,
            stacklevel=3,
        )
        if value is not None:
            budgets[key] = value
    return budgets.get('tools', _DEFAULT_RETRIES), budgets.get('output', _DEFAULT_RETRIES)


def run_retry_budgets(
    retries: int | AgentRetries | None, legacy: dict[str, Any], owner: str | None = None
) -> AgentRetries:
    """The budgets a run (`run(retries=...)`) or an override block (`override(retries=...)`) asks for, over the
    agent's: a bare `int` sets both the tool and the output budget, a dict only the keys it names (pydantic-ai
    2.x; 1.x could not set the tool budget per run). The deprecated `output_retries=` is read from `legacy`, and
    its warning names `owner` (by default the run's entry point, `agent.run`, ...) and points at the application's
    call.

    Raises:
        UserError: `legacy` holds another keyword argument.
    """
    if 'output_retries' in legacy:
        value = legacy.pop('output_retries')
        stacklevel, entry = application_caller()
        warnings.warn(
            f'`{owner or _run_owner(entry)}(output_retries=...)` is deprecated and will be removed in v2.0. '
            "Use `retries={'output': ...}` (or `retries=<int>` to override both budgets) instead.",
            PydanticAIDeprecationWarning,
            stacklevel=stacklevel,
        )
        if retries is None and value is not None:
            retries = {'output': value}
    if legacy:
        raise UserError(f'Unknown keyword arguments: {", ".join(f"`{k}`" for k in legacy)}')
    return _normalize(retries)


def _normalize(retries: int | AgentRetries | None) -> AgentRetries:
    if retries is None:
        return {}
    if isinstance(retries, int):
        return {'tools': retries, 'output': retries}
    return AgentRetries(**retries)


def settings_resolver(
    model_settings: ModelSettings | None, layers: Sequence[Any]
) -> tuple[ModelSettings | None, Callable[[RunContext[Any]], ModelSettings | None] | None]:
    """Merge the model's settings with the agent's and the run's (later wins).

    Returns the merged settings when every layer is a dict, else `(None, resolve)` where `resolve(ctx)` merges
    them for one request, calling each function with `ctx.model_settings` set to what is merged below it.
    """
    if not layers:  # (the model's own settings, as merging nothing over them gives)
        return model_settings, None
    if not any(callable(layer) for layer in layers):
        merged = model_settings
        for layer in layers:
            merged = merge_model_settings(merged, layer)
        return merged, None

    def resolve(ctx: RunContext[Any]) -> ModelSettings | None:
        merged = model_settings
        for layer in layers:
            if callable(layer):
                ctx.model_settings = merged
                layer = layer(ctx)
            merged = merge_model_settings(merged, layer)
        ctx.model_settings = merged
        return merged

    return None, resolve


def resolve_metadata(layers: Sequence[Any], ctx: RunContext[Any]) -> dict[str, Any] | None:
    """The run's metadata: each layer (a mapping or a function of `ctx`) merged over the ones before it."""
    merged: dict[str, Any] | None = None
    for layer in layers:
        value = layer(ctx) if callable(layer) else layer
        if value is not None:
            merged = {**(merged or {}), **value}
    return merged


def pop_deprecated(kwargs: dict[str, Any], name: str, replacement: str) -> Any:
    """Take the deprecated keyword argument `name` out of `kwargs` (warning, if given), or `None`."""
    if name not in kwargs:
        return None
    warnings.warn(
        f'`Agent({name}=...)` is deprecated, use `{replacement}` instead.', PydanticAIDeprecationWarning, stacklevel=3
    )
    return kwargs.pop(name)


def pop_deprecated_builtin_tools(
    kwargs: dict[str, Any], owner: str | None = None, *, has_native_tools: bool = False, stacklevel: int | None = None
) -> Any:
    """Take the deprecated `builtin_tools=` (native tools' name before pydantic-ai 1.107) out of the keyword
    arguments of `owner` (warning, if given), or `None`. Without `owner` and `stacklevel`, the warning names the
    run's entry point (`agent.run`, ...) and points at the application's call."""
    if 'builtin_tools' not in kwargs:
        return None
    entry = None
    if stacklevel is None:
        stacklevel, entry = application_caller()
    if has_native_tools:
        message = '`builtin_tools=` is deprecated, use `native_tools=` instead.'
    else:
        message = (
            f'`{owner or _run_owner(entry)}(builtin_tools=...)` is deprecated, use `capabilities=[NativeTool(...)]` '
            'instead.'
        )
    warnings.warn(message, PydanticAIDeprecationWarning, stacklevel=stacklevel)
    return kwargs.pop('builtin_tools')


def _run_owner(entry: str | None) -> str:
    """How a warning names the run's entry point: `agent.run_sync`, ... (`agent.iter` when none was found)."""
    return f'agent.{entry or "iter"}'


def instruction_items(instructions: AgentInstructions) -> list[Any]:
    """`instructions` as a list (of texts and functions)."""
    if instructions is None:
        return []
    if isinstance(instructions, str) or callable(instructions):
        return [instructions]
    return list(instructions)


def run_native_tools(
    overrides: Mapping[str, Any],
    agent_tools: Sequence[Any],
    agent_capabilities: Sequence[Any],
    capabilities: Sequence[Any],
    run_tools: Sequence[Any] | None,
) -> list[Any]:
    """A run's native tools: the agent's, then its capabilities', then the run's. An `override(native_tools=)`
    replaces the agent's and its capabilities' (not the run's capabilities', as in pydantic-ai 1.107).

    Raises:
        UserError: two native tools of one layer (the agent's with its capabilities', an `override(spec=)`'s
            capabilities', the run's capabilities', an `override(native_tools=)`) share an id but differ.
    """
    if not overrides and not capabilities:  # (most runs: the agent's tools, checked as one layer, and the run's)
        if len(agent_tools) > 1:
            check_native_tool_ids(agent_tools, 'agent capabilities')
        return [*agent_tools, *(run_tools or ())]
    overridden = overrides.get('native_tools')
    base = overrides.get('capabilities', agent_capabilities)
    split = len(capabilities) if capabilities is base else len(base)
    base_tools = [*agent_tools, *_native_tools_of(capabilities[:split])]
    check_native_tool_ids(
        base_tools, 'override spec capabilities' if 'capabilities' in overrides else 'agent capabilities'
    )
    run_capability_tools = _native_tools_of(capabilities[split:])
    check_native_tool_ids(run_capability_tools, 'run capabilities')
    if overridden is not None:
        check_native_tool_ids(overridden, 'override native_tools')
        base_tools = list(overridden)
    return [*base_tools, *run_capability_tools, *(run_tools or ())]


def _native_tools_of(capabilities: Sequence[Any]) -> list[Any]:
    tools: list[Any] = []
    for capability in capabilities:
        # (capability functions have no native tools; the capability classes import this module)
        if (get_native_tools := getattr(capability, 'get_native_tools', None)) is not None:
            tools.extend(get_native_tools())
    return tools


def check_agent_native_tools(capabilities: Sequence[Any]) -> None:
    """Check the native tools of an agent's capabilities as it is made (see `check_native_tool_ids`); those of
    capability functions are checked as a run makes them."""
    check_native_tool_ids(_native_tools_of(capabilities), 'agent capabilities')


def check_native_tool_ids(tools: Sequence[Any], source: str) -> None:
    """Check that the native tools of one layer (`source` names it) that share a `unique_id` are equal: a request
    keeps one tool per id, so different tools of one id would leave one of them out unseen (pydantic-ai 2.x).
    Functions making a native tool per run are left out (they have no id until then).

    Raises:
        UserError: two of them share an id but differ.
    """
    seen: dict[str, AbstractNativeTool] = {}
    for tool in tools:
        if isinstance(tool, AbstractNativeTool) and seen.setdefault(tool.unique_id, tool) != tool:
            raise UserError(
                f'Native tool id {tool.unique_id!r} maps to conflicting definitions in {source}. '
                'Give each native tool of one layer (the agent, a run, an override) its own id.'
            )
