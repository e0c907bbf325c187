"""`GitHubProvider`: GitHub Models, an OpenAI-compatible API that GitHub retired (deprecated, as in pydantic-ai 2.x)."""

from typing_extensions import deprecated

from .._warnings import PydanticAIDeprecationWarning
from ._compatible import GitHubProvider as _GitHubProvider

__all__ = ('GitHubProvider',)


@deprecated(
    '`GitHubProvider` is deprecated and will be removed in v3: GitHub retired GitHub Models on 2026-07-30, and its '
    'inference API no longer answers. Use another provider.',
    category=PydanticAIDeprecationWarning,
)
class GitHubProvider(_GitHubProvider):
    """Deprecated: GitHub Models (`https://models.github.ai/inference`, key from `GITHUB_API_KEY`), now retired.

    Model names are OpenAI's (`gpt-4o`) or vendor-prefixed (`meta/llama-3.3-70b-instruct`, `xai/grok-3`,
    `mistral-ai/...`, `cohere/...`, `deepseek/...`, `microsoft/...`), each given its family's profile.
    """
