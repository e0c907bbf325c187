"""The span of one request of an embedding or image generation model (`InstrumentedEmbeddingModel`,
`InstrumentedImageGenerationModel`): `<operation> <model name>`, with the GenAI attributes of the request and,
once it is answered, of the result (usage, response model and id, cost when `genai-prices` knows it).

Through logfire-api, as every span of the package: nothing is made when logfire is not installed.
"""

from __future__ import annotations as _annotations

import json
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Protocol

import httpx
import pydantic_core

from .. import _instrument
from .._warnings import CostCalculationFailedWarning
from ..usage import RequestUsage

__all__ = ('TaskSpan', 'server_attributes', 'task_span')


class _Result(Protocol):
    model_name: str
    usage: RequestUsage
    provider_response_id: str | None

    def cost(self) -> Any: ...


class _Model(Protocol):
    @property
    def model_name(self) -> str: ...

    @property
    def system(self) -> str: ...

    @property
    def base_url(self) -> str | None: ...


class TaskSpan:
    """The open span of a request (or nothing, when no span is made): `finish` puts the result on it."""

    def __init__(self, span: Any, request_model: str) -> None:
        self._span = span
        self._request_model = request_model

    def finish(self, result: _Result, **attributes: Any) -> None:
        """Record `result` (and `attributes`, the operation's own) on the span."""
        if self._span is None:
            return
        recorded: dict[str, Any] = {
            'gen_ai.response.model': result.model_name or self._request_model,
            'gen_ai.usage.input_tokens': result.usage.input_tokens,
            **attributes,
        }
        if result.usage.output_tokens:
            recorded['gen_ai.usage.output_tokens'] = result.usage.output_tokens
        if result.provider_response_id is not None:
            recorded['gen_ai.response.id'] = result.provider_response_id
        cost = _cost(result)
        if cost is not None:
            recorded['operation.cost'] = cost
        self._span.set_attributes(recorded)


@contextmanager
def task_span(
    operation: str,
    model: _Model,
    attributes: dict[str, Any],
    settings: Mapping[str, Any] | None,
    settings_attribute: str,
) -> Iterator[TaskSpan]:
    """The span `<operation> <model name>` of one request of `model`, with `attributes` and the request's settings
    (as JSON under `settings_attribute`, without the header and body overrides, which may hold secrets)."""
    recorded = {
        'gen_ai.operation.name': operation,
        'gen_ai.provider.name': model.system,
        'gen_ai.system': model.system,
        'gen_ai.request.model': model.model_name,
        **server_attributes(model.base_url),
        **attributes,
    }
    kept = {key: value for key, value in (settings or {}).items() if key not in ('extra_headers', 'extra_body')}
    if kept:
        recorded[settings_attribute] = json.dumps(pydantic_core.to_jsonable_python(kept, fallback=str))
    with _instrument.span(f'{operation} {{model_name}}', model_name=model.model_name, **recorded) as span:
        yield TaskSpan(span, model.model_name)


def server_attributes(base_url: str | None) -> dict[str, Any]:
    """The `server.address` and `server.port` span attributes of `base_url` (none for a URL that does not parse)."""
    if not base_url:
        return {}
    try:
        url = httpx.URL(base_url)
    except httpx.InvalidURL:
        return {}
    found: dict[str, Any] = {}
    if url.host:
        found['server.address'] = url.host
    if url.port is not None:
        found['server.port'] = url.port
    return found


def _cost(result: _Result) -> float | None:
    try:
        return float(result.cost().total_price)
    except (LookupError, ModuleNotFoundError):  # no prices for this model, or no genai-prices: common
        return None
    except Exception as error:
        warnings.warn(
            f'Failed to get cost from response: {type(error).__name__}: {error}', CostCalculationFailedWarning, 2
        )
        return None
