"""`ModelSettings`: provider-neutral request settings, merged from the model, the agent and the run."""

from __future__ import annotations as _annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

from typing_extensions import TypedDict

from ._messages.deltas import RecordedModelSettings

__all__ = (
    'CacheConfig',
    'CacheRetention',
    'CacheSetting',
    'FramingAnnouncement',
    'ModelSettings',
    'RecordedModelSettings',
    'ServiceTier',
    'ThinkingEffort',
    'ThinkingLevel',
    'ToolChoice',
    'ToolChoiceScalar',
    'ToolOrOutput',
    'merge_model_settings',
)

ThinkingEffort: TypeAlias = Literal['minimal', 'low', 'medium', 'high', 'xhigh', 'max']
"""How hard a model reasons, from least to most; each API maps a level it lacks to its nearest one (`'max'`, the
most the model can do, is sent as such only where the API takes it, and as the highest level it takes elsewhere)."""

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


CacheRetention: TypeAlias = Literal['5m', '30m', '1h', '12h']
"""How long a provider keeps a cached prompt prefix; a tier the provider lacks is snapped to the nearest shorter one
it has (or its shortest)."""


class CacheConfig(TypedDict, total=False):
    """The `cache` setting in detail: `{}` is `cache=True`, `{'retention': '1h'}` is `cache='1h'`."""

    retention: CacheRetention
    """How long to cache (snapped to a tier the provider has); the provider's default when absent."""
    messages: bool
    """Whether the growing conversation is cached too, not only the stable prefix (tool definitions and
    instructions). Default `True`; `False` suits many short conversations sharing long instructions or tools."""


CacheSetting: TypeAlias = bool | CacheRetention | CacheConfig
"""Every value `ModelSettings.cache` takes."""

FramingAnnouncement: TypeAlias = Literal['always', 'when_needed', 'never']
"""When a model without a mid-conversation system role is told what the application's `<system>` blocks are
(`ModelSettings.framing_announcement`)."""


class ModelSettings(TypedDict, total=False):
    """Settings of a model request; every key is optional and models ignore the ones they do not support."""

    max_tokens: int
    """The most tokens the model may generate."""
    temperature: float
    """Sampling temperature: higher is more random."""
    top_p: float
    """Nucleus sampling: only tokens within this cumulative probability are considered."""
    timeout: float
    """The timeout of each attempt at a request, in seconds, applied by the HTTP client (a timed-out attempt is
    retried, then raises `ModelTimeoutError`); see `request_timeout` for a deadline over every attempt."""
    request_timeout: float
    """A deadline over the whole request to one model, in seconds: every attempt (retries and their waits
    included) and, for a stream, reading it to its last event. Past it, the request is cancelled and
    `ModelRequestTimeout` raised. Enforced by Edgewise for every model, never sent to the provider; under a
    `FallbackModel`, each model it tries gets its own."""
    first_event_timeout: float
    """For a streamed request: how long, in seconds, the stream may take to open and produce its first event
    before it is cancelled with `ModelRequestTimeout` (`setting='first_event_timeout'`). Not sent to the provider;
    with `request_timeout` also set, whichever deadline passes first applies."""
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
    turns it off, and `'minimal'` ... `'max'` ask for an effort level (mapped to the nearest one the API has).

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
    framing_announcement: FramingAnnouncement
    """On a model whose profile has no mid-conversation system role (`supports_inline_system_prompts=False`), where
    system prompts after the start of the conversation go as `<system>` blocks in user turns: when the system prompt
    opens with a short announcement saying what those blocks are and what the notes on text imitating them
    (lookalike notes) mean. `'when_needed'` (the default on most profiles): from the first request whose history
    holds such a block, a lookalike note or retry feedback fenced in a user turn; `'always'`: on every request, so
    the cached prefix never changes; `'never'`: not at all (the lookalike notes are still sent). Only where the
    request has a system prompt or instructions for it to join. On a model with a mid-conversation system role, a
    shorter announcement of the notes goes as a system message before the first note or fenced retry feedback,
    except with `'never'`. The profile's `default_framing_announcement` applies when unset; Edgewise applies it and
    never sends it to the provider. Ignored by `FunctionModel` and `TestModel`, which get no announcement."""
    cache: CacheSetting
    """Prompt caching placed by the library, the same way for every provider: `True` caches the tool definitions,
    the instructions and the conversation with the provider's default retention; a `CacheRetention` asks for a
    retention; a `CacheConfig` with `messages=False` leaves the conversation out; `False` turns it off (also
    overriding a model's default settings). Providers that cache by themselves (OpenAI before GPT-5.6, Gemini) and
    models without request-side cache markers ignore it. Supported by Anthropic (as `anthropic_cache_instructions`,
    `anthropic_cache_tool_definitions` and `anthropic_cache_messages`); any of those set, even to `False`, wins
    over this one for the request."""
    extra_headers: dict[str, str]
    """Extra HTTP headers sent with the request."""
    extra_body: object
    """Extra fields merged into the request body."""


def merge_model_settings(base: ModelSettings | None, overrides: ModelSettings | None) -> ModelSettings | None:
    """`base` updated with `overrides` (later wins); `None` when both are `None`."""
    if base and overrides:
        return base | overrides
    return base or overrides
