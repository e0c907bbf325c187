"""`OpenRouterProvider`: an OpenAI-compatible provider (see `edgewise.agent.providers.openai`)."""

from ._compatible import OpenRouterProvider as OpenRouterProvider

__all__ = ('OpenRouterProvider',)
