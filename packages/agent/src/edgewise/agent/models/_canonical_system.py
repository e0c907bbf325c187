"""Which system verifies the signed or encrypted data of a response (pydantic-ai 2.68's `_canonical_system`):
thinking signatures, encrypted reasoning and compaction items, checked by the API's own key on replay rather than
looked up in stored state. A response records the system in `ModelResponse.canonical_system` where its provider
name does not tell it; older histories are read by name, with the names pydantic-ai used before."""

from __future__ import annotations as _annotations

import functools
import re
from urllib.parse import urlsplit

from .._messages.model_messages import ModelResponse

__all__ = ('accepts_stateless_artifact', 'stateless_artifact_system')

_FORMER_NAMES: dict[str, str] = {
    'google-gla': 'google',
    'google-vertex': 'google-cloud',
    'grok': 'xai',
    # Its system always differs from its name; histories from before responses recorded it.
    'openai-codex': 'openai',
}
_GOOGLE_NAMES = frozenset({'google', 'google-cloud'})


# The global or a regional Google Cloud endpoint, or a data residency one.
@functools.cache
def _google_cloud_host() -> re.Pattern[str]:
    # Compiled by the first Google model's request, not at import.
    return re.compile(r'(?:[a-z0-9-]+-)?aiplatform\.googleapis\.com|aiplatform\.[a-z0-9-]+\.rep\.googleapis\.com')


def _google_system_of(url: str | None) -> str | None:
    """`'google'` or `'google-cloud'` for a first-party Gemini API or Google Cloud URL (another URL, a proxy's
    say, tells neither)."""
    host = urlsplit(url).hostname or '' if url else ''
    if host == 'generativelanguage.googleapis.com':
        return 'google'
    return 'google-cloud' if _google_cloud_host().fullmatch(host) else None


def stateless_artifact_system(response: ModelResponse, provider_name: str) -> tuple[str, bool]:
    """The system of the signed data a part from `provider_name` carries in `response`, and whether it was read
    from the name alone (no `canonical_system` recorded, no telling Google URL)."""
    if provider_name == response.provider_name:
        if response.canonical_system is not None:
            return response.canonical_system, False
        if provider_name in _GOOGLE_NAMES and (system := _google_system_of(response.provider_url)):
            return system, False
    return _FORMER_NAMES.get(provider_name, provider_name), True


def accepts_stateless_artifact(
    response: ModelResponse,
    provider_name: str | None,
    *,
    system: str,
    canonical_system: str,
    compatible_systems: frozenset[str],
) -> bool:
    """Whether a receiver (`system`, `canonical_system`, `compatible_systems`) verifies the signed data a part from
    `provider_name` carries in `response`: its system is the receiver's or a compatible one, or, read from the name
    alone, the name is the receiver's own `system` (a history from before the system was recorded)."""
    if provider_name is None:
        return False
    artifact_system, from_name = stateless_artifact_system(response, provider_name)
    if artifact_system == canonical_system or artifact_system in compatible_systems:
        return True
    return from_name and provider_name == system
