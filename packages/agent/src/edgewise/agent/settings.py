"""`ModelSettings`: provider-neutral request settings, merged from the model, the agent and the run."""

from __future__ import annotations as _annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

from typing_extensions import TypedDict

__all__ = (
    'ModelSettings',
    'ServiceTier',
    'ThinkingEffort',
    'ThinkingLevel',
    'ToolChoice',
    'ToolChoiceScalar',
    'ToolOrOutput',
    'merge_model_settings',
)

ThinkingEffort: TypeAlias = Literal['minimal', 'low', 'medium', 'high', 'xhigh']
"""How hard a model reasons, from least to most; each API maps a level it lacks to its nearest one."""

ThinkingLevel: TypeAlias = bool | ThinkingEffort
"""Every value `ModelSettings.thinking` takes: `True` (reasoning at the provider's default effort), `False`
(no reasoning; ignored by models that always reason) or a `ThinkingEffort`."""

ServiceTier: TypeAlias = Literal['auto', 'default', 'flex', 'priority']
"""Every value `ModelSettings.service_tier` takes.

What each API is sent:

| `service_tier` | OpenAI (Chat, Responses) | Anthropic       | Gemini API   |
|----------------|--------------------------|-----------------|--------------|
| `'auto'`       | `'auto'`                 | `'auto'`        | nothing      |
| `'default'`    | `'default'`              | `'standard_only'` | `'standard'` |
| `'flex'`       | `'flex'`                 | nothing         | `'flex'`     |
| `'priority'`   | `'priority'`             | nothing         | `'priority'` |

"nothing" leaves the field out, so the provider's own default applies.
"""

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
    forcing that the output needs as `'auto'`; so does Anthropic while it thinks (`thinking`,
    `anthropic_thinking`).
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
    thinking: ThinkingLevel
    """Reasoning, the same way for every provider: `True` turns it on at the provider's default effort, `False`
    turns it off, and `'minimal'` ... `'xhigh'` ask for an effort level (mapped to the nearest one the API has).

    Absent, each model does what it does by default. Only models whose profile says they can reason
    (`supports_thinking`, `thinking_always_enabled`) are sent anything; `False` is ignored by models that always
    reason. A provider's own setting (`openai_reasoning_effort`, `anthropic_thinking`, `anthropic_effort`,
    `google_thinking_config`) wins over this one.
    """
    citations: bool
    """Ask for citations (`TextPart.citations`) from providers that cite only when asked: on Anthropic, documents
    in the request (also those tool results hold) are sent with citations turned on. Used only when the output is
    text; providers that always cite (OpenAI, Google web search) ignore it."""
    service_tier: ServiceTier
    """The service tier of the request, the same way for every provider (see `ServiceTier` for what each API
    is sent). A provider's own setting (`openai_service_tier`, `anthropic_service_tier`) wins over this one."""
    extra_headers: dict[str, str]
    """Extra HTTP headers sent with the request."""
    extra_body: object
    """Extra fields merged into the request body."""


def merge_model_settings(base: ModelSettings | None, overrides: ModelSettings | None) -> ModelSettings | None:
    """`base` updated with `overrides` (later wins); `None` when both are `None`."""
    if base and overrides:
        return base | overrides
    return base or overrides
