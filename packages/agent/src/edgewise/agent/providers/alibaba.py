"""`AlibabaProvider`: an OpenAI-compatible provider (see `edgewise.agent.providers.openai`)."""

from ._compatible import AlibabaProvider as AlibabaProvider

__all__ = ('AlibabaProvider',)
