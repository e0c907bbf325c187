"""`GroqProvider`: an OpenAI-compatible provider (see `edgewise.agent.providers.openai`)."""

from ._compatible import GroqProvider as GroqProvider

__all__ = ('GroqProvider',)
