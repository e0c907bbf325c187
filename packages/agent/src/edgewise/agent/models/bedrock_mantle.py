"""Amazon Bedrock Mantle: `BedrockMantleResponsesModel` and `BedrockMantleChatModel`, OpenAI's models on Mantle.

GPT-5.x (Responses at `/openai/v1`) and GPT-OSS (Responses at `/v1`) are `BedrockMantleResponsesModel`s, GPT-OSS
Safeguard (Chat Completions at `/v1`) a `BedrockMantleChatModel`; `'bedrock-mantle:<model>'` picks the class from
the model's profile. The wire formats are `OpenAIResponsesModel`'s and `OpenAIChatModel`'s; `BedrockMantleProvider`
gives the URL and the authentication (a Bedrock API key, or SigV4).
"""

from __future__ import annotations as _annotations

from typing import Any, Literal

from ..exceptions import UserError
from ..profiles import ModelProfileSpec
from ..providers.bedrock_mantle import BedrockMantleProvider
from ..settings import ModelSettings
from .openai import OpenAIChatModel, OpenAIChatModelSettings, OpenAIResponsesModel, OpenAIResponsesModelSettings

__all__ = ('BedrockMantleChatModel', 'BedrockMantleModelName', 'BedrockMantleResponsesModel')

LatestBedrockMantleModelNames = Literal[
    'openai.gpt-6.1-sol',
    'openai.gpt-6.1-terra',
    'openai.gpt-6-luna',
    'openai.gpt-6-astra',
    'openai.gpt-5.6-sol',
    'openai.gpt-5.6-terra',
    'openai.gpt-5.6-luna',
    'openai.gpt-oss-120b',
    'openai.gpt-oss-20b',
]
"""OpenAI's models on Mantle at the time of writing."""

BedrockMantleModelName = str | LatestBedrockMantleModelNames
"""The name of a model on Mantle: any string, the known ones listed for completion."""


def _mantle_provider(provider: Literal['bedrock-mantle'] | BedrockMantleProvider) -> BedrockMantleProvider:
    return BedrockMantleProvider() if isinstance(provider, str) else provider


def _check_interface(model: Any, model_name: str, chat: bool) -> None:
    served_on_chat = model.profile.get('bedrock_mantle_interface', 'chat' if chat else 'openai-responses') == 'chat'
    if served_on_chat and not chat:
        raise UserError(
            f'Model {model_name!r} is served on the Bedrock Mantle Chat Completions API; '
            'construct it with `BedrockMantleChatModel` instead.'
        )
    if chat and not served_on_chat:
        raise UserError(
            f'Model {model_name!r} is served on the Bedrock Mantle Responses API; '
            'construct it with `BedrockMantleResponsesModel` instead.'
        )


class BedrockMantleResponsesModel(OpenAIResponsesModel):
    """An OpenAI model on Mantle's Responses API: GPT-5.x (`/openai/v1`) or GPT-OSS (`/v1`)."""

    _default_provider = 'bedrock-mantle'

    def __init__(
        self,
        model_name: BedrockMantleModelName,
        *,
        provider: Literal['bedrock-mantle'] | BedrockMantleProvider = 'bedrock-mantle',
        profile: ModelProfileSpec | None = None,
        settings: OpenAIResponsesModelSettings | None = None,
    ) -> None:
        """Configure the model.

        Args:
            model_name: The model's id on Mantle (`'openai.gpt-5.6-luna'`).
            provider: The provider or its name (`'bedrock-mantle'`, or a `BedrockMantleProvider` of your own).
            profile: The model's profile (or a function of the name giving it); the provider's by default.
            settings: Default settings of this model's requests.

        Raises:
            UserError: the model is served on the Chat Completions API, or is not one of OpenAI's.
        """
        super().__init__(model_name, provider=_mantle_provider(provider), profile=profile, settings=settings)
        _check_interface(self, model_name, chat=False)


class BedrockMantleChatModel(OpenAIChatModel):
    """An OpenAI model on Mantle's Chat Completions API (GPT-OSS Safeguard, at `/v1`)."""

    _default_provider = 'bedrock-mantle'

    def __init__(
        self,
        model_name: BedrockMantleModelName,
        *,
        provider: Literal['bedrock-mantle'] | BedrockMantleProvider = 'bedrock-mantle',
        profile: ModelProfileSpec | None = None,
        settings: OpenAIChatModelSettings | ModelSettings | None = None,
    ) -> None:
        """Configure the model.

        Args:
            model_name: The model's id on Mantle (`'openai.gpt-oss-safeguard-20b'`).
            provider: The provider or its name (`'bedrock-mantle'`, or a `BedrockMantleProvider` of your own).
            profile: The model's profile (or a function of the name giving it); the provider's by default.
            settings: Default settings of this model's requests.

        Raises:
            UserError: the model is served on the Responses API, or is not one of OpenAI's.
        """
        super().__init__(model_name, provider=_mantle_provider(provider), profile=profile, settings=settings)
        _check_interface(self, model_name, chat=True)
