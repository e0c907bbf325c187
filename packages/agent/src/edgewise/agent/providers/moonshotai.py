"""`MoonshotAIProvider`: an OpenAI-compatible provider (see `edgewise.agent.providers.openai`)."""

from ._compatible import MoonshotAIProvider as MoonshotAIProvider

__all__ = ('MoonshotAIProvider',)
