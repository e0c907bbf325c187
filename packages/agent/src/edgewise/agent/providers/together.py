"""`TogetherProvider`: an OpenAI-compatible provider (see `edgewise.agent.providers.openai`)."""

from ._compatible import TogetherProvider as TogetherProvider

__all__ = ('TogetherProvider',)
