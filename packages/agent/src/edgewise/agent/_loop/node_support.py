"""What the nodes of the agent graph share: the instance attributes a streamed node keeps its results in (never
fields, so never persisted), the events its stream gives first, and small helpers of a model request (prices
loaded, a suspended response recognized, the messages put on the request's span)."""

from __future__ import annotations as _annotations

from collections.abc import AsyncGenerator, Callable, Sequence
from datetime import datetime, timezone
from functools import partial
from typing import Any

import anyio

from .._cost import fill_response_cost, load_prices, priced_provider, prices_installed, prices_loaded
from .._messages.attempts import ModelRequestAttempt
from .._run.deps import GraphAgentDeps
from .._run.state import GraphAgentState
from .._utils import field_defaults
from ..exceptions import UserError
from ..messages import (
    EnqueuedMessagesEvent,
    HandleResponseEvent,
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    ModelSettingsDeltaEvent,
)
from ..models import Model
from ..models._attempts import record_attempts_usage
from ..models._instrumentation_settings import record_model_request
from ..settings import ModelSettings
from .call_tools_parts import tag_tool_calls

__all__ = (
    'NEXT',
    'VALIDATED',
    'DEFERRED',
    'ENQUEUED',
    'add_enqueued_events',
    'leading_events',
    'with_emitted',
    'now',
    'prompt_request',
    'check_not_streamed',
    'load_prices_for',
    'prices_wanted',
    'is_suspended',
    'trace_exchange',
    'record_model_response',
)

NEXT = '_edgewise_streamed_next'  # instance attribute (not a field: never persisted) holding a streamed result
VALIDATED = '_edgewise_validated_calls'  # instance attribute: the call validations a streamed node's events made
DEFERRED = '_edgewise_deferred_batch'  # instance attribute: the deferred calls of the step and a handler's answers
ENQUEUED = '_edgewise_enqueued_events'  # instance attribute: the `EnqueuedMessagesEvent`s its stream gives first


def add_enqueued_events(node: Any, events: Sequence[EnqueuedMessagesEvent | ModelSettingsDeltaEvent | Any]) -> None:
    """Have the stream of `node` give `events` before the model's response (queued messages it delivers, the
    settings change and the capability loads its request records)."""
    node.__dict__[ENQUEUED] = [*node.__dict__.get(ENQUEUED, ()), *events]


def leading_events(node: Any, deps: GraphAgentDeps[Any, Any]) -> list[Any]:
    """What the stream of `node` gives before the model's response: the queued messages and settings change it
    records, then the events emitted since the last node's stream (`RunContext.emit`, `AgentRun.emit`)."""
    leading = [*node.__dict__.pop(ENQUEUED, ()), *deps.event_buffer]
    deps.event_buffer.clear()
    return leading


async def with_emitted(
    events: AsyncGenerator[HandleResponseEvent], buffer: list[Any]
) -> AsyncGenerator[HandleResponseEvent]:
    """`events`, each preceded by the events emitted while it was being made (a tool's `RunContext.emit`), and the
    emitted events left at the end."""
    try:
        async for event in events:
            while buffer:
                yield buffer.pop(0)
            yield event
        while buffer:
            yield buffer.pop(0)
    finally:
        await events.aclose()


now: Callable[[], datetime] = partial(datetime.now, timezone.utc)
"""The current time in UTC (`datetime.now(tz=timezone.utc)`, with no Python frame of its own)."""


_REQUEST_DEFAULTS, _ = field_defaults(ModelRequest)  # (no field of a factory; `parts` is set over its `None`)


def prompt_request(parts: list[ModelRequestPart]) -> ModelRequest:
    """`ModelRequest(parts)` for a request of system and user prompts only (a run's first request), without its
    `__init__`'s keyword handling nor its `__post_init__`: the same `__dict__`, in the order of the fields. Its
    checks concern spoken and tool parts, which such a request has none of."""
    request: ModelRequest = object.__new__(ModelRequest)
    values = _REQUEST_DEFAULTS.copy()
    values['parts'] = parts
    request.__dict__ = values
    return request


def check_not_streamed(node: object) -> None:
    if NEXT in node.__dict__:
        raise UserError(f'This {type(node).__name__} has already been streamed; run the node it led to.')


async def load_prices_for(system: str) -> None:
    """Load genai-prices' data (once per process, in a worker thread: importing it takes long enough to stall the
    event loop) before the first request to a provider it prices."""
    if prices_wanted(system) and prices_installed():
        await anyio.to_thread.run_sync(load_prices)


def prices_wanted(system: str) -> bool:
    """Whether a request to a provider of `system` may have to load genai-prices' data first (`load_prices_for`):
    checked before awaiting it, so that the requests that need nothing loaded make no coroutine."""
    return not prices_loaded() and priced_provider(system)


def is_suspended(message: ModelMessage) -> bool:
    """Whether `message` is a response its provider suspended (the run asks the model to continue it)."""
    return isinstance(message, ModelResponse) and message.state == 'suspended'


def trace_exchange(
    span: Any,
    deps: GraphAgentDeps[Any, Any],
    state: GraphAgentState,
    model: Model,
    settings: ModelSettings | None,
    sent: Sequence[ModelMessage],
    response: ModelResponse | None,
    segments: Sequence[ModelResponse] = (),
) -> None:
    """Put the messages of a model request on its span, in the OpenTelemetry GenAI form of the run's
    instrumentation settings, when the span records (logfire is configured): serializing them costs nothing
    otherwise. An instrumented run also judges the response's prompt-cache health (recording or not, so the
    conversation's cache marks move on) and puts it on the span; `segments` are the responses of a continued turn,
    the last of which is judged (its request sent the whole prefix)."""
    if response is None:
        return
    if deps.tracing:
        # (loaded by the first traced response: a run without logfire never judges cache health)
        from ..models._cache_health import (
            CACHE_COLLAPSE_EVENT_REASONS,
            CONVERSATION_CACHE_MARKS,
            CacheHealthDetector,
            record_cache_health,
        )

        detector = deps.cache_health
        if detector is None:
            detector = deps.cache_health = CacheHealthDetector(
                CONVERSATION_CACHE_MARKS, state.conversation_id, state.run_id, alert_on=CACHE_COLLAPSE_EVENT_REASONS
            )
        final_segment = segments[-1] if segments else None
        health = detector.observe(model, settings, sent, response, final_segment=final_segment)
        record_cache_health(span, health, response)
    record_model_request(span, deps.instrumentation, sent, response)


def record_model_response(
    state: GraphAgentState,
    deps: GraphAgentDeps[Any, Any],
    response: ModelResponse,
    counted: Sequence[ModelRequestAttempt] = (),
) -> None:
    """Add the model's response to the history and the usage (with that of the attempts that failed before it, but
    those of `counted`, whose usage was added as they failed); check the token limits."""
    # Ids a response already carries (a cached response of an earlier run) are kept, as pydantic-ai 2.x does.
    response.run_id = response.run_id or state.run_id
    response.conversation_id = response.conversation_id or state.conversation_id
    response.workspace_ref = deps.workspace_ref
    if response.usage.cost is None and priced_provider(response.provider_name):  # (else nothing to price it by)
        fill_response_cost(response)
    state.usage.incr(response.usage)
    if response.failed_attempts:
        failed = [a for a in response.failed_attempts if not any(a is c for c in counted)]
        record_attempts_usage(state.usage, failed)
    if deps.tool_kinds:
        tag_tool_calls(response, deps.tool_kinds)
    state.message_history.append(response)
    # The snapshot of the `CallToolsNode` that follows holds the response: its state need not hold it too.
    state.response_in_node = deps.persistence is not None  # (`deps.durable`)
    if deps.usage_limits.has_token_limits():
        deps.usage_limits.check_tokens(state.usage, state.message_history, response.usage)
    # Later responses may still be priced: an unknown cost is reported once, as the run ends.
    if deps.usage_limits.cost_limit is not None:  # (`check_cost` checks nothing otherwise)
        deps.usage_limits.check_cost(state.usage, warn_if_cost_unavailable=False, messages=state.message_history)
