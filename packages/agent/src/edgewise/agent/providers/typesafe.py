"""`TypeSafeProvider`: TypeSafe's API (`https://api.typesafe.ai`), which serves the Jev decision models,
authenticated by an API key sent as a bearer token.

Edgewise has the provider and the profile of Jev (`edgewise.agent.profiles.typesafe`) but not yet pydantic-ai
2.68's `TypeSafeModel`, so `'typesafe:jev-latest'` is not a model name Edgewise can run (see docs/compatibility.md).
"""

from __future__ import annotations as _annotations

from typing import TYPE_CHECKING

from ..profiles.typesafe import typesafe_model_profile
from ._base import HTTPProvider, env_value, missing_key_error

if TYPE_CHECKING:
    import httpx

    from ..profiles import ModelProfile

__all__ = ('TypeSafeProvider',)

_DEFAULT_BASE_URL = 'https://api.typesafe.ai'


class TypeSafeProvider(HTTPProvider):
    """TypeSafe's API; the key comes from `TYPESAFE_API_KEY` and the base URL from `TYPESAFE_BASE_URL` unless given."""

    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        """Configure the provider.

        Args:
            api_key: The API key; defaults to `TYPESAFE_API_KEY`.
            base_url: The API's base URL; defaults to `TYPESAFE_BASE_URL`, else `https://api.typesafe.ai`.
            http_client: An `httpx.AsyncClient` to send requests with, used as given (and not closed here).

        Raises:
            UserError: no API key is given or set.
        """
        api_key = api_key or env_value('TYPESAFE_API_KEY')
        if not api_key:
            raise missing_key_error(('TYPESAFE_API_KEY',), 'TypeSafeProvider', 'the TypeSafe provider')
        base_url = base_url or env_value('TYPESAFE_BASE_URL') or _DEFAULT_BASE_URL
        super().__init__(base_url=base_url, api_key=api_key, http_client=http_client, max_retries=2)
        self._key: str = api_key

    @property
    def name(self) -> str:
        """The provider's name, `'typesafe'`."""
        return 'typesafe'

    @staticmethod
    def model_profile(model_name: str) -> ModelProfile | None:
        """Jev's profile (`typesafe_model_profile`), whatever the version named."""
        return typesafe_model_profile(model_name)

    def request_headers(self) -> dict[str, str]:
        """The key, as a bearer token."""
        return {'authorization': f'Bearer {self._key}'}
