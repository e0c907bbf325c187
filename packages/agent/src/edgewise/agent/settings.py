"""`ModelSettings`: provider-neutral request settings, merged from the model, the agent and the run."""

from __future__ import annotations as _annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

from typing_extensions import TypedDict

__all__ = ('ModelSettings', 'ToolChoice', 'ToolChoiceScalar', 'ToolOrOutput', 'merge_model_settings')

ToolChoiceScalar: TypeAlias = Literal['none', 'required', 'auto']
"""The `tool_choice` values that name no tool."""


@dataclass
class ToolOrOutput:
    """A `tool_choice` that offers only the named function tools, and still lets the run end: the output tools
    (and text, where text is an accepted output) stay available."""

    function_tools: list[str]
    """The function tools the model may call."""


ToolChoice: TypeAlias = ToolChoiceScalar | list[str] | ToolOrOutput | None
"""Every value `ModelSettings.tool_choice` takes."""


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
    top_k: int
    """Only the `top_k` most likely tokens are sampled from (Anthropic, Gemini)."""
    parallel_tool_calls: bool
    """Whether the model may call several tools in one response."""
    tool_choice: ToolChoice
    """Which function tools the model may or must call:

    - `'auto'` (or absent): the model decides;
    - `'none'`: no function tool (output tools stay, so the run can end);
    - `'required'`: one of the function tools must be called (no output tool: give it per step, e.g. from a
      callable `model_settings`, or the run could never end; a static one is refused at run start);
    - a list of names: one of those must be called (same caveat);
    - `ToolOrOutput(function_tools=[...])`: only those function tools, plus whatever ends the run.

    A model that cannot force a tool call refuses `'required'` and lists with a `UserError`, and treats the
    forcing that the output needs as `'auto'`.
    """
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
