"""The framework's routing marks on a suspended response, under `metadata['__pydantic_ai__']` (pydantic-ai 2.x's keys,
so that histories move between the two both ways).

- `fallback_model_id`: the `model_id` of the model of a `FallbackModel` that gave a suspended response; the
  continuation of the turn goes back to that model. It stays on the whole turn once merged.
- `replace_previous_response`: set on the first response a `FallbackModel` got from its chain after the model a
  suspended turn was pinned to failed; the turn so far is replaced by it (not added to). It is dropped once the
  segments are merged, so that it never reaches a stored history.
"""

from __future__ import annotations as _annotations

from collections.abc import Mapping
from typing import Any

from .model_messages import ModelResponse

__all__ = (
    'FALLBACK_MODEL_PIN_KEY',
    'REPLACE_PREVIOUS_RESPONSE_KEY',
    'continuation_pin',
    'replaces_previous',
    'with_framework_marks',
    'without_replace_mark',
)

_NAMESPACE = '__pydantic_ai__'

FALLBACK_MODEL_PIN_KEY = 'fallback_model_id'
"""Where a `FallbackModel` records which of its models gave a suspended response."""

REPLACE_PREVIOUS_RESPONSE_KEY = 'replace_previous_response'
"""Where a `FallbackModel` marks a fresh response that replaces the suspended turn it gave up continuing."""


def with_framework_marks(metadata: dict[str, Any] | None, **marks: Any) -> dict[str, Any]:
    """`metadata` with `marks` added to its `__pydantic_ai__` namespace (the namespace's other keys kept; one that
    is not a mapping is replaced). The dicts given are not changed."""
    found = dict(metadata or {})
    namespace = found.get(_NAMESPACE)
    found[_NAMESPACE] = {**(namespace if isinstance(namespace, Mapping) else {}), **marks}
    return found


def _namespace(response: ModelResponse) -> Mapping[str, Any]:
    namespace = (response.metadata or {}).get(_NAMESPACE)
    return namespace if isinstance(namespace, Mapping) else {}


def continuation_pin(response: ModelResponse) -> str | None:
    """The `model_id` a `FallbackModel` pinned `response` to, if any."""
    model_id = _namespace(response).get(FALLBACK_MODEL_PIN_KEY)
    return model_id if isinstance(model_id, str) else None


def replaces_previous(response: ModelResponse) -> bool:
    """Whether `response` replaces the suspended turn it follows (see `REPLACE_PREVIOUS_RESPONSE_KEY`)."""
    return _namespace(response).get(REPLACE_PREVIOUS_RESPONSE_KEY) is True


def without_replace_mark(metadata: dict[str, Any] | None) -> dict[str, Any] | None:
    """`metadata` without the `replace_previous_response` mark (itself when it has none; an empty dict when nothing
    is left, as pydantic-ai 2.x). The dicts given are not changed."""
    namespace = (metadata or {}).get(_NAMESPACE)
    if metadata is None or not isinstance(namespace, Mapping) or REPLACE_PREVIOUS_RESPONSE_KEY not in namespace:
        return metadata
    rest = {key: value for key, value in namespace.items() if key != REPLACE_PREVIOUS_RESPONSE_KEY}
    found = {key: value for key, value in metadata.items() if key != _NAMESPACE}
    if rest:
        found[_NAMESPACE] = rest
    return found
