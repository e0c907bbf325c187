"""What the client does when an MCP server asks: completions from a model (sampling), log messages forwarded."""

from __future__ import annotations as _annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import pydantic
from mcp import types as mcp_types

from ..models import Model
from ..models._request_parameters import ModelRequestParameters
from ..settings import ModelSettings
from ._connection import MCPRequestError
from ._mapping import sampling_messages, sampling_result

__all__ = ('LogHandler', 'forward_log', 'sample')

LogHandler = Callable[[mcp_types.LoggingMessageNotificationParams], Awaitable[None]]
"""Receives the server's log messages (`notifications/message`)."""

_logger = logging.getLogger('edgewise.agent.mcp')
_LOG_LEVELS = {
    'debug': logging.DEBUG,
    'info': logging.INFO,
    'notice': logging.INFO,
    'warning': logging.WARNING,
    'error': logging.ERROR,
    'critical': logging.CRITICAL,
    'alert': logging.CRITICAL,
    'emergency': logging.CRITICAL,
}
_LEVEL_ORDER = {level: rank for rank, level in enumerate(_LOG_LEVELS)}
_INVALID_REQUEST = -32600
_INVALID_PARAMS = -32602


async def sample(model: Model | None, raw_params: dict[str, Any]) -> dict[str, Any]:
    """The answer to a `sampling/createMessage` request: `model`'s completion of the server's messages.

    Raises:
        MCPRequestError: there is no model to ask, or the request holds content the model cannot be given.
    """
    if model is None:
        raise MCPRequestError(
            'sampling is not available: no `sampling_model` is set and no agent run uses this server', _INVALID_REQUEST
        )
    params = mcp_types.CreateMessageRequestParams.model_validate(raw_params)
    try:
        messages = sampling_messages(params)
    except ValueError as e:
        raise MCPRequestError(str(e), _INVALID_PARAMS) from e
    settings = ModelSettings(max_tokens=params.maxTokens)
    if params.temperature is not None:
        settings['temperature'] = params.temperature
    if params.stopSequences is not None:
        settings['stop_sequences'] = params.stopSequences
    response = await model.request(messages, settings, ModelRequestParameters())
    return sampling_result(response, model.model_name)


async def forward_log(
    label: str,
    raw_params: dict[str, Any],
    log_level: mcp_types.LoggingLevel | None,
    log_handler: LogHandler | None,
) -> None:
    """Hand a `notifications/message` of the server `label` to `log_handler`, else to the `edgewise.agent.mcp`
    logger; messages below `log_level` and malformed ones are dropped, and a failing handler is logged."""
    try:
        message = mcp_types.LoggingMessageNotificationParams.model_validate(raw_params)
    except pydantic.ValidationError:
        return
    if log_level is not None and _LEVEL_ORDER[message.level] < _LEVEL_ORDER[log_level]:
        return  # below the level asked for (a server without the logging capability sends all)
    try:
        if log_handler is not None:
            await log_handler(message)
        else:
            source = f' ({message.logger})' if message.logger else ''
            _logger.log(
                _LOG_LEVELS.get(message.level, logging.INFO), 'MCP server %s%s: %s', label, source, message.data
            )
    except Exception:
        _logger.exception('The log handler of MCP server %s failed', label)
