"""Which provider-run tools ("native" tools) a model takes, and the check of a request's native tools against them:
duplicates dropped, optional tools the model cannot run left out, tools with a local fallback swapped for it (the
function tools marked `unless_native`, which `NativeOrLocalTool` capabilities add), the others a `UserError`."""

from __future__ import annotations as _annotations

import dataclasses
from collections.abc import Iterable

from ..exceptions import UserError
from ..native_tools import AbstractNativeTool
from ._request_parameters import ModelRequestParameters

__all__ = ('check_native_tools',)


def check_native_tools(
    params: ModelRequestParameters, supported: Iterable[type[AbstractNativeTool]]
) -> ModelRequestParameters:
    """`params` with its native tools deduplicated (by `unique_id`, the last one kept), those the model does not
    support left out when they are optional or have a local fallback, and the local fallbacks of those it supports
    left out.

    A local fallback is a function tool whose `unless_native` is the `unique_id` of a native tool: the model is sent
    the native tool when it can run it, else the function tool.

    Raises:
        UserError: a tool the model does not support is neither optional nor given a local fallback.
    """
    fallback_ids = {t.unless_native for t in params.function_tools if t.unless_native}
    if not params.native_tools and not fallback_ids:
        return params
    supported_types = tuple(supported)
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
    kept = [t for t in unique if isinstance(t, supported_types)]
    kept_ids = {t.unique_id for t in kept}
    function_tools = [t for t in params.function_tools if t.unless_native not in kept_ids]
    if kept == params.native_tools and len(function_tools) == len(params.function_tools):
        return params
    return dataclasses.replace(params, native_tools=kept, function_tools=function_tools)
