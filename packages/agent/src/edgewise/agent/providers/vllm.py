"""`VLLMProvider`: an OpenAI-compatible provider (see `edgewise.agent.providers.openai`)."""

from ._compatible import VLLMProvider as VLLMProvider

__all__ = ('VLLMProvider',)
