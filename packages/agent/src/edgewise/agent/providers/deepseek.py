"""`DeepSeekProvider`: an OpenAI-compatible provider (see `edgewise.agent.providers.openai`)."""

from ._compatible import DeepSeekProvider as DeepSeekProvider

__all__ = ('DeepSeekProvider',)
