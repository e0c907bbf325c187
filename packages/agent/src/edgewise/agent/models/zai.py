"""Z.AI (Zhipu AI): `ZaiModel`, the Chat Completions API of Z.AI's GLM models, with their thinking settings.

Over `OpenAIChatModel`'s wire format, the unified `thinking` setting becomes Z.AI's `thinking` object
(`{'type': 'enabled' | 'disabled'}`), with `reasoning_effort` for an effort level on the models that take one
(GLM-5.2, GLM-5.3); models that think get `clear_thinking: false`, so that the reasoning of earlier turns (sent
back in `reasoning_content`) is kept, unless `zai_clear_thinking` says otherwise. Z.AI's own finish reasons
(`sensitive`, `model_context_window_exceeded`, `network_error`) are read as `content_filter`, `length` and `error`.
"""

from __future__ import annotations as _annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Literal, cast

from ..messages import FinishReason, ModelResponse, ModelResponseStreamEvent
from ..profiles import ModelProfileSpec
from ..profiles.zai import ZaiModelProfile
from ..providers import Provider
from ..settings import ModelSettings
from . import _openai_chat as _chat
from ._request_parameters import ModelRequestParameters
from .openai import OpenAIChatModel, OpenAIStreamedResponse

__all__ = ('ZaiModel', 'ZaiModelName', 'ZaiModelSettings', 'ZaiStreamedResponse')

LatestZaiModelNames = Literal[
    'glm-5.3',
    'glm-5.3-flash',
    'glm-5.3-flashx',
    'glm-5-turbo',
    'glm-5v-turbo',
    'glm-4.7',
    'glm-4.7-flash',
    'glm-4.5-air',
    'glm-4.6v',
]
"""Models Z.AI serves at the time of writing."""

ZaiModelName = str | LatestZaiModelNames
"""The name of a model on Z.AI: any string, the known ones listed for completion."""

_FINISH_REASONS: dict[str, FinishReason] = {
    **_chat.FINISH_REASONS,
    'sensitive': 'content_filter',  # stopped by Z.AI's moderation
    'model_context_window_exceeded': 'length',
    'network_error': 'error',  # inference broke off: the answer is cut short
}


class ZaiModelSettings(ModelSettings, total=False):
    """Settings of a Z.AI request: the common ones, OpenAI's Chat ones and Z.AI's own (`zai_`-prefixed)."""

    zai_clear_thinking: bool
    """Whether Z.AI drops the reasoning of earlier turns (`thinking.clear_thinking`). Models that think keep it
    (`False`) unless this is set; keeping it needs the earlier `reasoning_content` sent back unchanged, which
    `ZaiModel` does. Whether the model thinks in this turn is the unified `thinking` setting."""


class ZaiStreamedResponse(OpenAIStreamedResponse):
    """A streamed Z.AI response: Chat Completions chunks, with Z.AI's finish reasons."""

    def _chunk(self, chunk: dict[str, Any]) -> list[ModelResponseStreamEvent]:
        events = super()._chunk(chunk)
        choices = chunk.get('choices') or ()
        if choices and (raw := choices[0].get('finish_reason')) in _FINISH_REASONS and not self._refusal:
            self.finish_reason = _FINISH_REASONS[raw]
        return events


class ZaiModel(OpenAIChatModel):
    """A GLM model on Z.AI (`POST {base_url}/chat/completions`), streamed or not.

    `ZaiModel('glm-4.7')` reads `ZAI_API_KEY`.
    """

    _streamed_response_class = ZaiStreamedResponse

    _default_provider = 'zai'

    def __init__(
        self,
        model_name: ZaiModelName,
        *,
        provider: Literal['zai'] | Provider[Any] = 'zai',
        profile: ModelProfileSpec | None = None,
        settings: ZaiModelSettings | None = None,
    ) -> None:
        """Configure the model.

        Args:
            model_name: The model's name on Z.AI (`'glm-4.7'`).
            provider: The provider or its name (`'zai'`, or a `ZaiProvider` of your own).
            profile: The model's profile (or a function of the name giving it); the provider's by default.
            settings: Default settings of this model's requests (`ZaiModelSettings`).
        """
        super().__init__(model_name, provider=provider, profile=profile, settings=settings)

    def _chat_settings(
        self, settings: Mapping[str, Any], params: ModelRequestParameters
    ) -> tuple[Mapping[str, Any], ModelRequestParameters]:
        profile = cast(ZaiModelProfile, self.profile)
        level = params.thinking
        if profile.get('thinking_always_enabled', False) and (level is False or settings.get('thinking') is False):
            level = 'minimal'  # a model that cannot stop thinking thinks as little as it can
        thinking: dict[str, Any] = {}
        if level is False:
            thinking['type'] = 'disabled'
        elif level is not None:
            thinking['type'] = 'enabled'
        clear = settings.get('zai_clear_thinking')
        if clear is None and profile.get('supports_thinking', False):
            clear = False
        if clear is not None:
            thinking['clear_thinking'] = clear
        extra_body = dict(settings.get('extra_body') or {})
        if thinking:
            extra_body['thinking'] = thinking
        if isinstance(level, str) and profile.get('zai_supports_reasoning_effort', False):
            extra_body['reasoning_effort'] = profile.get('zai_reasoning_effort_mapping', {}).get(level, level)
        chat = {key: value for key, value in settings.items() if not key.startswith('zai_')}
        # Thinking is in `thinking` (not OpenAI's `reasoning_effort`, which Z.AI does not take).
        chat.pop('openai_reasoning_effort', None)
        if extra_body:
            chat['extra_body'] = extra_body
        return chat, dataclasses.replace(params, thinking=None)

    def _parse(self, data: Any) -> ModelResponse:
        response = super()._parse(data)
        raw = (response.provider_details or {}).get('finish_reason')
        if raw in _FINISH_REASONS:
            response.finish_reason = _FINISH_REASONS[raw]
        return response
