"""`LiteLLMProvider`: an OpenAI-compatible provider (see `edgewise.agent.providers.openai`)."""

from ._compatible import LiteLLMProvider as LiteLLMProvider

__all__ = ('LiteLLMProvider',)
