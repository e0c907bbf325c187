"""`ModelSettings`: provider-neutral request settings, merged from the model, the agent and the run."""

from __future__ import annotations as _annotations

from typing_extensions import TypedDict

__all__ = ('ModelSettings', 'merge_model_settings')


class ModelSettings(TypedDict, total=False):
    """Settings of a model request; every key is optional and models ignore the ones they do not support."""

    max_tokens: int
    """The most tokens the model may generate."""
    temperature: float
    """Sampling temperature: higher is more random."""
    top_p: float
    """Nucleus sampling: only tokens within this cumulative probability are considered."""
    timeout: float
    """Request timeout in seconds."""
    parallel_tool_calls: bool
    """Whether the model may call several tools in one response."""
    seed: int
    """Random seed, for models that support reproducible sampling."""
    presence_penalty: float
    """Penalty on tokens that already appeared."""
    frequency_penalty: float
    """Penalty on tokens proportional to how often they appeared."""
    logit_bias: dict[str, int]
    """Bias added to the logits of the given tokens."""
    stop_sequences: list[str]
    """Sequences at which the model stops generating."""
    extra_headers: dict[str, str]
    """Extra HTTP headers sent with the request."""
    extra_body: object
    """Extra fields merged into the request body."""


def merge_model_settings(base: ModelSettings | None, overrides: ModelSettings | None) -> ModelSettings | None:
    """`base` updated with `overrides` (later wins); `None` when both are `None`."""
    if base and overrides:
        return base | overrides
    return base or overrides
