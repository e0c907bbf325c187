"""The errors of requests to model providers' APIs: `ModelAPIError`, its categories, and `ModelHTTPError` (with the
private classes that make an HTTP error an instance of its category too). Imported from `edgewise.agent.exceptions`,
whose docstring draws the whole tree."""

from __future__ import annotations as _annotations

from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any, ClassVar, Literal, TypeAlias

from .base import AgentRunError

_ATTACHED_PREFIX = '_edgewise_'
"""Attributes Edgewise attaches to an error on its way (kept when the error is pickled)."""


class ModelAPIError(AgentRunError):
    """A request to a model provider's API failed: the connection dropped, it timed out, or it was refused.

    The models raise one of its categories when the provider says what went wrong (`ModelRateLimitError`,
    `ModelQuotaExceededError`, `ModelUnavailableError`, `ModelServerError`, `ModelConnectionError`,
    `ModelRequestRejectedError`, `ModelRequestTimeout` and their subclasses); an HTTP error status is also a
    `ModelHTTPError`, whatever its category.
    """

    model_name: str
    """The name of the model the request was for."""
    body: object | None
    """The body of the provider's error response or error event, when there is one."""
    provider_error_code: str | None
    """The provider's machine-readable error code (`'rate_limit_exceeded'`, `'RESOURCE_EXHAUSTED'`), if it sent one."""
    provider_error_type: str | None
    """The provider's error type, when it sends one apart from the code (`'overloaded_error'`)."""
    retry_after: float | None
    """How many seconds the provider asked to wait before trying again, if it said (an HTTP error reads its
    `retry-after-ms` or `Retry-After` header; a Gemini error also the `RetryInfo` of its body)."""
    in_stream: bool
    """Whether the provider reported the error inside a stream that had already started with a success status (a
    `ModelHTTPError` then carries the status the same error has before a stream opens)."""

    def __init__(
        self,
        model_name: str,
        message: str,
        *,
        body: object | None = None,
        provider_error_code: str | None = None,
        provider_error_type: str | None = None,
        retry_after: float | None = None,
        in_stream: bool = False,
    ) -> None:
        self.model_name = model_name
        self.body = body
        self.provider_error_code = provider_error_code
        self.provider_error_type = provider_error_type
        self.retry_after = retry_after
        self.in_stream = in_stream
        super().__init__(message)

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.model_name, self.message), self.__getstate__()

    def __getstate__(self) -> dict[str, Any]:
        attached = {key: value for key, value in vars(self).items() if key.startswith(_ATTACHED_PREFIX)}
        return {
            'body': self.body,
            'provider_error_code': self.provider_error_code,
            'provider_error_type': self.provider_error_type,
            'retry_after': self.retry_after,
            'in_stream': self.in_stream,
            **attached,
        }

    def __setstate__(self, state: dict[str, Any] | None) -> None:
        self.__dict__.update(state or {})


class ModelRateLimitError(ModelAPIError):
    """The provider refused the request because a rate limit was reached (an HTTP 429, a `RESOURCE_EXHAUSTED`):
    waiting helps, `retry_after` says how long when the provider said. An exhausted quota is a
    `ModelQuotaExceededError` instead."""


class ModelQuotaExceededError(ModelAPIError):
    """The account's quota, credits or billing is exhausted, as the provider said explicitly (an HTTP 402, OpenAI's
    `insufficient_quota`, Anthropic's `billing_error` or low credit balance, Gemini's daily quota): waiting does
    not help."""


class ModelUnavailableError(ModelAPIError):
    """The provider or model could not serve the request for now (an HTTP 503, an `UNAVAILABLE`)."""


class ModelOverloadedError(ModelUnavailableError):
    """The provider or model could not serve the request because it is overloaded, as it said (an HTTP 529,
    Anthropic's `overloaded_error`, a 503 or `UNAVAILABLE` whose message says overloaded)."""


class ModelServerError(ModelAPIError):
    """The provider failed with a server error of no other category (an HTTP 500, 502, 504, an `INTERNAL`)."""


TransportPhase = Literal['pool', 'connect', 'write', 'read']
"""The stage of a request at which its transport failed (see `ModelConnectionError.phase`)."""

RequestTimeoutSetting: TypeAlias = Literal['request_timeout', 'first_event_timeout']
"""The model setting whose timeout ran out (see `ModelRequestTimeout.setting`)."""


class ModelConnectionError(ModelAPIError):
    """The request did not reach the provider, or its response could not be read (a refused or reset connection, a
    stream cut off); the transport's exception is the `__cause__`. The message names the server (host and port)
    and never a credential."""

    phase: TransportPhase | None
    """Where the transport failed: `'pool'` (waiting for a pooled connection) and `'connect'` (opening one): the
    request was not sent; `'write'` (sending it): it may have been partly sent; `'read'` (reading the response, a
    stream broken off): it was sent, so the provider may have acted on it. `None` when unknown."""

    def __init__(
        self,
        model_name: str,
        message: str,
        *,
        phase: TransportPhase | None = None,
        body: object | None = None,
        provider_error_code: str | None = None,
        provider_error_type: str | None = None,
        retry_after: float | None = None,
        in_stream: bool = False,
    ) -> None:
        self.phase = phase
        super().__init__(
            model_name,
            message,
            body=body,
            provider_error_code=provider_error_code,
            provider_error_type=provider_error_type,
            retry_after=retry_after,
            in_stream=in_stream,
        )

    def __getstate__(self) -> dict[str, Any]:
        return {**super().__getstate__(), 'phase': self.phase}


class ModelTimeoutError(ModelConnectionError):
    """One attempt at the request timed out in the HTTP client (the `timeout` model setting, per attempt); the
    deadline over every attempt, `request_timeout`, raises `ModelRequestTimeout` instead."""


class ModelRequestRejectedError(ModelAPIError):
    """The provider rejected the request itself (an HTTP 400 or 422, an `INVALID_ARGUMENT`), so sending it again
    unchanged will not succeed; its subclasses say why when the provider does. Another model may accept it, so
    `FallbackModel` falls back on it by default."""


class ModelContextWindowExceededError(ModelRequestRejectedError):
    """The input is longer than the model's context window: compact or truncate the history and try again (an
    overflow reported with a 400 is also a `ModelHTTPError` with status 400)."""


class ModelAuthenticationError(ModelRequestRejectedError):
    """The provider rejected the request's credentials or does not allow them this request (an HTTP 401 or 403, an
    `UNAUTHENTICATED`, `PERMISSION_DENIED` or invalid API key): check the key and its access to the model."""


class ModelNotFoundError(ModelRequestRejectedError):
    """The provider does not know the model (or deployment) the request names (an HTTP 404, a `NOT_FOUND`,
    OpenAI's `model_not_found`); a wrong base URL gives it too."""


class ModelRequestTimeout(ModelAPIError):
    """A model request did not finish within its `request_timeout` model setting, or a streamed one produced no event
    within its `first_event_timeout`; `setting` says which. The deadline covers every attempt (retries included)
    and, for a stream, reading it to its last event."""

    timeout: float
    """The timeout that ran out, in seconds."""
    setting: RequestTimeoutSetting
    """The model setting whose timeout ran out."""

    def __init__(self, model_name: str, timeout: float, *, setting: RequestTimeoutSetting = 'request_timeout') -> None:
        self.timeout = timeout
        self.setting = setting
        super().__init__(model_name, _request_timeout_message(model_name, timeout, setting))

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.model_name, self.timeout), self.__getstate__()

    def __getstate__(self) -> dict[str, Any]:
        return {**super().__getstate__(), 'setting': self.setting}

    def __setstate__(self, state: dict[str, Any] | None) -> None:
        super().__setstate__(state)
        self.message = _request_timeout_message(self.model_name, self.timeout, self.setting)
        self.args = (self.message,)


def _request_timeout_message(model_name: str, timeout: float, setting: RequestTimeoutSetting) -> str:
    message = f'Request to model {model_name!r} timed out after {timeout:g} seconds'
    return message + (' without producing any output' if setting == 'first_event_timeout' else '')


HTTPErrorCategory: TypeAlias = type[
    ModelRateLimitError | ModelQuotaExceededError | ModelUnavailableError | ModelServerError | ModelRequestRejectedError
]
"""An error category an HTTP error can also belong to (see `ModelHTTPError.for_category`)."""


class ModelHTTPError(ModelAPIError):
    """A model provider answered with an HTTP status of 400 or more (after any retries).

    An error of a category is an instance of the category too: `except ModelRateLimitError` catches a 429, and
    `except ModelHTTPError` still does. An error reported inside an open stream carries the status the provider
    gives the same error outside a stream, with `in_stream` set.
    """

    status_code: int
    """The HTTP status of the response."""
    headers: dict[str, str] | None
    """The response's headers, names in lower case (`error.headers.get('retry-after')`); `None` when the error
    did not come with headers (an error reported inside a stream, say)."""
    suggested_model_id: str | None
    """A known model id close to the one the provider rejected as unknown (`'openai:gpt-5'` for `'gpt-5x'`), named
    in the message as a hint; `None` when there is no such suggestion."""
    hint: str | None
    """What to do about the error, added to the message."""

    def __init__(
        self,
        status_code: int,
        model_name: str,
        body: object | None = None,
        *,
        headers: Mapping[str, str] | None = None,
        suggested_model_id: str | None = None,
        hint: str | None = None,
        provider_error_code: str | None = None,
        provider_error_type: str | None = None,
        retry_after: float | None = None,
        in_stream: bool = False,
    ) -> None:
        self.status_code = status_code
        self.headers = None if headers is None else {name.lower(): value for name, value in headers.items()}
        self.suggested_model_id = suggested_model_id
        self.hint = hint
        super().__init__(
            model_name,
            f'status_code: {status_code}, model_name: {model_name}, body: {body}',
            body=body,
            provider_error_code=provider_error_code,
            provider_error_type=provider_error_type,
            retry_after=retry_after if retry_after is not None else _retry_after(self.headers),
            in_stream=in_stream,
        )
        self._add_suggestion()

    def _add_suggestion(self) -> None:
        if self.suggested_model_id is not None:
            self.message += f'. Did you mean {self.suggested_model_id!r}?'
        if self.hint is not None:
            self.message += f'. {self.hint}'
        self.args = (self.message,)

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.status_code, self.model_name, self.body), self.__getstate__()

    def __getstate__(self) -> dict[str, Any]:
        own = {'headers': self.headers, 'suggested_model_id': self.suggested_model_id, 'hint': self.hint}
        return {**super().__getstate__(), **own}

    def __setstate__(self, state: dict[str, Any] | None) -> None:
        state = state or {}
        super().__setstate__(state)
        self.headers = state.get('headers')
        if 'retry_after' not in state:  # pickled by an earlier version, which kept only the headers
            self.retry_after = _retry_after(self.headers)
        # The constructor ran without the suggestion and the hint (pickle passes only the positional arguments).
        self.suggested_model_id = state.get('suggested_model_id')
        self.hint = state.get('hint')
        self._add_suggestion()

    @staticmethod
    def for_category(
        category: HTTPErrorCategory | None,
        *,
        status_code: int,
        model_name: str,
        body: object | None = None,
        headers: Mapping[str, str] | None = None,
        suggested_model_id: str | None = None,
        hint: str | None = None,
        provider_error_code: str | None = None,
        provider_error_type: str | None = None,
        retry_after: float | None = None,
        in_stream: bool = False,
    ) -> ModelHTTPError:
        """A `ModelHTTPError` that is also an instance of `category` (or a plain one for `None`), as the models
        raise them; for a custom model or a test.

        Raises:
            TypeError: `category` is not a category an HTTP error can belong to (`ModelConnectionError`, say).
        """
        if category is None:
            error_class: type[ModelHTTPError] = ModelHTTPError
        elif (found := _HTTP_CATEGORY_CLASSES.get(category)) is None:
            raise TypeError(f'{category.__name__} is not an error category an HTTP error can belong to.')
        else:
            error_class = found
        return error_class(
            status_code,
            model_name,
            body,
            headers=headers,
            suggested_model_id=suggested_model_id,
            hint=hint,
            provider_error_code=provider_error_code,
            provider_error_type=provider_error_type,
            retry_after=retry_after,
            in_stream=in_stream,
        )

    @property
    def provider_retry_hint(self) -> bool | None:
        """Whether the provider said another attempt may succeed (its `x-should-retry` header, which OpenAI and
        Anthropic send): `None` without the header or with a value other than `true` and `false`."""
        value = (self.headers or {}).get('x-should-retry', '').strip().lower()
        return {'true': True, 'false': False}.get(value)


class _CategorizedHTTPError(ModelHTTPError):
    """The private classes `ModelHTTPError.for_category` makes: each a `ModelHTTPError` and one category, named as
    the category (so tracebacks and reprs read `ModelRateLimitError`). Catch the category or `ModelHTTPError`."""

    category: ClassVar[type[ModelAPIError]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.category = cls.__bases__[1]
        cls.__name__ = cls.category.__name__
        cls.__qualname__ = cls.category.__qualname__

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickle would look the class up by its (borrowed) name: rebuild it from its category instead.
        arguments = (self.category, self.status_code, self.model_name, self.body)
        return _categorized_http_error, arguments, self.__getstate__()


def _categorized_http_error(
    category: type[ModelAPIError], status_code: int, model_name: str, body: object | None
) -> ModelHTTPError:
    return _HTTP_CATEGORY_CLASSES[category](status_code, model_name, body)


def _categorized(category: type[ModelAPIError]) -> type[_CategorizedHTTPError]:
    return type(f'_HTTP{category.__name__}', (_CategorizedHTTPError, category), {'__module__': __name__})


_HTTP_CATEGORY_CLASSES: dict[type[ModelAPIError], type[_CategorizedHTTPError]] = {
    category: _categorized(category)
    for category in (
        ModelRateLimitError,
        ModelQuotaExceededError,
        ModelUnavailableError,
        ModelOverloadedError,
        ModelServerError,
        ModelRequestRejectedError,
        ModelContextWindowExceededError,
        ModelAuthenticationError,
        ModelNotFoundError,
    )
}


def _retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait from `retry-after-ms` (milliseconds, as OpenAI and Anthropic send it) or `Retry-After` (a
    number of seconds, or an HTTP date: the time left until then, at least 0); names in lower case."""
    if headers is None:
        return None
    if (milliseconds := headers.get('retry-after-ms')) is not None:
        try:
            value = float(milliseconds)
        except ValueError:
            value = -1.0
        if 0 <= value < float('inf'):
            return value / 1000
    raw = headers.get('retry-after')
    if raw is None:
        return None
    try:
        seconds = float(int(raw))
    except ValueError:
        pass
    except OverflowError:  # more seconds than a float holds: no usable wait
        return None
    else:
        return seconds if seconds >= 0 else None
    from email.utils import parsedate_to_datetime  # only for this rare form

    try:
        when = parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:  # the asctime form of an HTTP date has no zone: it is UTC
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - datetime.now(tz=timezone.utc)).total_seconds())
