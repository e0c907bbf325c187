"""`SystemOneProvider`: where a `POST /v1/systemone` decisions API is (a URL of your choosing: a hosted service, or
a local server such as Ollama's at `http://localhost:11434`) and the key it takes, if any.

`SystemOneModel` (`edgewise.agent.models.system_one`, or `'system-one:clm-latest'`) sends its requests here.
"""

from __future__ import annotations as _annotations

from typing import TYPE_CHECKING

from ..exceptions import UserError
from ..profiles.decision import decision_model_profile
from ._base import HTTPProvider, env_value

if TYPE_CHECKING:
    import httpx

    from ..profiles import ModelProfile

__all__ = ('SystemOneProvider',)


class SystemOneProvider(HTTPProvider):
    """A System One decisions API; the URL comes from `SYSTEM_ONE_BASE_URL` and the key (optional) from
    `SYSTEM_ONE_API_KEY` unless given. Requests are sent once, without retries."""

    def __init__(
        self,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        """Configure the provider.

        Args:
            base_url: The API's URL, with or without a trailing `/v1`; defaults to `SYSTEM_ONE_BASE_URL`.
            api_key: The key sent as a bearer token; defaults to `SYSTEM_ONE_API_KEY`, and none is sent if neither
                is set (a local server needs none).
            http_client: An `httpx.AsyncClient` to send requests with, used as given (and not closed here).

        Raises:
            UserError: no base URL is given or set.
        """
        base_url = base_url or env_value('SYSTEM_ONE_BASE_URL')
        if not base_url:
            raise UserError(
                'Set the `SYSTEM_ONE_BASE_URL` environment variable or pass it via `SystemOneProvider(base_url=...)` '
                'to point the System One provider at the API.'
            )
        api_key = api_key or env_value('SYSTEM_ONE_API_KEY')
        super().__init__(base_url=base_url, api_key=api_key, http_client=http_client, max_retries=0)
        self._key: str | None = api_key

    @property
    def name(self) -> str:
        """The provider's name, `'system-one'`."""
        return 'system-one'

    @property
    def api_key(self) -> str | None:
        """The key sent as a bearer token, or `None` when the API needs none."""
        return self._key

    @staticmethod
    def model_profile(model_name: str) -> ModelProfile | None:
        """The decision model profile (`decision_model_profile`): limits come from the server, not the name."""
        return decision_model_profile(model_name)

    def request_headers(self) -> dict[str, str]:
        """The key as a bearer token, or nothing without a key."""
        return {} if self._key is None else {'authorization': f'Bearer {self._key}'}
