"""`FireworksProvider`: an OpenAI-compatible provider (see `edgewise.agent.providers.openai`)."""

from ._compatible import FireworksProvider as FireworksProvider

__all__ = ('FireworksProvider',)
