"""`EmbeddingSettings`: the options of an embedding request that several providers share."""

from __future__ import annotations as _annotations

from typing_extensions import TypedDict

from ..models._task_model import merge_settings

__all__ = ('EmbeddingSettings', 'merge_embedding_settings')


class EmbeddingSettings(TypedDict, total=False):
    """Options of an embedding request; a provider's own options (prefixed with its name) extend them.

    A provider ignores what it does not take.
    """

    dimensions: int
    """How many dimensions the vectors have (OpenAI's `text-embedding-3` models, Gemini, Cohere, VoyageAI)."""
    truncate: bool
    """Whether inputs longer than the model takes are cut to fit rather than refused (Cohere, VoyageAI; a
    provider's own truncation setting wins)."""
    extra_headers: dict[str, str]
    """Headers added to the request."""
    extra_body: object
    """Keys added to the request's JSON body (a dict)."""


def merge_embedding_settings(
    base: EmbeddingSettings | None, overrides: EmbeddingSettings | None
) -> EmbeddingSettings | None:
    """`overrides` over `base` (each key of `overrides` wins); `None` when both are `None`."""
    return merge_settings(base, overrides)
