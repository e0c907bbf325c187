"""Hugging Face's Inference Providers: `HuggingFaceModel`, over the router's chat completions API (no
`huggingface_hub` needed).

`HuggingFaceModel('Qwen/Qwen3-235B-A22B')` reads `HF_TOKEN`; requests go to `POST {base_url}/chat/completions`,
streamed or not, in the Chat Completions format (`OpenAIChatModel` does it). What differs: only the common settings
are sent (`max_tokens` as `max_tokens`), the model is asked for as `<model>:<provider>` when the provider names an
inference provider, and reasoning comes back in `<think>` tags or a `reasoning_content` field.
"""

from __future__ import annotations as _annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Literal

from ..messages import ModelMessage
from ..profiles import ModelProfileSpec
from ..providers import Provider
from ..settings import ModelSettings
from . import _http
from ._request_parameters import ModelRequestParameters
from ._streamed_response import StreamedResponse
from .openai import OpenAIChatModel, OpenAIStreamedResponse

__all__ = (
    'HuggingFaceModel',
    'HuggingFaceModelName',
    'HuggingFaceModelSettings',
    'HuggingFaceStreamedResponse',
    'LatestHuggingFaceModelNames',
)

LatestHuggingFaceModelNames = Literal[
    'deepseek-ai/DeepSeek-V4-Pro',
    'deepseek-ai/DeepSeek-V4.1-Flash',
    'moonshotai/Kimi-K3',
    'zai-org/GLM-5.3',
    'Qwen/Qwen3.8-27B',
    'MiniMaxAI/MiniMax-M3',
    'openai/gpt-oss-120b',
    'google/gemma-4-31B-it',
    'meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8',
]
"""Popular models on Hugging Face's Inference Providers (pydantic-ai 2.68's list)."""

HuggingFaceModelName = str | LatestHuggingFaceModelNames
"""The name of a model on the Hugging Face Hub (`<org>/<model>`)."""


class HuggingFaceModelSettings(ModelSettings, total=False):
    """Settings of a Hugging Face request: the common ones (Hugging Face has no settings of its own yet; they would
    be `huggingface_`-prefixed)."""


class HuggingFaceModel(OpenAIChatModel):
    """A model on Hugging Face's Inference Providers (`POST {base_url}/chat/completions`), streamed or not."""

    _default_provider = 'huggingface'

    def __init__(
        self,
        model_name: HuggingFaceModelName,
        *,
        provider: Literal['huggingface'] | Provider[Any] = 'huggingface',
        profile: ModelProfileSpec | None = None,
        settings: ModelSettings | None = None,
    ) -> None:
        """Configure the model.

        Args:
            model_name: The model's name on the Hub (`<org>/<model>`).
            provider: The provider or its name (`'huggingface'`, or a `HuggingFaceProvider` of your own).
            profile: The model's profile (or a function of the name giving it); the provider's by default.
            settings: Default settings of this model's requests (`HuggingFaceModelSettings`).
        """
        super().__init__(model_name, provider=provider, profile=profile, settings=settings)

    def _body(
        self, messages: list[ModelMessage], settings: Any, params: ModelRequestParameters, *, stream: bool
    ) -> dict[str, Any]:
        # Only the common settings: OpenAI's own (`openai_*` and the service tier they carry) are not sent, nor is
        # the unified `thinking` (the router has no one way to ask for it).
        own = {k: v for k, v in settings.items() if not k.startswith('openai_') and k != 'service_tier'}
        body = super()._body(messages, own, dataclasses.replace(params, thinking=None), stream=stream)
        if 'max_completion_tokens' in body:
            body['max_tokens'] = body.pop('max_completion_tokens')
        if (inference_provider := getattr(self._provider, 'provider_name', None)) is not None:
            body['model'] = f'{self._model_name}:{inference_provider}'
        return body

    def _stream_response(
        self, params: ModelRequestParameters, sse: _http.SSEStream, settings: Mapping[str, Any]
    ) -> StreamedResponse:
        return HuggingFaceStreamedResponse(
            params, sse=sse, model_name=self._model_name, profile=self.profile, provider_name=self._provider.name
        )


class HuggingFaceStreamedResponse(OpenAIStreamedResponse):
    """A streamed Hugging Face response: Chat Completions chunks, read as `OpenAIStreamedResponse` reads them."""
