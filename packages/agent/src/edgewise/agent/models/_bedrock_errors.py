"""Bedrock's errors: the category of an AWS error code, as an error status or as an exception event in a stream.

An error status names its exception in the `x-amzn-ErrorType` header (`ThrottlingException:http://...`) or the
body's `__type`, with the text in the body's `message`; inside a ConverseStream response the same exceptions come
as event-stream messages (`:exception-type: throttlingException`), which get the status Bedrock documents for them.
"""

from __future__ import annotations as _annotations

from collections.abc import Mapping

from ..exceptions import (
    HTTPErrorCategory,
    ModelAPIError,
    ModelAuthenticationError,
    ModelContextWindowExceededError,
    ModelHTTPError,
    ModelNotFoundError,
    ModelOverloadedError,
    ModelQuotaExceededError,
    ModelRateLimitError,
    ModelServerError,
    ModelUnavailableError,
)
from ._error_categories import http_status_category, says_overloaded

__all__ = ('bedrock_code_category', 'bedrock_error_code', 'bedrock_http_error', 'bedrock_stream_error')

_CONTEXT_WINDOW_PHRASES = ('input is too long', 'input tokens exceeded', 'prompt is too long')
_UNKNOWN_MODEL_MESSAGE = 'The provided model identifier is invalid.'

STREAM_EXCEPTION_STATUSES = {
    'throttlingexception': 429,
    'serviceunavailableexception': 503,
    'internalserverexception': 500,
    'validationexception': 400,
    'modelstreamerrorexception': 424,
    'modeltimeoutexception': 408,
}
"""The status Bedrock documents for each exception event of a response stream."""

_AUTHENTICATION_CODES = frozenset(
    {
        'accessdeniedexception', 'unrecognizedclientexception', 'invalidsignatureexception',
        'expiredtokenexception', 'expiredtoken', 'incompletesignatureexception', 'missingauthenticationtokenexception',
    }
)  # fmt: skip


def bedrock_code_category(code: str | None, message: object) -> HTTPErrorCategory | None:
    """The category of an AWS error code (capitalized in a status's headers, not in a stream), if it has one."""
    lowered = (code or '').lower()
    if lowered == 'throttlingexception':
        return ModelRateLimitError
    if lowered == 'servicequotaexceededexception':
        return ModelQuotaExceededError
    if lowered == 'modelstreamerrorexception':
        return ModelServerError
    if lowered in ('serviceunavailableexception', 'modelnotreadyexception'):
        return ModelOverloadedError if says_overloaded(message) else ModelUnavailableError
    if lowered == 'validationexception' and isinstance(message, str):
        if any(phrase in message.lower() for phrase in _CONTEXT_WINDOW_PHRASES):
            return ModelContextWindowExceededError
        if message == _UNKNOWN_MODEL_MESSAGE:
            return ModelNotFoundError
    if lowered in _AUTHENTICATION_CODES:
        return ModelAuthenticationError
    if lowered == 'resourcenotfoundexception':
        return ModelNotFoundError
    return None


def bedrock_error_code(body: object, headers: Mapping[str, str] | None) -> str | None:
    """The AWS exception name of an error response: from `x-amzn-ErrorType`, else the body's `__type` or `code`."""
    raw = (headers or {}).get('x-amzn-errortype')
    if not raw and isinstance(body, dict):
        raw = body.get('__type') or body.get('code')
    if not isinstance(raw, str) or not raw:
        return None
    return raw.split(':', 1)[0].rsplit('#', 1)[-1]


def _message(body: object) -> str | None:
    if isinstance(body, dict):
        found = body.get('message', body.get('Message'))
        return found if isinstance(found, str) else None
    return body if isinstance(body, str) else None


def bedrock_http_error(
    status_code: int, model_name: str, body: object, headers: Mapping[str, str] | None, *, in_stream: bool = False
) -> ModelHTTPError:
    """The error of a status from Bedrock, of the category its AWS exception names (else its status gives)."""
    code = bedrock_error_code(body, headers)
    message = _message(body)
    return ModelHTTPError.for_category(
        bedrock_code_category(code, message) or http_status_category(status_code, message),
        status_code=status_code,
        model_name=model_name,
        body=body,
        headers=headers,
        provider_error_code=code,
        in_stream=in_stream,
    )


def bedrock_stream_error(model_name: str, exception_type: str | None, body: object) -> ModelAPIError:
    """The error of an exception event in a stream: the status the exception has outside one, `in_stream` set."""
    status_code = STREAM_EXCEPTION_STATUSES.get((exception_type or '').lower())
    if status_code is not None:
        return ModelHTTPError.for_category(
            bedrock_code_category(exception_type, _message(body)) or http_status_category(status_code),
            status_code=status_code,
            model_name=model_name,
            body=body,
            provider_error_code=exception_type,
            in_stream=True,
        )
    category = bedrock_code_category(exception_type, _message(body)) or ModelAPIError
    text = f'Model {model_name!r} stream failed: {exception_type or "error"}: {_message(body) or ""}'
    return category(model_name, text, body=body, provider_error_code=exception_type, in_stream=True)
