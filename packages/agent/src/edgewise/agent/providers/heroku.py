"""`HerokuProvider`: an OpenAI-compatible provider (see `edgewise.agent.providers.openai`)."""

from ._compatible import HerokuProvider as HerokuProvider

__all__ = ('HerokuProvider',)
