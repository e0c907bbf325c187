"""`NebiusProvider`: an OpenAI-compatible provider (see `edgewise.agent.providers.openai`)."""

from ._compatible import NebiusProvider as NebiusProvider

__all__ = ('NebiusProvider',)
