"""`SambaNovaProvider`: an OpenAI-compatible provider (see `edgewise.agent.providers.openai`)."""

from ._compatible import SambaNovaProvider as SambaNovaProvider

__all__ = ('SambaNovaProvider',)
