"""`XaiProvider`: an OpenAI-compatible provider (see `edgewise.agent.providers.openai`)."""

from ._compatible import XaiProvider as XaiProvider

__all__ = ('XaiProvider',)
