"""`ZaiProvider`: an OpenAI-compatible provider (see `edgewise.agent.providers.openai`)."""

from ._compatible import ZaiProvider as ZaiProvider

__all__ = ('ZaiProvider',)
