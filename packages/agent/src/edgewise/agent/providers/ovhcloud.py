"""`OVHcloudProvider`: an OpenAI-compatible provider (see `edgewise.agent.providers.openai`)."""

from ._compatible import OVHcloudProvider as OVHcloudProvider

__all__ = ('OVHcloudProvider',)
