"""Which provider-run tools ("native" tools) a model takes, and the check of a request's native tools against them:
duplicates dropped, optional tools the model cannot run left out, tools with a local fallback swapped for it (the
function tools marked `unless_native`, which `NativeOrLocalTool` capabilities add), the others a `UserError`.

The same check settles the provider-run tool search: the function tools a tool search covers (`with_native=
'tool_search'`) that no search has found yet (`defer_loading=True`) go to the provider with their schemas held back
when it runs the search (`ToolSearchTool`) and takes such tools (the model's `tool_deferral_mode`), and are left out
of the request otherwise; an optional `ToolSearchTool` with nothing to search is left out.

`resolve_request_tools` then records the outcome per function tool in `ModelRequestParameters.tool_visibility`,
which the providers' request mappings read: a tool marked `defer_loading` goes `'deferred'` next to a kept
`ToolSearchTool` (a found one of the search's too: the provider keeps track of what it found), a hidden tool of the
search that was left out is `'withheld'`, and every other function tool is `'visible'` (sent as it is)."""

from __future__ import annotations as _annotations

import dataclasses
from collections.abc import Callable, Iterable

from .._messages.tool_parts import TOOL_SEARCH_NATIVE_KIND
from .._tools.definition import ToolDefinition
from ..exceptions import UserError
from ..native_tools import AbstractNativeTool
from ..native_tools._tool_search import ToolSearchTool
from ..profiles import ToolDeferralMode
from ._request_parameters import ModelRequestParameters, ToolVisibility

__all__ = ('check_native_tools', 'resolve_request_tools')


def check_native_tools(
    params: ModelRequestParameters,
    supported: Iterable[type[AbstractNativeTool]] | Callable[[], Iterable[type[AbstractNativeTool]]],
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
    fallback_ids = {t.unless_native for t in params.function_tools if t.unless_native}
    if not params.native_tools and not fallback_ids:
        return params
    # (`supported` may be a function, so that a request without native tools never works out the set)
    supported_types = tuple(supported() if callable(supported) else supported)
    unique = list({tool.unique_id: tool for tool in params.native_tools}.values())
    unsupported = [
        t for t in unique if not isinstance(t, supported_types) and not t.optional and t.unique_id not in fallback_ids
    ]
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
    # back (then the agent's own `search_tools` stays).
    can_defer = tool_deferral_mode is not None
    corpus_ids = {t.with_native for t in params.function_tools if t.with_native}
    kept = [
        t
        for t in unique
        if isinstance(t, supported_types)
        and not (isinstance(t, ToolSearchTool) and t.optional and (t.unique_id not in corpus_ids or not can_defer))
    ]
    kept_ids = {t.unique_id for t in kept}
    searched = can_defer and TOOL_SEARCH_NATIVE_KIND in kept_ids
    function_tools: list[ToolDefinition] = []
    for t in params.function_tools:
        if t.unless_native in kept_ids:
            continue
        if t.with_native == TOOL_SEARCH_NATIVE_KIND:
            if searched and not t.defer_loading:
                # found already: still the search's (the provider tracks what it found), as in pydantic-ai 2.x
                t = dataclasses.replace(t, defer_loading=True)
            elif t.defer_loading and not searched:
                continue  # hidden from the model until the agent's own search finds it
        function_tools.append(t)
    if kept == params.native_tools and function_tools == params.function_tools:
        return params
    return dataclasses.replace(params, native_tools=kept, function_tools=function_tools)


def resolve_request_tools(
    params: ModelRequestParameters,
    supported: Iterable[type[AbstractNativeTool]] | Callable[[], Iterable[type[AbstractNativeTool]]],
    tool_deferral_mode: ToolDeferralMode | None = None,
) -> ModelRequestParameters:
    """`params` checked by `check_native_tools`, with the `tool_visibility` of every function tool (see the module
    docstring); `params` itself when it is resolved already.

    Raises:
        UserError: a tool the model does not support is neither optional nor given a local fallback.
    """
    if (
        not params.native_tools
        and params.tool_visibility is None
        and not any(t.unless_native for t in params.function_tools)
    ):  # nothing native and no fallbacks (most requests): every function tool goes as it is
        return _with_visibility(params, {t.name: 'visible' for t in params.function_tools})
    checked = check_native_tools(params, supported, tool_deferral_mode)
    searched = any(isinstance(t, ToolSearchTool) for t in checked.native_tools)
    visibility: dict[str, ToolVisibility] = {
        t.name: 'deferred' if searched and t.defer_loading else 'visible' for t in checked.function_tools
    }
    kept_ids = {t.unique_id for t in checked.native_tools}
    for t in params.function_tools:
        # the check left out a local fallback (no entry: its native tool goes instead) or a hidden tool of the search
        if t.name not in visibility and t.unless_native not in kept_ids:
            visibility[t.name] = 'withheld'
    # parameters resolved before keep the hidden tools they left out
    for name, earlier in (params.tool_visibility or {}).items():
        if earlier == 'withheld':
            visibility.setdefault(name, earlier)
    if visibility == checked.tool_visibility:
        return checked
    return _with_visibility(checked, visibility)


def _with_visibility(params: ModelRequestParameters, visibility: dict[str, ToolVisibility]) -> ModelRequestParameters:
    """`dataclasses.replace(params, tool_visibility=visibility)` without its `__init__` (every request of a run comes
    here): a shallow copy, as `replace` makes, whose cached `tool_defs` still holds (the same tools)."""
    resolved: ModelRequestParameters = object.__new__(type(params))
    resolved.__dict__.update(params.__dict__)
    resolved.tool_visibility = visibility
    return resolved
