"""`GrokProvider`: an OpenAI-compatible provider (see `edgewise.agent.providers.openai`)."""

from ._compatible import GrokProvider as GrokProvider

__all__ = ('GrokProvider',)
