"""The HTTP layer every provider model shares: one POST with retries, errors, server-sent events and a span.

A provider model builds an `HTTPCall` (where to, what body, which headers) and hands it to `post_json` or
`stream_sse`; this module owns the retry loop, the mapping of failures to `ModelAPIError`s, and the
OpenTelemetry GenAI attributes of the call's span. Nothing here knows any provider's JSON: an error status becomes
the `ModelHTTPError` (of its category) that the call's `http_error` builds from the body, with any credential the
body echoes replaced by `***`; a transport failure becomes a `ModelConnectionError` (a `ModelTimeoutError` when it
timed out) naming the stage of the request where it happened.

Retries follow the official SDKs: up to `max_retries` more attempts on 408, 409, 429 and 5xx statuses,
timeouts and dropped connections, unless the server says otherwise with `x-should-retry`; the wait is the
server's `retry-after-ms` / `Retry-After` when it is between 0 and 60 seconds, else an exponential backoff
with jitter. A stream is retried only until its response has arrived: once events are read, never. An
`httpx.HTTPStatusError` raised by the client itself (a retrying transport that gave up) counts as its response.

httpx is imported by the first call, not with this module (the provider's client imports it anyway), so that
importing a model module stays cheap.
"""

from __future__ import annotations as _annotations

import codecs
import contextlib
import random
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AbstractContextManager, asynccontextmanager, nullcontext
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

import anyio
import pydantic_core

from .. import _instrument
from ..exceptions import ModelAPIError, ModelHTTPError, UnexpectedModelBehavior
from ..messages import ModelResponse
from . import _direct_send
from ._connection_error import connection_error_message
from ._error_categories import connection_error, generic_http_error, redact, secret_values
from ._sse import ServerSentEvent, SSEDecoder

if TYPE_CHECKING:
    from typing import Protocol

    import httpx

    class HTTPErrorBuilder(Protocol):
        """Builds the error of an error status from its (unwrapped) body: the provider's mapping."""

        def __call__(
            self,
            status_code: int,
            model_name: str,
            body: object,
            headers: Mapping[str, str] | None,
            *,
            in_stream: bool = False,
        ) -> ModelHTTPError: ...


__all__ = ('HTTPCall', 'SSEStream', 'post_json', 'stream_sse', 'retry_delay', 'should_retry')

MAX_SERVER_DELAY = 60.0
"""The longest wait asked by a server (`Retry-After`) that is honoured; longer asks fall back to backoff."""
INITIAL_DELAY = 0.5
"""The first backoff delay in seconds; it doubles with every retry."""
MAX_DELAY = 8.0
"""The longest backoff delay in seconds."""


@dataclass(kw_only=True)
class HTTPCall:
    """One call to a provider's API: where it goes, what it sends, and how failures are handled."""

    client: httpx.AsyncClient
    """The provider's client (its connection pool)."""
    url: str
    """The URL, absolute or relative to the client's base URL."""
    body: Mapping[str, Any]
    """The JSON body."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """Headers of this call (authentication among them; they are never logged)."""
    timeout: float | None = None
    """The timeout of each attempt in seconds; the client's own timeout when `None`."""
    model_name: str
    """The model the call is for, named in errors."""
    system: str
    """The provider's name, for spans (`gen_ai.system`)."""
    operation: str = 'chat'
    """The GenAI operation (`gen_ai.operation.name`)."""
    endpoint_name: str = 'API'
    """What the endpoint is called in errors (`'chat completions'`)."""
    max_retries: int = 2
    """How many times a failed attempt is retried."""
    error_key: str | None = None
    """The key of the error object in an error body (`'error'` for OpenAI), unwrapped into `ModelHTTPError.body`."""
    sleep: Callable[[float], Awaitable[None]] = anyio.sleep
    """How to wait between attempts (tests bound it)."""
    base_url: str | None = None
    """The provider's base URL, recorded on the response (`ModelResponse.provider_url`)."""
    http_error: HTTPErrorBuilder = generic_http_error
    """Builds the error of an error status (its category from the provider's error body)."""
    sign: Callable[[httpx.Request], None] | None = None
    """Completes each attempt's request just before it is sent (AWS signs the exact URL, headers and body)."""
    method: str = 'POST'
    """The HTTP method; a `GET` sends no body."""
    content: bytes | None = None
    """A raw body sent instead of the JSON `body` (a file upload), its content type given in `headers`."""


def should_retry(response: httpx.Response) -> bool:
    """Whether a failed response is worth another attempt (the server's `x-should-retry` decides first)."""
    hint = response.headers.get('x-should-retry')
    if hint == 'true':
        return True
    if hint == 'false':
        return False
    return response.status_code in (408, 409, 429) or response.status_code >= 500


def retry_delay(
    retries_done: int, headers: httpx.Headers | None = None, *, jitter: Callable[[], float] = random.random
) -> float:
    """Seconds to wait before retry number `retries_done + 1`: the server's ask if sensible, else backoff.

    Args:
        retries_done: How many retries were made already.
        headers: The failed response's headers, if there was a response.
        jitter: A number in [0, 1) taking up to a quarter off the backoff, so clients do not retry in step.
    """
    if headers is not None:
        asked = _server_delay(headers)
        if asked is not None and 0 <= asked <= MAX_SERVER_DELAY:
            return asked
    backoff: float = min(INITIAL_DELAY * 2.0**retries_done, MAX_DELAY)
    return backoff * (1 - 0.25 * jitter())


def _server_delay(headers: httpx.Headers) -> float | None:
    if (ms := headers.get('retry-after-ms')) is not None:
        try:
            return float(ms) / 1000
        except ValueError:
            pass
    if (value := headers.get('retry-after')) is None:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return (when - datetime.now(tz=timezone.utc)).total_seconds()


def _error_body(response: httpx.Response, error_key: str | None) -> object:
    try:
        body: object = response.json()
    except ValueError:
        return response.text or None
    if error_key is not None and isinstance(body, dict) and error_key in body:
        return body[error_key]
    return body


def _status_error(call: HTTPCall, response: httpx.Response, *, read: bool = True) -> ModelHTTPError:
    body = redact(_error_body(response, call.error_key), secret_values(call.headers)) if read else None
    return call.http_error(response.status_code, call.model_name, body, response.headers)


def _was_read(response: httpx.Response) -> bool:
    import httpx

    try:
        response.content  # noqa: B018 (raises when the body was not read)
    except httpx.ResponseNotRead:
        return False
    return True


async def _send(call: HTTPCall, *, stream: bool) -> tuple[httpx.Response, bytes]:
    """An attempt loop ending in a successful response and its body (unread and empty when `stream`), or an error."""
    import httpx

    if call.method == 'GET':
        content, headers = b'', dict(call.headers)
    elif call.content is not None:
        content, headers = call.content, dict(call.headers)
    else:
        content, headers = pydantic_core.to_json(call.body), {'content-type': 'application/json', **call.headers}
    retries_done = 0
    while True:
        if call.method == 'POST':
            request = _direct_send.build_request(call.client, call.url, content, headers, call.timeout)
        else:
            timeout: Any = httpx.USE_CLIENT_DEFAULT if call.timeout is None else httpx.Timeout(call.timeout)
            request = call.client.build_request(call.method, call.url, headers=headers, timeout=timeout)
        if call.sign is not None:
            call.sign(request)
        try:
            response = await _direct_send.send(call.client, request)
        except httpx.TimeoutException as e:
            if retries_done < call.max_retries:
                await call.sleep(retry_delay(retries_done))
                retries_done += 1
                continue
            if isinstance(e, httpx.ConnectTimeout):  # the server was never reached: say which one
                raise connection_error(call.model_name, connection_error_message(e), e, timeout=True) from e
            raise connection_error(call.model_name, 'Request timed out.', e, timeout=True) from e
        except httpx.TransportError as e:
            if retries_done < call.max_retries:
                await call.sleep(retry_delay(retries_done))
                retries_done += 1
                continue
            raise connection_error(call.model_name, connection_error_message(e), e, timeout=False) from e
        except httpx.HTTPStatusError as e:
            # Raised by the user's client (a retrying transport whose attempts ran out, a response hook calling
            # `raise_for_status`): the answer is handled as a failed answer, its body mostly closed unread.
            response = e.response
            if response.status_code >= 400 and retries_done < call.max_retries and should_retry(response):
                await call.sleep(retry_delay(retries_done, response.headers))
                retries_done += 1
                continue
            if response.status_code < 400:
                raise ModelAPIError(call.model_name, f'Unexpected HTTP status {response.status_code}.') from e
            raise _status_error(call, response, read=_was_read(response)) from e
        if response.is_success:
            if stream:
                return response, b''
            try:
                return response, await _direct_send.read_body(response)
            except httpx.TransportError as e:
                timeout = isinstance(e, httpx.TimeoutException)
                raise connection_error(call.model_name, connection_error_message(e), e, timeout=timeout) from e
        try:
            await response.aread()
        except httpx.TransportError:  # the error body is lost; the status still says what happened
            pass
        finally:
            await response.aclose()
        if response.status_code >= 400 and not (retries_done < call.max_retries and should_retry(response)):
            raise _status_error(call, response)
        if response.status_code < 400:
            raise ModelAPIError(call.model_name, f'Unexpected HTTP status {response.status_code}.')
        await call.sleep(retry_delay(retries_done, response.headers))
        retries_done += 1


def _span(call: HTTPCall) -> AbstractContextManager[Any]:
    if not _instrument.TRACING:
        return nullcontext()
    import httpx

    url = call.client.base_url.join(call.url) if call.client.base_url else httpx.URL(call.url)
    body = call.body
    attributes: dict[str, Any] = {
        'gen_ai.operation.name': call.operation,
        'gen_ai.system': call.system,
        'gen_ai.provider.name': call.system,
        'gen_ai.request.model': call.model_name,
        'server.address': url.host,
        'server.port': url.port or (443 if url.scheme == 'https' else 80),
    }
    for key, name in (
        ('max_tokens', 'max_tokens'),
        ('max_completion_tokens', 'max_tokens'),
        ('temperature', 'temperature'),
        ('top_p', 'top_p'),
        ('seed', 'seed'),
        ('stop', 'stop_sequences'),
    ):
        if (value := body.get(key)) is not None:
            attributes[f'gen_ai.request.{name}'] = value
    return _instrument.span(f'{call.method} {url.path}', **attributes)


def _record(span: Any, response: ModelResponse) -> None:
    if span is None:
        return
    span.set_attribute('gen_ai.response.model', response.model_name or '')
    if response.provider_response_id is not None:
        span.set_attribute('gen_ai.response.id', response.provider_response_id)
    if response.finish_reason is not None:
        span.set_attribute('gen_ai.response.finish_reasons', [response.finish_reason])
    usage = response.usage
    span.set_attribute('gen_ai.usage.input_tokens', usage.input_tokens)
    span.set_attribute('gen_ai.usage.output_tokens', usage.output_tokens)
    if usage.cache_read_tokens:
        span.set_attribute('gen_ai.usage.cache_read.input_tokens', usage.cache_read_tokens)
    if usage.cache_write_tokens:
        span.set_attribute('gen_ai.usage.cache_creation.input_tokens', usage.cache_write_tokens)


async def post_json(call: HTTPCall, parse: Callable[[Any], ModelResponse]) -> ModelResponse:
    """Send the call and turn its JSON answer into a `ModelResponse` with `parse`.

    Raises:
        ModelHTTPError: the provider answered with a status of 400 or more (after retries).
        ModelAPIError: the provider could not be reached, or timed out (after retries).
        UnexpectedModelBehavior: the answer is not JSON.
    """
    with _span(call) as span:
        response, body = await _send(call, stream=False)
        try:
            data = _json(body)
        except ValueError as e:
            raise UnexpectedModelBehavior(
                f'Invalid response from {call.system} {call.endpoint_name} endpoint, expected JSON data',
                body.decode(response.encoding or 'utf-8', errors='replace')[:2000],
            ) from e
        result = parse(data)
        if result.provider_url is None and call.base_url:
            result.provider_url = call.base_url.rstrip('/')
        _record(span, result)
        return result


def _json(body: bytes) -> Any:
    try:
        return pydantic_core.from_json(body)
    except ValueError:
        # JSON in UTF-16 or UTF-32, or after a byte order mark, which `httpx.Response.json` reads too.
        import json

        return json.loads(body)


@dataclass(eq=False)
class SSEStream:
    """The events of a streamed response: `stream.events()`. Errors while reading are `ModelAPIError`s."""

    response: httpx.Response
    """The HTTP response being read."""
    model_name: str
    """The model the call is for, named in errors."""
    _span: Any = None

    async def chunks(self) -> AsyncGenerator[bytes, None]:
        """The body's bytes as they arrive, for a stream that is not server-sent events (AWS's event stream)."""
        import httpx

        chunks = _direct_send.body_chunks(self.response)
        try:
            async for chunk in chunks:
                yield chunk
        except httpx.TimeoutException as e:
            message = 'Request timed out while streaming.'
            raise connection_error(self.model_name, message, e, timeout=True, phase='read') from e
        except httpx.TransportError as e:
            message = connection_error_message(e, while_streaming=True)
            raise connection_error(self.model_name, message, e, timeout=False, phase='read') from e
        finally:
            # Left early: close the response, then run httpx's chain of body generators to its end, so that
            # none is left for the garbage collector (trio warns about those).
            await self.response.aclose()
            with contextlib.suppress(Exception):
                async for _ in chunks:
                    pass

    async def events(self) -> AsyncGenerator[ServerSentEvent, None]:
        """The events, as they arrive (close the iterator, e.g. with `aclosing`, when leaving it early)."""
        decoder = SSEDecoder()
        text = codecs.getincrementaldecoder('utf-8')(errors='replace')  # event streams are always UTF-8
        async with contextlib.aclosing(self.chunks()) as chunks:
            async for chunk in chunks:
                for event in decoder.feed(text.decode(chunk)):
                    yield event
        decoder.feed(text.decode(b'', final=True))  # a character cut off at the very end: no line break, no event
        for event in decoder.flush():
            yield event

    def record(self, response: ModelResponse) -> None:
        """Put the response's model, id, finish reason and usage on the call's span."""
        _record(self._span, response)


@asynccontextmanager
async def stream_sse(call: HTTPCall) -> AsyncIterator[SSEStream]:
    """Send the call as a stream; the body's server-sent events are read in the block, which closes the response.

    Raises:
        ModelHTTPError: the provider answered with a status of 400 or more (after retries).
        ModelAPIError: the provider could not be reached, or timed out (after retries).
    """
    with _span(call) as span:
        response, _ = await _send(call, stream=True)
        try:
            yield SSEStream(response, call.model_name, span)
        finally:
            with anyio.CancelScope(shield=True):
                await response.aclose()


async def send_for_bytes(call: HTTPCall) -> bytes:
    """Send the call and return its answer's raw body (a file's content), with the retries, errors and span of
    `post_json`.

    Raises:
        ModelHTTPError: the provider answered with a status of 400 or more (after retries).
        ModelAPIError: the provider could not be reached, or timed out (after retries).
    """
    with _span(call):
        return (await _send(call, stream=False))[1]


async def post_for_data(call: HTTPCall) -> Any:
    """Send the call and return its JSON answer as data, for an endpoint whose answer is no `ModelResponse` (an
    embeddings endpoint): the same retries, errors and span as `post_json`.

    Raises:
        ModelHTTPError: the provider answered with a status of 400 or more (after retries).
        ModelAPIError: the provider could not be reached, or timed out (after retries).
        UnexpectedModelBehavior: the answer is not JSON.
    """
    return (await post_for_data_and_headers(call))[0]


async def post_for_data_and_headers(call: HTTPCall) -> tuple[Any, httpx.Headers]:
    """`post_for_data`, with the answer's headers (Bedrock reports an embedding's input tokens in one)."""
    with _span(call):
        response, body = await _send(call, stream=False)
        try:
            return _json(body), response.headers
        except ValueError as e:
            raise UnexpectedModelBehavior(
                f'Invalid response from {call.system} {call.endpoint_name} endpoint, expected JSON data',
                body.decode(response.encoding or 'utf-8', errors='replace')[:2000],
            ) from e


def provider_call(
    provider: Any,
    url: str,
    body: Mapping[str, Any],
    headers: Mapping[str, str],
    *,
    model_name: str,
    operation: str,
    endpoint_name: str,
) -> HTTPCall:
    """The call of a provider's JSON endpoint other than its chat one (embeddings, images): the provider's client,
    retries and base URL, OpenAI-style error bodies."""
    return HTTPCall(
        client=provider.client, url=url, body=body, headers=headers, model_name=model_name, system=provider.name,
        operation=operation, endpoint_name=endpoint_name, max_retries=provider.max_retries, error_key='error',
        base_url=provider.base_url,
    )  # fmt: skip
