"""Which provider-run tools ("native" tools) a model takes, and the check of a request's native tools against them:
duplicates dropped, optional tools the model cannot run left out, the others a `UserError`."""

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
    """`params` with its native tools deduplicated (by `unique_id`, the last one kept) and the optional ones the
    model does not support left out.

    Raises:
        UserError: a tool that is not optional is not supported by the model.
    """
    if not params.native_tools:
        return params
    supported_types = tuple(supported)
    unique = list({tool.unique_id: tool for tool in params.native_tools}.values())
    unsupported = [t for t in unique if not isinstance(t, supported_types) and not t.optional]
    if unsupported:
        names = [type(t).__name__ for t in unsupported]
        raise UserError(
            f'Native tool(s) {names} not supported by this model. '
            f'Supported: {[t.__name__ for t in supported_types]}. '
            'Mark a tool `optional=True` to leave it out of requests to models that cannot run it.'
        )
    kept = [t for t in unique if isinstance(t, supported_types)]
    if kept == params.native_tools:
        return params
    return dataclasses.replace(params, native_tools=kept)
