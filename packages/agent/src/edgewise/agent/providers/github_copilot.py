"""`GitHubCopilotProvider`: the Chat Completions API of a GitHub Copilot subscription (`api.githubcopilot.com`).

Copilot serves several vendors' models (Anthropic, OpenAI, Google, xAI, Moonshot AI, GitHub's own) under bare ids
such as `claude-sonnet-4.5` or `gpt-5.4`; the profile of each is its family's, found by the id's prefix, with what
Copilot's gateway does differently on top. The token is sent as it is given (a bearer token): renewing it is the
application's business, as in pydantic-ai 2.68; `GitHubCopilotOAuthFlow` (GitHub's device login) obtains one.
"""

from __future__ import annotations as _annotations

from collections.abc import Callable
from types import MappingProxyType
from typing import TYPE_CHECKING

from ..profiles import ModelProfile, merge_profile
from ..profiles.anthropic import anthropic_model_profile
from ..profiles.google import google_model_profile
from ..profiles.grok import grok_model_profile
from ..profiles.moonshotai import moonshotai_model_profile
from ..profiles.openai import OpenAIJsonSchemaTransformer, OpenAIModelProfile, openai_model_profile
from ._base import HTTPProvider, env_value, missing_key_error
from ._github_device_flow import (
    GitHubCopilotCredentials as GitHubCopilotCredentials,
)
from ._github_device_flow import (
    GitHubCopilotDeviceAuthorization as GitHubCopilotDeviceAuthorization,
)
from ._github_device_flow import (
    GitHubCopilotOAuthFlow as GitHubCopilotOAuthFlow,
)

if TYPE_CHECKING:
    import httpx

__all__ = (
    'GitHubCopilotCredentials',
    'GitHubCopilotDeviceAuthorization',
    'GitHubCopilotOAuthFlow',
    'GitHubCopilotProvider',
)

_API_KEY_ENVS = ('GITHUB_COPILOT_API_KEY', 'GITHUB_COPILOT_API_TOKEN', 'COPILOT_GITHUB_TOKEN')
"""Where the Copilot token is looked for, in order. `GITHUB_TOKEN` and `GH_TOKEN` are left alone on purpose: a
token meant for GitHub's own API is not sent to Copilot."""

_BASE_URL_ENVS = ('GITHUB_COPILOT_BASE_URL', 'COPILOT_API_URL', 'GITHUB_COPILOT_API_BASE')
"""Where another base URL (an enterprise host, a local proxy) is looked for, in order."""

_DEFAULT_BASE_URL = 'https://api.githubcopilot.com'
_DEFAULT_INTEGRATION_ID = 'vscode-chat'

_CLIENT_HEADERS = MappingProxyType(
    {
        'editor-version': 'vscode/1.95.0',
        'editor-plugin-version': 'copilot-chat/0.26.7',
        'openai-intent': 'conversation-panel',
        'x-github-api-version': '2025-04-01',
    }
)
"""The editor identification Copilot clients send (some enterprise hosts are said to require `editor-version`)."""

_NO_SAMPLING = ('temperature', 'top_p')
"""The OpenAI-shaped names of the sampling settings that the newest Claude models refuse."""

_FAMILIES: dict[str, Callable[[str], ModelProfile | None]] = {
    # Copilot writes Claude versions with dots (`claude-haiku-4.5`); Anthropic's profile knows them hyphenated. The
    # rewrite stays Claude-only: the Grok and Kimi profiles match dotted ids.
    'claude-': lambda name: anthropic_model_profile(name.replace('.', '-')),
    'gpt-': openai_model_profile,
    'o1': openai_model_profile,
    'o3': openai_model_profile,
    'o4': openai_model_profile,
    'gemini-': google_model_profile,
    'grok-': grok_model_profile,
    'kimi-': moonshotai_model_profile,
    'mai-': openai_model_profile,
    'oswe': openai_model_profile,
    'raptor': openai_model_profile,
    'exec-agent-': openai_model_profile,
}
"""The model family of each id prefix on Copilot (GitHub's own models speak OpenAI's dialect)."""


def _github_copilot_model_profile(model_name: str) -> ModelProfile:
    """The profile of a model served by Copilot: OpenAI's schema dialect, the family's profile, Copilot's own keys.

    A leading `copilot/` (a namespace some Copilot clients write) is ignored here; the id is sent as given.
    """
    name = model_name.removeprefix('copilot/').casefold()
    family = next((found(name) for prefix, found in _FAMILIES.items() if name.startswith(prefix)), None)
    # Copilot answers `max_tokens` with a bare 400 and takes `max_completion_tokens`, whatever the family.
    gateway = OpenAIModelProfile(openai_chat_supports_max_completion_tokens=True)
    if name.startswith(('claude-', 'gemini-')):
        gateway['openai_chat_thinking_field'] = 'reasoning_text'  # where Copilot puts these families' reasoning
    if family is not None and family.get('anthropic_disallows_sampling_settings'):
        gateway['openai_unsupported_model_settings'] = _NO_SAMPLING
    if name.startswith('gemini-'):
        gateway['json_schema_transformer'] = OpenAIJsonSchemaTransformer  # tools go out in OpenAI's shape here
    return merge_profile(OpenAIModelProfile(json_schema_transformer=OpenAIJsonSchemaTransformer), family, gateway)


class GitHubCopilotProvider(HTTPProvider):
    """GitHub Copilot's OpenAI-compatible Chat Completions API (`POST {base_url}/chat/completions`).

    Only the ids whose Copilot catalog entry lists `/chat/completions` are reachable (not xAI's Grok ids, served on
    the Responses API alone); which ids a subscription reaches is listed by `GET {base_url}/models`. This is not
    `GitHubProvider` (GitHub Models, retired).
    """

    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        integration_id: str | None = None,
        http_client: httpx.AsyncClient | None = None,
        max_retries: int = 2,
    ) -> None:
        """Configure the provider.

        Args:
            api_key: The Copilot token, sent as a bearer token; defaults to `GITHUB_COPILOT_API_KEY`, then
                `GITHUB_COPILOT_API_TOKEN`, then `COPILOT_GITHUB_TOKEN`.
            base_url: The Copilot API's base URL; defaults to `GITHUB_COPILOT_BASE_URL`, `COPILOT_API_URL` or
                `GITHUB_COPILOT_API_BASE`, then `https://api.githubcopilot.com`.
            integration_id: The `copilot-integration-id` header, which Copilot ties quotas and the model list to;
                defaults to `GITHUB_COPILOT_INTEGRATION_ID`, then `vscode-chat`.
            http_client: An `httpx.AsyncClient` to send requests with, used as given (and not closed here).
            max_retries: How many times a failed request (429, 5xx, timeout, dropped connection) is retried.

        Raises:
            UserError: no token is given or set in the environment.
        """
        api_key = api_key or env_value(*_API_KEY_ENVS)
        if not api_key:
            raise missing_key_error(_API_KEY_ENVS[:1], 'GitHubCopilotProvider', 'the GitHub Copilot provider')
        self._integration_id = integration_id or env_value('GITHUB_COPILOT_INTEGRATION_ID') or _DEFAULT_INTEGRATION_ID
        super().__init__(
            base_url=base_url or env_value(*_BASE_URL_ENVS) or _DEFAULT_BASE_URL,
            api_key=api_key,
            http_client=http_client,
            max_retries=max_retries,
        )

    @property
    def name(self) -> str:
        """`'github-copilot'`."""
        return 'github-copilot'

    @property
    def integration_id(self) -> str:
        """The `copilot-integration-id` sent with every request."""
        return self._integration_id

    @staticmethod
    def model_profile(model_name: str) -> ModelProfile | None:
        """The profile of a Copilot model id (see `_github_copilot_model_profile`)."""
        return _github_copilot_model_profile(model_name)

    def request_headers(self) -> dict[str, str]:
        """The editor headers, the integration id and the token (`authorization`)."""
        return {
            **_CLIENT_HEADERS,
            'copilot-integration-id': self._integration_id,
            'authorization': f'Bearer {self._api_key}',
        }
