"""`OllamaProvider`: an OpenAI-compatible provider (see `edgewise.agent.providers.openai`)."""

from ._compatible import OllamaProvider as OllamaProvider

__all__ = ('OllamaProvider',)
