"""Crusoe: `CrusoeModel`, the Chat Completions API of Crusoe's serverless inference.

Crusoe serves open-weight models of many labs behind one endpoint; `CrusoeProvider` picks each one's profile by
the vendor prefix of its name (`deepseek-ai/`, `zai-org/`, `openai/`, ...). Every model decodes with a grammar, so
`NativeOutput` works across the catalog. The request and response are `OpenAIChatModel`'s.
"""

from __future__ import annotations as _annotations

from typing import Any, Literal

from ..profiles import ModelProfileSpec
from ..providers import Provider
from ..settings import ModelSettings
from .openai import OpenAIChatModel

__all__ = ('CrusoeModel', 'CrusoeModelName')

LatestCrusoeModelNames = Literal[
    'deepseek-ai/DeepSeek-V4.1-Flash',
    'google/gemma-4-31b-it',
    'nvidia/Nemotron-3-Nano-Omni-Reasoning-30B-A3B',
    'nvidia/nemotron-3.5-lightning-30b-a3b',
    'nvidia/nemotron-3.5-super-vl-120b-a12b',
    'openai/gpt-oss-120b',
    'qwen/Qwen3.8-27B',
    'zai-org/GLM-5.3',
    'zai-org/GLM-5.3-Flash',
]
"""Models Crusoe serves at the time of writing."""

CrusoeModelName = str | LatestCrusoeModelNames
"""The name of a model on Crusoe, with its vendor prefix: any string, the known ones listed for completion."""


class CrusoeModel(OpenAIChatModel):
    """A model on Crusoe (`POST {base_url}/chat/completions`), streamed or not.

    `CrusoeModel('openai/gpt-oss-120b')` reads `CRUSOE_API_KEY`.
    """

    _default_provider = 'crusoe'

    def __init__(
        self,
        model_name: CrusoeModelName,
        *,
        provider: Literal['crusoe'] | Provider[Any] = 'crusoe',
        profile: ModelProfileSpec | None = None,
        settings: ModelSettings | None = None,
    ) -> None:
        """Configure the model.

        Args:
            model_name: The model's name on Crusoe, with its vendor prefix (`'zai-org/GLM-5.3'`).
            provider: The provider or its name (`'crusoe'`, or a `CrusoeProvider` of your own).
            profile: The model's profile (or a function of the name giving it); the provider's by default.
            settings: Default settings of this model's requests.
        """
        super().__init__(model_name, provider=provider, profile=profile, settings=settings)
