"""`GrokProvider`: pydantic-ai 1.x's name of xAI's provider; use `edgewise.agent.providers.xai.XaiProvider`."""

from typing_extensions import deprecated

from ._compatible import GrokProvider as _GrokProvider

__all__ = ('GrokProvider',)


@deprecated('`GrokProvider` is deprecated: use `XaiProvider` (`XAI_API_KEY`), as in pydantic-ai 2.x.')
class GrokProvider(_GrokProvider):
    """Deprecated: xAI's OpenAI-compatible API under the `grok` name (`GROK_API_KEY`); use `XaiProvider`."""
