"""`MetaProvider`: an OpenAI-compatible provider (see `edgewise.agent.providers.openai`)."""

from ._compatible import MetaProvider as MetaProvider

__all__ = ('MetaProvider',)
