"""Cerebras: `CerebrasModel`, the Chat Completions API on Cerebras's servers, with Cerebras's reasoning settings.

Over `OpenAIChatModel`'s wire format, the unified `thinking` setting is sent only to turn reasoning down:
`thinking=False` becomes `reasoning_effort: 'none'` (or `'low'` on models that always reason), other levels send
nothing (Cerebras's models reason by default). GLM models (`zai-glm-*`) get their earlier reasoning back inside
`<think>` tags, so `clear_thinking: false` is sent for them unless `cerebras_clear_thinking` says otherwise.
"""

from __future__ import annotations as _annotations

import dataclasses
import warnings
from collections.abc import Mapping
from typing import Any, Literal

from .._warnings import PydanticAIDeprecationWarning
from ..profiles import ModelProfileSpec
from ..providers import Provider
from ..settings import ModelSettings
from ._request_parameters import ModelRequestParameters
from .openai import OpenAIChatModel

__all__ = ('CerebrasModel', 'CerebrasModelName', 'CerebrasModelSettings')

LatestCerebrasModelNames = Literal['gpt-oss-120b', 'qwen-3.8-27b']
"""Models Cerebras serves at the time of writing."""

CerebrasModelName = str | LatestCerebrasModelNames
"""The name of a model on Cerebras: any string, the known ones listed for completion."""


class CerebrasModelSettings(ModelSettings, total=False):
    """Settings of a Cerebras request: the common ones, OpenAI's Chat ones and Cerebras's own (`cerebras_`-prefixed)."""

    cerebras_disable_reasoning: bool
    """Turn reasoning off (`reasoning_effort: 'none'`). Deprecated: use `thinking=False`."""

    cerebras_clear_thinking: bool
    """Whether Cerebras drops the reasoning of earlier turns of a GLM conversation (`clear_thinking`); `False` is
    sent for GLM models unless this is set."""


class CerebrasModel(OpenAIChatModel):
    """A model on Cerebras (`POST {base_url}/chat/completions`), streamed or not.

    `CerebrasModel('gpt-oss-120b')` reads `CEREBRAS_API_KEY`.
    """

    _default_provider = 'cerebras'

    def __init__(
        self,
        model_name: CerebrasModelName,
        *,
        provider: Literal['cerebras'] | Provider[Any] = 'cerebras',
        profile: ModelProfileSpec | None = None,
        settings: CerebrasModelSettings | None = None,
    ) -> None:
        """Configure the model.

        Args:
            model_name: The model's name on Cerebras.
            provider: The provider or its name (`'cerebras'`, or a `CerebrasProvider` of your own).
            profile: The model's profile (or a function of the name giving it); the provider's by default.
            settings: Default settings of this model's requests (`CerebrasModelSettings`).
        """
        super().__init__(model_name, provider=provider, profile=profile, settings=settings)

    def _chat_settings(
        self, settings: Mapping[str, Any], params: ModelRequestParameters
    ) -> tuple[Mapping[str, Any], ModelRequestParameters]:
        profile = self.profile
        always = profile.get('thinking_always_enabled', False)
        # `thinking=False` is dropped from `params` for a model that always reasons; here it asks for the least.
        off = params.thinking is False or (always and settings.get('thinking') is False)
        chat = {key: value for key, value in settings.items() if not key.startswith('cerebras_')}
        extra_body = dict(settings.get('extra_body') or {})
        disable = settings.get('cerebras_disable_reasoning')
        if disable is not None:
            warnings.warn(
                '`cerebras_disable_reasoning` is deprecated: use the unified `thinking=False` setting instead.',
                PydanticAIDeprecationWarning,
                stacklevel=2,
            )
        else:
            disable = off and not always
        clear = settings.get('cerebras_clear_thinking')
        if clear is None and profile.get('openai_chat_send_back_thinking_parts') == 'tags':
            clear = False  # earlier reasoning goes back in `<think>` tags, which Cerebras would strip by default
        if clear is not None:
            extra_body['clear_thinking'] = clear
        if extra_body:
            chat['extra_body'] = extra_body
        if disable:
            chat['openai_reasoning_effort'] = 'none'
        elif off and not chat.get('openai_reasoning_effort'):
            chat['openai_reasoning_effort'] = 'low'  # the least a model that always reasons can do
        # Other unified levels send nothing: Cerebras's reasoning models reason by default.
        return chat, dataclasses.replace(params, thinking=None)
