"""`VercelProvider`: an OpenAI-compatible provider (see `edgewise.agent.providers.openai`)."""

from ._compatible import VercelProvider as VercelProvider

__all__ = ('VercelProvider',)
