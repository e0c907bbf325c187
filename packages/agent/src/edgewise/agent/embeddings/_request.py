"""One embeddings request over the models' HTTP layer, which every HTTP embedding model makes: the provider's
headers under the request's `extra_headers`, its body under `extra_body`, the provider's retries and errors, and a
check that the answer has one vector per input."""

from __future__ import annotations as _annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ..exceptions import UnexpectedModelBehavior
from ..models._task_model import add_extra_body, post_json, request_headers
from ..providers import Provider
from .settings import EmbeddingSettings

__all__ = ('post_embeddings', 'answer_error', 'indexed_data_vectors')


def answer_error(provider: Provider[Any], endpoint_name: str, what: str, data: Any) -> UnexpectedModelBehavior:
    """The error of an answer that is not what `endpoint_name` promises (`what` says what is missing)."""
    return UnexpectedModelBehavior(
        f'Invalid response from {provider.name} {endpoint_name} endpoint: {what}', str(data)[:2000]
    )


async def post_embeddings(
    provider: Provider[Any],
    path: str,
    body: dict[str, Any],
    settings: EmbeddingSettings,
    *,
    model_name: str,
    endpoint_name: str,
    vectors: Callable[[Any], Iterable[Sequence[float]]],
    missing: str,
    count: int,
) -> tuple[Any, list[list[float]]]:
    """POST `body` to `path` under the provider's base URL, and return the answer and its vectors (read by
    `vectors`; an answer they cannot be read from says it lacks `missing`).

    Raises:
        ModelHTTPError: the API answered with an error (after retries).
        ModelAPIError: the API could not be reached (after retries).
        UnexpectedModelBehavior: the answer has no vectors, or not one per input.
    """
    add_extra_body(body, settings)
    data = await post_json(
        provider,
        path,
        body,
        request_headers(provider, settings),
        model_name=model_name,
        operation='embeddings',
        endpoint_name=endpoint_name,
    )
    try:
        embeddings = [list(vector) for vector in vectors(data)]
    except (KeyError, TypeError, AttributeError) as e:
        raise answer_error(provider, endpoint_name, missing, data) from e
    if len(embeddings) != count:
        raise UnexpectedModelBehavior(
            f'{provider.name} returned {len(embeddings)} embeddings for {count} inputs', str(data)[:2000]
        )
    return data, embeddings


def indexed_data_vectors(data: Any) -> list[Any]:
    """The vectors of an OpenAI-style answer (`data: [{embedding, index}]`), in the order of the inputs (the items
    may come in any order; `index` says whose each is)."""
    return [item['embedding'] for item in sorted(data['data'], key=lambda item: item.get('index', 0))]
