"""Which provider-run tools ("native" tools) a model takes, and the check of a request's native tools against them:
duplicates dropped, optional tools the model cannot run left out, tools with a local fallback swapped for it (the
function tools marked `unless_native`, which `NativeOrLocalTool` capabilities add), the others a `UserError`.

The same check settles the provider-run tool search: the function tools a tool search covers (`with_native=
'tool_search'`) that no search has found yet (`defer_loading=True`) go to the provider with their schemas held back
when it runs the search (`ToolSearchTool`) and takes such tools (the model's `tool_deferral_mode`); an optional
`ToolSearchTool` with nothing to search, or next to which the model cannot hold a schema back, is left out (the
agent's own `search_tools` stays then).

`resolve_request_tools` (public, pydantic-ai 2.68's) and `resolve_model_tools` (what models call) then record how
each function tool reaches the provider in `ModelRequestParameters.tool_visibility`, which the providers' request
mappings read. A hidden tool (`defer_loading=True` and not in `revealed_tool_names`) stays in `function_tools`, so
that hooks and capabilities see it: `'deferred'` when its search goes along and the model can hold its schema back
(or, with no search on the request, when the model can hold a schema back and announce the tool later), else
`'withheld'`. A revealed tool (in `revealed_tool_names`: found by a search, named by a `ToolAvailabilityDeltaPart`,
or of a loaded deferred capability) is `'via_history'` where the model takes new tools' definitions in the
conversation (`tool_addition_mode='with_definitions'`), `'deferred'` where it reveals them by reference to a
held-back declaration, else `'visible'`; every other tool is `'visible'`. A tool that came mid-run is declared
`'visible'` all the same when the request would declare no tool at all otherwise."""

from __future__ import annotations as _annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from typing import TypeAlias

from .._messages.tool_parts import TOOL_SEARCH_NATIVE_KIND
from .._tools.definition import ToolDefinition
from ..exceptions import UserError
from ..native_tools import AbstractNativeTool
from ..native_tools._tool_search import ToolSearchTool
from ..profiles import ToolAdditionMode, ToolDeferralMode
from ._request_parameters import ModelRequestParameters, ToolVisibility

__all__ = ('check_native_tools', 'resolve_model_tools', 'resolve_request_tools')

SupportedNativeTools: TypeAlias = Iterable[type[AbstractNativeTool]] | Callable[[], Iterable[type[AbstractNativeTool]]]
"""The native tool classes a model runs, or a function giving them (so that a request without native tools never
works out the set)."""

SchemaWithholding: TypeAlias = Callable[[Sequence[AbstractNativeTool]], bool]
"""Whether a request sending these native tools may declare a function tool with its schema held back."""


def check_native_tools(
    params: ModelRequestParameters,
    supported: SupportedNativeTools,
    tool_deferral_mode: ToolDeferralMode | None = None,
) -> ModelRequestParameters:
    """`params` with its native tools deduplicated (by `unique_id`, the last one kept), those the model does not
    support left out when they are optional or have a local fallback, and the local fallbacks of those it supports
    left out.

    A local fallback is a function tool whose `unless_native` is the `unique_id` of a native tool: the model is sent
    the native tool when it can run it, else the function tool. A hidden tool of a tool search (see the module
    docstring) is kept, `defer_loading=True`, only when the search is kept and `tool_deferral_mode` allows it.

    Raises:
        UserError: a tool the model does not support is neither optional nor given a local fallback.
    """
    if not params.native_tools and not any(t.unless_native for t in params.function_tools):
        return params
    can_defer = tool_deferral_mode is not None
    kept, _ = _kept_native_tools(params, supported, None, (lambda natives: True) if can_defer else None)
    kept_ids = {t.unique_id for t in kept}
    searched = can_defer and TOOL_SEARCH_NATIVE_KIND in kept_ids
    function_tools: list[ToolDefinition] = []
    for t in params.function_tools:
        if t.unless_native in kept_ids:
            continue
        if t.with_native == TOOL_SEARCH_NATIVE_KIND:
            if searched and not t.defer_loading:
                t = dataclasses.replace(t, defer_loading=True)
            elif t.defer_loading and not searched:
                continue
        function_tools.append(t)
    if kept == params.native_tools and function_tools == params.function_tools:
        return params
    return dataclasses.replace(params, native_tools=kept, function_tools=function_tools)


def _kept_native_tools(
    params: ModelRequestParameters,
    supported: SupportedNativeTools,
    refuses: Callable[[AbstractNativeTool], bool] | None,
    can_withhold: SchemaWithholding | None,
    *,
    keep_unwithheld_search: bool = False,
) -> tuple[list[AbstractNativeTool], bool]:
    """The native tools the request sends (see `check_native_tools`), and whether it may hold a function tool's
    schema back next to them (`can_withhold` of them; never without it). `refuses`: whether the model cannot apply
    some setting of a tool of a class it supports (then it is handled as a tool of a class it does not).
    `keep_unwithheld_search`: keep an optional tool search even where no schema can be held back (pydantic-ai's
    rule; Edgewise's models leave it out, so that the agent's own `search_tools` stays)."""
    fallback_ids = {t.unless_native for t in params.function_tools if t.unless_native}
    supported_types = tuple(supported() if callable(supported) else supported)

    def runs(tool: AbstractNativeTool) -> bool:
        return isinstance(tool, supported_types) and not (refuses is not None and refuses(tool))

    unique = list({tool.unique_id: tool for tool in params.native_tools}.values())
    unsupported = [t for t in unique if not runs(t) and not t.optional and t.unique_id not in fallback_ids]
    if unsupported:
        names = [type(t).__name__ for t in unsupported]
        raise UserError(
            f'Native tool(s) {names} not supported by this model. '
            f'Supported: {[t.__name__ for t in supported_types]}. '
            'Mark a tool `optional=True` to leave it out of requests to models that cannot run it, or give it a '
            'local fallback with `NativeOrLocalTool(native=..., local=...)` or the `local` argument of its '
            'capability (e.g. `WebSearch(local=my_search_function)`).'
        )
    # An optional tool search is left out with nothing to search, or when the model cannot hold a tool's schema
    # back next to it (then the agent's own `search_tools` stays).
    corpus_ids = {t.with_native for t in params.function_tools if t.with_native}
    kept = [t for t in unique if runs(t) and not (_optional_search(t) and t.unique_id not in corpus_ids)]
    can_defer = can_withhold is not None and can_withhold(kept)
    if not can_defer and not keep_unwithheld_search and any(_optional_search(t) for t in kept):
        kept = [t for t in kept if not _optional_search(t)]
        can_defer = can_withhold is not None and can_withhold(kept)
    return kept, can_defer


def _optional_search(tool: AbstractNativeTool) -> bool:
    return isinstance(tool, ToolSearchTool) and tool.optional


def resolve_request_tools(
    params: ModelRequestParameters,
    supported_types: frozenset[type[AbstractNativeTool]],
    *,
    unsupported_settings: Callable[[AbstractNativeTool], frozenset[str]] | None = None,
    can_withhold_tool_schemas: SchemaWithholding | None = None,
    tool_addition_mode: ToolAdditionMode | None = None,
) -> ModelRequestParameters:
    """`params` as a model with these abilities sends them: its native tools checked against `supported_types`, the
    local fallbacks of the native tools it keeps left out, and `tool_visibility` giving every function tool how it
    reaches the provider (see the module docstring); hidden tools stay in `function_tools`, marked `'withheld'`
    when they are not sent at all. What `Model.prepare_request` does with the model's own abilities.

    Args:
        params: The request's parameters.
        supported_types: The native tool classes the model runs.
        unsupported_settings: The settings of a native tool the model cannot apply: a tool with any is handled as
            a tool of a class the model does not run (its local fallback goes instead, or it is left out when
            optional, else the request is refused), so that no restriction it sets is silently dropped.
        can_withhold_tool_schemas: Whether a request sending the given native tools may declare a function tool with
            its schema held back (`'deferred'`); without it, no schema is held back.
        tool_addition_mode: How the model takes tools revealed mid-run natively (`'with_definitions'`: in the
            conversation, so revealed tools are `'via_history'`), `None` for no native way.

    Raises:
        UserError: a native tool the model does not run is neither optional nor given a local fallback.
    """
    refuses = None if unsupported_settings is None else (lambda tool: bool(unsupported_settings(tool)))
    kept, can_defer = _kept_native_tools(
        params, supported_types, refuses, can_withhold_tool_schemas, keep_unwithheld_search=True
    )
    kept_ids = {t.unique_id for t in kept}
    search_sent = any(isinstance(t, ToolSearchTool) for t in kept)
    with_definitions = tool_addition_mode == 'with_definitions'
    function_tools: list[ToolDefinition] = []
    visibility: dict[str, ToolVisibility] = {}
    for t in params.function_tools:
        if t.unless_native and t.unless_native in kept_ids:
            continue  # its native tool goes instead
        if t.with_native is not None and t.with_native not in kept_ids:
            t = dataclasses.replace(t, with_native=None)  # a member of a search that is not sent is no member
        visibility[t.name] = _visibility(
            t, t.name in params.revealed_tool_names, can_defer, search_sent=search_sent, additions=with_definitions
        )
        function_tools.append(t)
    if not kept and not params.output_tools and 'visible' not in visibility.values():
        _declare_lone_newcomers(function_tools, visibility, params.revealed_tool_names)
    return dataclasses.replace(params, native_tools=kept, function_tools=function_tools, tool_visibility=visibility)


def _visibility(
    tool: ToolDefinition, revealed: bool, can_defer: bool, *, search_sent: bool, additions: bool
) -> ToolVisibility:
    """How `tool` reaches the provider, by pydantic-ai 2.68's table. A tool neither hidden (`defer_loading`) nor
    added mid-run is shown. A hidden one is held back for the search that covers it; once revealed, it goes through
    the history (`additions`), held back, or shown; before, it is withheld next to a search or where additions go by
    the history, and declared held back (to be revealed by reference) where schemas can be held back."""
    if not (tool.defer_loading or revealed):  # (a tool shown from the start, or revealed: one that came mid-run)
        return 'visible'
    if tool.with_native is not None and can_defer:
        return 'deferred'
    if revealed:
        return 'via_history' if additions else 'deferred' if can_defer else 'visible'
    if tool.with_native is not None or search_sent or additions or not can_defer:
        return 'withheld'
    return 'deferred'


def resolve_model_tools(
    params: ModelRequestParameters,
    supported: SupportedNativeTools,
    tool_deferral_mode: ToolDeferralMode | None = None,
    tool_addition_mode: ToolAdditionMode | None = None,
) -> ModelRequestParameters:
    """`resolve_request_tools` for a model of this `tool_deferral_mode` and `tool_addition_mode` (its class renders
    them). A model holds a schema back next to a kept `ToolSearchTool`; on its own too (`'standalone'`) only when
    it can also announce the tool natively later, and a revealed tool stays held back only then: a model that
    cannot is sent a revealed tool as it is (the run announces it in the history). A hidden tool marked neither for
    a search (`with_native`) nor by a capability, as parameters written by hand hold, is taken as the search's."""
    tools = params.function_tools
    if not params.native_tools and not params.revealed_tool_names:
        if not tools:  # (an agent without tools)
            return _with_visibility(params, {})
        if not any(t.unless_native or t.defer_loading for t in tools):
            # nothing native, hidden or revealed (most requests): every function tool goes as it is
            return _with_visibility(params, dict.fromkeys([t.name for t in tools], 'visible'))
    can_withhold: SchemaWithholding | None = None
    if tool_deferral_mode == 'standalone' and tool_addition_mode is not None:
        can_withhold = _always
    elif tool_deferral_mode is not None:
        can_withhold = _with_search
    return _resolve(params, supported, can_withhold, tool_addition_mode)


def _always(natives: Sequence[AbstractNativeTool]) -> bool:
    return True


def _with_search(natives: Sequence[AbstractNativeTool]) -> bool:
    return any(isinstance(t, ToolSearchTool) for t in natives)


def _resolve(
    params: ModelRequestParameters,
    supported: SupportedNativeTools,
    can_withhold: SchemaWithholding | None,
    tool_addition_mode: ToolAdditionMode | None,
) -> ModelRequestParameters:
    """`resolve_model_tools`' table, past its fast path (where it differs from 2.68's, see its docstring)."""
    defer_revealed = tool_addition_mode is not None
    kept, can_defer = _kept_native_tools(params, supported, None, can_withhold)
    kept_ids = {t.unique_id for t in kept}
    search_sent = any(isinstance(t, ToolSearchTool) for t in kept)
    with_definitions = tool_addition_mode == 'with_definitions'
    revealed_names = params.revealed_tool_names
    function_tools: list[ToolDefinition] = []
    visibility: dict[str, ToolVisibility] = {}
    for t in params.function_tools:
        if t.unless_native and t.unless_native in kept_ids:
            continue  # its native tool goes instead
        if t.with_native is not None:
            covered = t.with_native in kept_ids
        else:
            covered = search_sent and t.defer_loading and t.capability_id is None
        seen: ToolVisibility
        if covered and can_defer:
            seen = 'deferred'
            if not t.defer_loading:  # found already: still the search's (the provider tracks what it found)
                t = dataclasses.replace(t, defer_loading=True)
        elif t.name in revealed_names:
            seen = 'via_history' if with_definitions else 'deferred' if can_defer and defer_revealed else 'visible'
        elif not t.defer_loading:
            seen = 'visible'
        elif covered or search_sent or with_definitions or not can_defer:
            # hidden: a provider-run search indexes the request's held-back tools, so none outside its reach goes
            seen = 'withheld'
        else:
            seen = 'deferred'  # declared from the first request, to be revealed by reference
        function_tools.append(t)
        visibility[t.name] = seen
    if not kept and not params.output_tools and 'visible' not in visibility.values():
        _declare_lone_newcomers(function_tools, visibility, revealed_names)
    if kept == params.native_tools and function_tools == params.function_tools:
        if visibility == params.tool_visibility:
            return params
        return _with_visibility(params, visibility)
    return dataclasses.replace(params, native_tools=kept, function_tools=function_tools, tool_visibility=visibility)


def _declare_lone_newcomers(
    tools: list[ToolDefinition], visibility: dict[str, ToolVisibility], revealed_names: set[str]
) -> None:
    """Declare the tools that came mid-run (revealed, and never hidden by a search or a capability) `'visible'` in a
    request that would declare no tool otherwise: there is no tools section to keep stable, and a request of
    held-back tools only is refused by some providers."""
    for t in tools:
        if (
            t.name in revealed_names
            and not t.defer_loading
            and t.capability_id is None
            and t.with_native is None
            and visibility[t.name] != 'withheld'
        ):
            visibility[t.name] = 'visible'


def _with_visibility(params: ModelRequestParameters, visibility: dict[str, ToolVisibility]) -> ModelRequestParameters:
    """`dataclasses.replace(params, tool_visibility=visibility)` without its `__init__` (every request of a run comes
    here): a shallow copy, as `replace` makes, whose cached `tool_defs` still holds (the same tools)."""
    resolved: ModelRequestParameters = object.__new__(type(params))
    resolved.__dict__.update(params.__dict__)
    resolved.tool_visibility = visibility
    return resolved
