"""Which category of `ModelAPIError` a provider's failure belongs to: by HTTP status, by the provider's error code,
type and message, and, for a transport failure, by the stage of the request where it happened.

Data and small functions only; `_http` raises what these build, and each provider model names its own
`http_error` builder (OpenAI's, Anthropic's, Gemini's), whether the error came as a status or inside a stream.
"""

from __future__ import annotations as _annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..exceptions import (
    HTTPErrorCategory,
    ModelAPIError,
    ModelAuthenticationError,
    ModelConnectionError,
    ModelContextWindowExceededError,
    ModelHTTPError,
    ModelNotFoundError,
    ModelOverloadedError,
    ModelQuotaExceededError,
    ModelRateLimitError,
    ModelRequestRejectedError,
    ModelServerError,
    ModelTimeoutError,
    ModelUnavailableError,
    TransportPhase,
)

__all__ = (
    'anthropic_http_error',
    'anthropic_stream_error',
    'connection_error',
    'generic_http_error',
    'google_http_error',
    'http_status_category',
    'openai_http_error',
    'openai_stream_error',
    'redact',
    'says_overloaded',
    'secret_values',
    'transport_phase',
)


def says_overloaded(*texts: object) -> bool:
    """Whether an error code, type or message says the provider is overloaded (`'overloaded_error'`)."""
    return any(
        isinstance(text, str) and ('overloaded' in text.lower() or 'over capacity' in text.lower()) for text in texts
    )


def http_status_category(status_code: int, message: object = None) -> HTTPErrorCategory | None:
    """The category an HTTP status gives on its own (a 503 that says overloaded is a `ModelOverloadedError`)."""
    if status_code in (401, 403):
        return ModelAuthenticationError
    if status_code == 404:
        return ModelNotFoundError
    if status_code in (400, 422):
        return ModelRequestRejectedError
    if status_code == 402:
        return ModelQuotaExceededError
    if status_code == 429:
        return ModelRateLimitError
    if status_code == 529:
        return ModelOverloadedError
    if status_code == 503:
        return ModelOverloadedError if says_overloaded(message) else ModelUnavailableError
    if 500 <= status_code < 600:
        return ModelServerError
    return None


def _text(mapping: object, key: str) -> str | None:
    value = mapping.get(key) if isinstance(mapping, dict) else None
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return value if isinstance(value, str) else None


def generic_http_error(
    status_code: int, model_name: str, body: object, headers: Mapping[str, str] | None, *, in_stream: bool = False
) -> ModelHTTPError:
    """The error of a status from an API whose error bodies are not known: categorized by the status alone."""
    return ModelHTTPError.for_category(
        http_status_category(status_code, body if isinstance(body, str) else None),
        status_code=status_code,
        model_name=model_name,
        body=body,
        headers=headers,
        in_stream=in_stream,
    )


# OpenAI and the APIs that copy its error objects (`{"error": {"code", "type", "message"}}`).

_QUOTA_CODES = frozenset(
    {
        'insufficient_quota',
        'billing_hard_limit_reached',
        'credit_balance_exhausted',
        'organization_spend_limit_exceeded',
        'project_spend_limit_exceeded',
        'organization_usage_limit_exceeded',
    }
)
"""OpenAI's codes for an exhausted quota or spend limit, sent with a 429 like a rate limit."""

_OPENAI_STATUSES: dict[str, int] = {
    'rate_limit_exceeded': 429,
    'rate_limit_error': 429,
    'too_many_requests': 429,
    **dict.fromkeys(_QUOTA_CODES, 429),
    'context_length_exceeded': 400,
    'service_unavailable': 503,
    'service_unavailable_error': 503,
    'server_is_overloaded': 503,
    'overloaded': 503,
    'server_error': 500,
}
"""The status an OpenAI-style API gives an error (by its code or type), for an error reported without one."""

_CONTEXT_WINDOW_PHRASES = ('maximum context length', 'reduce the length of the messages')


def _openai_status(code: str | None, error_type: str | None) -> int | None:
    status = _OPENAI_STATUSES.get(code or '') or _OPENAI_STATUSES.get(error_type or '')
    if status is None and code is not None and code.isdigit() and 400 <= int(code) < 600:
        status = int(code)  # gateways (OpenRouter) send the status itself as the code
    return status


def _openai_category(
    status_code: int | None, code: str | None, error_type: str | None, message: object
) -> HTTPErrorCategory | None:
    if code in _QUOTA_CODES or error_type in _QUOTA_CODES:
        return ModelQuotaExceededError
    if code == 'context_length_exceeded' or (
        isinstance(message, str) and any(phrase in message.lower() for phrase in _CONTEXT_WINDOW_PHRASES)
    ):
        return ModelContextWindowExceededError
    if says_overloaded(code, error_type):
        return ModelOverloadedError
    if code == 'model_not_found':
        return ModelNotFoundError
    if code == 'invalid_api_key':
        return ModelAuthenticationError
    return None if status_code is None else http_status_category(status_code, message)


def openai_http_error(
    status_code: int, model_name: str, body: object, headers: Mapping[str, str] | None, *, in_stream: bool = False
) -> ModelHTTPError:
    """The error of a status from an OpenAI-style API; `body` is the error object (`{"code", "type", "message"}`)."""
    code, error_type = _text(body, 'code'), _text(body, 'type')
    message = body if isinstance(body, str) else _text(body, 'message')  # a body that is not JSON is the message
    return ModelHTTPError.for_category(
        _openai_category(status_code, code, error_type, message),
        status_code=status_code,
        model_name=model_name,
        body=body,
        headers=headers,
        provider_error_code=code,
        provider_error_type=error_type,
        in_stream=in_stream,
    )


def openai_stream_error(model_name: str, message: str, body: object) -> ModelAPIError:
    """The error of an error object inside a stream that began with 200: the status (and category) the same error
    has outside a stream, `in_stream` set; not a `ModelHTTPError` when its code or type gives no clear status."""
    code, error_type = _text(body, 'code'), _text(body, 'type')
    status_code = _openai_status(code, error_type)
    category = _openai_category(status_code, code, error_type, message)
    if status_code is None:
        return (category or ModelAPIError)(
            model_name, message, body=body, provider_error_code=code, provider_error_type=error_type, in_stream=True
        )
    return openai_http_error(status_code, model_name, body, None, in_stream=True)


# Anthropic: `{"type": "error", "error": {"type": "overloaded_error", "message": ...}}`.

_ANTHROPIC_STATUSES = {
    'invalid_request_error': 400,
    'authentication_error': 401,
    'billing_error': 402,
    'permission_error': 403,
    'not_found_error': 404,
    'request_too_large': 413,
    'rate_limit_error': 429,
    'api_error': 500,
    'timeout_error': 504,
    'overloaded_error': 529,
}
"""The status Anthropic gives each error type (an error event in a stream comes after a 200)."""

_ANTHROPIC_CATEGORIES: dict[str, HTTPErrorCategory] = {
    'rate_limit_error': ModelRateLimitError,
    'billing_error': ModelQuotaExceededError,
    'overloaded_error': ModelOverloadedError,
}


def _anthropic_category(error_type: str | None, message: str | None) -> HTTPErrorCategory | None:
    if error_type == 'invalid_request_error' and message is not None:
        if 'prompt is too long' in message.lower():
            return ModelContextWindowExceededError
        if 'credit balance is too low' in message.lower():  # a 400, told apart only by its message
            return ModelQuotaExceededError
    return _ANTHROPIC_CATEGORIES.get(error_type or '')


def anthropic_http_error(
    status_code: int, model_name: str, body: object, headers: Mapping[str, str] | None, *, in_stream: bool = False
) -> ModelHTTPError:
    """The error of a status from Anthropic; `body` is the whole error body."""
    error = body.get('error') if isinstance(body, dict) else None
    error_type, message = _text(error, 'type'), _text(error, 'message')
    return ModelHTTPError.for_category(
        _anthropic_category(error_type, message) or http_status_category(status_code, message),
        status_code=status_code,
        model_name=model_name,
        body=body,
        headers=headers,
        provider_error_type=error_type,
        in_stream=in_stream,
    )


def anthropic_stream_error(model_name: str, body: dict[str, Any]) -> ModelAPIError:
    """The error of an `error` event in a stream: the status its type has outside a stream, `in_stream` set."""
    error = body.get('error')
    error_type, message = _text(error, 'type'), _text(error, 'message')
    status_code = _ANTHROPIC_STATUSES.get(error_type or '')
    if status_code is None:
        category = _anthropic_category(error_type, message) or ModelAPIError
        text = f'Model {model_name!r} stream failed: {error_type or "error"}: {message or ""}'
        return category(model_name, text, body=body, provider_error_type=error_type, in_stream=True)
    return anthropic_http_error(status_code, model_name, body, None, in_stream=True)


# Gemini (Google APIs): `{"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "message", "details": [...]}}`.

_GOOGLE_CONTEXT_WINDOW_PHRASES = ('input token count', 'number of tokens allowed')


def _google_details(body: object) -> list[dict[str, Any]]:
    error = body.get('error') if isinstance(body, dict) else None
    details = error.get('details') if isinstance(error, dict) else None
    return [d for d in details if isinstance(d, dict)] if isinstance(details, list) else []


def _google_daily_quota(body: object) -> bool:
    """Whether a `QuotaFailure` names a daily quota (`...PerDay...`): it resets at midnight, waiting does not help."""
    for detail in _google_details(body):
        violations = detail.get('violations')
        for violation in violations if isinstance(violations, list) else ():
            if isinstance(violation, dict) and 'PerDay' in str(violation.get('quotaId', '')):
                return True
    return False


def _google_category(status: str | None, message: str | None, body: object) -> HTTPErrorCategory | None:
    if any(detail.get('reason') == 'API_KEY_INVALID' for detail in _google_details(body)):
        return ModelAuthenticationError
    lowered = (message or '').lower()
    if status == 'RESOURCE_EXHAUSTED':
        return ModelQuotaExceededError if _google_daily_quota(body) else ModelRateLimitError
    if status == 'FAILED_PRECONDITION' and 'billing' in lowered:
        return ModelQuotaExceededError
    if status == 'UNAVAILABLE':
        return ModelOverloadedError if says_overloaded(message) else ModelUnavailableError
    if status == 'INTERNAL':
        return ModelServerError
    if status == 'INVALID_ARGUMENT':
        if any(phrase in lowered for phrase in _GOOGLE_CONTEXT_WINDOW_PHRASES):
            return ModelContextWindowExceededError
        return ModelRequestRejectedError
    if status in ('UNAUTHENTICATED', 'PERMISSION_DENIED'):
        return ModelAuthenticationError
    if status == 'NOT_FOUND':
        return ModelNotFoundError
    return None


def _google_retry_delay(body: object) -> float | None:
    """The wait of a `RetryInfo` detail (`'14s'`), which Gemini sends in place of a `Retry-After` header."""
    for detail in _google_details(body):
        raw = detail.get('retryDelay')
        if isinstance(raw, str) and raw.endswith('s'):
            try:
                seconds = float(raw[:-1])
            except ValueError:
                continue
            if 0 <= seconds < float('inf'):
                return seconds
    return None


def google_http_error(
    status_code: int, model_name: str, body: object, headers: Mapping[str, str] | None, *, in_stream: bool = False
) -> ModelHTTPError:
    """The error of a status from the Gemini API; `body` is the whole error body."""
    error = body.get('error') if isinstance(body, dict) else None
    status, message = _text(error, 'status'), _text(error, 'message')
    error_obj = ModelHTTPError.for_category(
        _google_category(status, message, body) or http_status_category(status_code, message),
        status_code=status_code,
        model_name=model_name,
        body=body,
        headers=headers,
        provider_error_code=status,
        in_stream=in_stream,
    )
    if error_obj.retry_after is None:
        error_obj.retry_after = _google_retry_delay(body)
    return error_obj


# Transport failures.

_HTTPX_PHASES: dict[str, TransportPhase] = {
    'PoolTimeout': 'pool',
    'ConnectTimeout': 'connect',
    'ConnectError': 'connect',
    'WriteTimeout': 'write',
    'WriteError': 'write',
    'ReadTimeout': 'read',
    'ReadError': 'read',
    'RemoteProtocolError': 'read',
}


def transport_phase(error: BaseException) -> TransportPhase | None:
    """Where an httpx transport error happened (by its class, or a class of its `__cause__` chain)."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        for cls in type(current).__mro__:
            if cls.__module__.partition('.')[0] == 'httpx' and (phase := _HTTPX_PHASES.get(cls.__name__)):
                return phase
        current = current.__cause__
    return None


def connection_error(
    model_name: str, message: str, error: BaseException, *, timeout: bool, phase: TransportPhase | None = None
) -> ModelConnectionError:
    """A `ModelConnectionError` (`ModelTimeoutError` for a timeout) for a transport `error`, with its phase."""
    error_class = ModelTimeoutError if timeout else ModelConnectionError
    return error_class(model_name, message, phase=phase or transport_phase(error))


# Secrets an error body may echo.

_SECRET_HEADERS = ('authorization', 'x-api-key', 'x-goog-api-key', 'api-key', 'x-amz-security-token')


def secret_values(headers: Mapping[str, str]) -> tuple[str, ...]:
    """The credentials among a request's headers (the key of `Authorization: Bearer KEY`), to keep out of errors."""
    secrets = []
    for name, value in headers.items():
        if name.lower() in _SECRET_HEADERS and value:
            scheme, _, rest = value.partition(' ')
            secrets.append(rest if rest and scheme.lower() in ('bearer', 'basic', 'token') else value)
    return tuple(secret for secret in secrets if len(secret) >= 4)


def redact(value: Any, secrets: Iterable[str]) -> Any:
    """`value` (an error body: JSON data or text) with every secret replaced by `'***'`."""
    secrets = tuple(secrets)
    if not secrets:
        return value
    if isinstance(value, str):
        for secret in secrets:
            value = value.replace(secret, '***')
        return value
    if isinstance(value, dict):
        return {redact(k, secrets): redact(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(item, secrets) for item in value]
    return value
