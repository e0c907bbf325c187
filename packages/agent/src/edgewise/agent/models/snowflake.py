"""Snowflake Cortex: `SnowflakeModel`, Cortex's Chat Completions API, with Claude's reasoning object.

Over `OpenAIChatModel`'s wire format: Claude models think through Cortex's `reasoning` object (`{'effort': ...}` or
`{'max_tokens': ...}`), set by `snowflake_reasoning` or else by the unified `thinking` setting, and then get
`temperature: 1` unless a temperature is set (Claude reasons only at 1, and Cortex's default is another). Claude's
reasoning comes back as `reasoning_details`, read as thinking parts and sent back as they came. Cortex leaves the
finish reason of Claude's answers empty: it is read as `tool_call` when the answer calls tools, `stop` otherwise.
"""

from __future__ import annotations as _annotations

import dataclasses
from collections.abc import AsyncIterator, Mapping
from typing import Any, Literal, cast

from typing_extensions import TypedDict

from ..messages import ModelResponse, ModelResponseStreamEvent, ThinkingPart, ToolCallPart
from ..profiles import ModelProfileSpec
from ..providers import Provider
from ..providers.snowflake import SnowflakeModelProfile
from ..settings import ModelSettings, ThinkingEffort
from ._reasoning_details import ReasoningDetailsStreamedResponse, sent_back_detail, with_reasoning_details
from ._request_parameters import ModelRequestParameters
from .openai import OpenAIChatModel

__all__ = (
    'SnowflakeModel',
    'SnowflakeModelName',
    'SnowflakeModelSettings',
    'SnowflakeReasoning',
    'SnowflakeStreamedResponse',
)

LatestSnowflakeModelNames = Literal[
    'claude-opus-5-5',
    'claude-sonnet-5-5',
    'claude-opus-4-8',
    'claude-sonnet-4-6',
    'claude-haiku-4-5',
    'openai-gpt-6-sol',
    'openai-gpt-6.1-terra',
    'openai-gpt-6-luna',
    'openai-gpt-6-astra',
    'openai-gpt-5.6-sol',
    'openai-gpt-5.6-terra',
    'openai-gpt-5.6-luna',
    'llama4-maverick',
    'llama3.3-70b',
    'mistral-large3',
    'mistral-large2',
]
"""Models Cortex serves at the time of writing."""

SnowflakeModelName = str | LatestSnowflakeModelNames
"""The name of a model on Cortex (a fine-tuned one as `database.schema.model`): any string, the known ones listed
for completion."""

_EFFORTS: dict[bool | ThinkingEffort, Literal['low', 'medium', 'high']] = {
    True: 'medium',
    'minimal': 'low',
    'low': 'low',
    'medium': 'medium',
    'high': 'high',
    'xhigh': 'high',
    'max': 'high',
}


class SnowflakeReasoning(TypedDict, total=False):
    """Cortex's `reasoning` object of a request to a Claude model: an effort or a token budget, not both."""

    effort: Literal['high', 'medium', 'low']
    """How hard the model thinks (Cortex turns it into a token budget)."""
    max_tokens: int
    """How many tokens the model may think for."""


class SnowflakeModelSettings(ModelSettings, total=False):
    """Settings of a Cortex request: the common ones, OpenAI's Chat ones and Snowflake's own (`snowflake_`-prefixed)."""

    snowflake_reasoning: SnowflakeReasoning
    """The reasoning of a Claude model (`reasoning`); without it, the unified `thinking` setting gives an effort."""


class SnowflakeStreamedResponse(ReasoningDetailsStreamedResponse):
    """A streamed Cortex response: Chat Completions chunks with `reasoning_details`, and a finish reason even when
    Cortex sends none."""

    async def _get_event_iterator(self) -> AsyncIterator[ModelResponseStreamEvent]:
        async for event in super()._get_event_iterator():
            yield event
        if self.finish_reason is None:
            self.finish_reason = _missing_finish_reason(self._parts_manager.get_parts())


class SnowflakeModel(OpenAIChatModel):
    """A model on Snowflake Cortex (`POST {base_url}/chat/completions`), streamed or not.

    `SnowflakeModel('claude-sonnet-4-6')` reads `SNOWFLAKE_ACCOUNT` and `SNOWFLAKE_TOKEN`.
    """

    _streamed_response_class = SnowflakeStreamedResponse

    _default_provider = 'snowflake'

    def __init__(
        self,
        model_name: SnowflakeModelName,
        *,
        provider: Literal['snowflake'] | Provider[Any] = 'snowflake',
        profile: ModelProfileSpec | None = None,
        settings: SnowflakeModelSettings | None = None,
    ) -> None:
        """Configure the model.

        Args:
            model_name: The model's name on Cortex.
            provider: The provider or its name (`'snowflake'`, or a `SnowflakeProvider` of your own).
            profile: The model's profile (or a function of the name giving it); the provider's by default.
            settings: Default settings of this model's requests (`SnowflakeModelSettings`).
        """
        super().__init__(model_name, provider=provider, profile=profile, settings=settings)

    def _chat_settings(
        self, settings: Mapping[str, Any], params: ModelRequestParameters
    ) -> tuple[Mapping[str, Any], ModelRequestParameters]:
        profile = cast(SnowflakeModelProfile, self.profile)
        chat = {key: value for key, value in settings.items() if not key.startswith('snowflake_')}
        reasoning = settings.get('snowflake_reasoning')
        takes_reasoning = profile.get('snowflake_supports_reasoning', False)
        if reasoning is None and takes_reasoning and params.thinking not in (None, False):
            reasoning = SnowflakeReasoning(effort=_EFFORTS[cast(Any, params.thinking)])
        if reasoning:
            chat['extra_body'] = {**(settings.get('extra_body') or {}), 'reasoning': reasoning}
            if profile.get('snowflake_reasoning_requires_temperature_1', False):
                chat.setdefault('temperature', 1)
        if takes_reasoning:  # Cortex ignores `reasoning_effort` for Claude: only an explicit one is sent
            params = dataclasses.replace(params, thinking=None)
        return chat, params

    def _reasoning_detail(self, message: ModelResponse, part: ThinkingPart) -> dict[str, Any] | None:
        return sent_back_detail(part, self.accepts_stateless_artifacts(message, part))

    def _parse(self, data: Any) -> ModelResponse:
        response = with_reasoning_details(super()._parse(data), data, self.system)
        if not data['choices'][0].get('finish_reason') and response.finish_reason == 'stop':
            response.finish_reason = _missing_finish_reason(response.parts)
        return response


def _missing_finish_reason(parts: Any) -> Literal['tool_call', 'stop']:
    return 'tool_call' if any(isinstance(part, ToolCallPart) for part in parts) else 'stop'
