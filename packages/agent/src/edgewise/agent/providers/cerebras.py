"""`CerebrasProvider`: an OpenAI-compatible provider (see `edgewise.agent.providers.openai`)."""

from ._compatible import CerebrasProvider as CerebrasProvider

__all__ = ('CerebrasProvider',)
