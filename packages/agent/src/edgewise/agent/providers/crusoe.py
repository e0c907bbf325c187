"""`CrusoeProvider`: an OpenAI-compatible provider (see `edgewise.agent.providers.openai`)."""

from ._compatible import CrusoeProvider as CrusoeProvider

__all__ = ('CrusoeProvider',)
