"""`Provider`: the interface of every provider (a private module, so that provider modules import it without
importing the package's `infer_provider`).

httpx is imported when a provider first makes its client, not with this module: importing a model or provider
module stays cheap, and a program pays for httpx only when it talks to an API.
"""

from __future__ import annotations as _annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Generic, Self
from urllib.parse import urlsplit

from typing_extensions import TypeVar

from ..exceptions import UserError
from ..profiles import ModelProfile

if TYPE_CHECKING:
    import httpx

__all__ = ('Provider', 'HTTPProvider', 'default_timeout', 'own_http_client', 'env_value', 'missing_key_error')

InterfaceClient = TypeVar('InterfaceClient', default='httpx.AsyncClient')


def default_timeout() -> httpx.Timeout:
    """The timeout of the HTTP clients providers make: generous reads (long generations), quick connects."""
    import httpx

    return httpx.Timeout(600.0, connect=5.0)


def own_http_client() -> httpx.AsyncClient:
    """The client a provider makes for itself: `AsyncPoolTransport`'s pool, with the limits of the official SDKs.

    When the environment names a proxy (`HTTPS_PROXY`, `ALL_PROXY`, ...), the client is httpx's own, which goes
    through it (`AsyncPoolTransport` does not speak to proxies).
    """
    import urllib.request

    import httpx

    if any(scheme in ('http', 'https', 'all') for scheme in urllib.request.getproxies()):
        return httpx.AsyncClient(timeout=default_timeout())
    from ._pool import AsyncPoolTransport

    return httpx.AsyncClient(timeout=default_timeout(), transport=AsyncPoolTransport())


_DEFAULT_PORTS = {'http': 80, 'https': 443}


def _endpoint_key(url: str) -> str:
    """`url` in a form where two spellings of one endpoint are equal: scheme and host in lowercase, the port always
    written, the path without a trailing `/`. A URL that cannot be parsed (a bad port, an unclosed IPv6 bracket) is
    compared as it is."""
    try:
        parts = urlsplit(url.strip())
        scheme = parts.scheme.lower()
        port = parts.port or _DEFAULT_PORTS.get(scheme)
    except ValueError:
        return url
    host = parts.hostname or ''
    query = f'?{parts.query}' if parts.query else ''
    return f'{scheme}://{host}{f":{port}" if port else ""}{parts.path.rstrip("/")}{query}'


class Provider(ABC, Generic[InterfaceClient]):
    """Where requests to a model API go: the base URL, the credentials and the HTTP client.

    Subclasses give `name`, `base_url` and `client`, and usually `model_profile`. Used as an async context
    manager, a provider closes the HTTP client it made itself when the last `async with` exits.
    """

    max_retries: int = 2
    """How many times a failed request (429, 5xx, timeout, dropped connection) is retried."""
    _made_http_client: httpx.AsyncClient | None = None
    """The HTTP client the provider made for itself, if it made one (closed when the last `async with` exits)."""
    _entered: int = 0

    @property
    @abstractmethod
    def name(self) -> str:
        """The provider's name, as in `'openai:gpt-4o'` (and in `ModelResponse.provider_name`)."""
        raise NotImplementedError

    @property
    @abstractmethod
    def base_url(self) -> str:
        """The base URL of the provider's API."""
        raise NotImplementedError

    @property
    def canonical_system(self) -> str:
        """The service behind the provider, whose keys verify the signed or encrypted data its responses carry
        (thinking signatures, encrypted reasoning): `name` unless a provider says otherwise (a proxy returning
        another service's data overrides it). Recorded on responses as `ModelResponse.canonical_system` where it
        differs from the name, or where the name alone does not tell it (`_canonical_system_follows_client`)."""
        return self.name

    @property
    def compatible_systems(self) -> frozenset[str]:
        """Other canonical systems whose signed or encrypted data the provider also verifies (none by default)."""
        return frozenset()

    def shares_server_state_with(self, provider_url: str) -> bool:
        """Whether state the API keeps by id (stored responses for `previous_response_id`, output item ids, code
        execution containers) made at the endpoint `provider_url` can be looked up through this provider.

        Models ask it with a response's `ModelResponse.provider_url` (`Model.accepts_server_state`): ids go back only
        where they resolve, while the rest of the response (text, tool calls, verified encrypted data) is sent
        anyway. By default the endpoint is this provider's `base_url`, compared without regard to the case of the
        scheme and host, an omitted default port or a trailing `/`. A provider reaching one API under two URLs (a
        proxy's alias of it, say) overrides this.
        """
        return _endpoint_key(provider_url) == _endpoint_key(self.base_url)

    @property
    def _canonical_system_follows_client(self) -> bool:
        """Whether responses always record `canonical_system`, because the provider's name stands for more than one
        system (`google` for the Gemini API or Google Cloud in pydantic-ai 2.68, `openai` for OpenAI or Azure)."""
        return False

    @property
    @abstractmethod
    def client(self) -> InterfaceClient:
        """The client requests go through."""
        raise NotImplementedError

    @staticmethod
    def model_profile(model_name: str) -> ModelProfile | None:
        """The profile of the named model, if the provider knows one."""
        return None

    def request_headers(self) -> dict[str, str]:
        """Headers every request carries (credentials among them: never log them)."""
        return {}

    def endpoint_url(self, path: str, model_name: str) -> str:
        """The URL of the API's endpoint `path` (such as `'/chat/completions'`) for a request to `model_name`.

        The base URL followed by the path, unless the service puts the model or an API version in the URL
        (Azure OpenAI's deployments).
        """
        return f'{self.base_url}{path}'

    def _made_client(self) -> httpx.AsyncClient:
        """The client the provider makes for itself: made on first use, and again once the last one was closed."""
        made = self._made_http_client
        if made is None or made.is_closed:
            made = self._made_http_client = self._new_http_client()
        return made

    def _new_http_client(self) -> httpx.AsyncClient:
        """A new client of the provider's own (`own_http_client`; a provider whose requests need more, such as an
        auth, adds it here)."""
        return own_http_client()

    async def __aenter__(self) -> Self:
        self._entered += 1
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._entered == 0:
            return
        self._entered -= 1
        if self._entered == 0 and self._made_http_client is not None:
            await self._made_http_client.aclose()

    def __repr__(self) -> str:
        return f'{type(self).__name__}(name={self.name}, base_url={self.base_url})'


class HTTPProvider(Provider['httpx.AsyncClient']):
    """A provider over a plain `httpx.AsyncClient`: its base URL, key and client fixed at construction.

    Subclasses find their key and base URL (each from its own environment variables), pass them here, and
    give `name`, `model_profile` and the auth headers in `request_headers`.
    """

    def __init__(
        self, *, base_url: str, api_key: str | None, http_client: httpx.AsyncClient | None, max_retries: int
    ) -> None:
        """Keep the base URL (without a trailing slash), the key, the client given (if any) and the retries."""
        self._base_url = base_url.rstrip('/')
        self._api_key = api_key
        self._http_client = http_client
        self.max_retries = max_retries

    @property
    def base_url(self) -> str:
        """The API's base URL (without a trailing slash)."""
        return self._base_url

    @property
    def client(self) -> httpx.AsyncClient:
        """The HTTP client: the one given, else the provider's own (made on first use, again after closing)."""
        if self._http_client is not None:
            return self._http_client
        return self._made_client()

    @property
    def _own_http_client(self) -> httpx.AsyncClient | None:
        """The client the provider made for itself (pydantic-ai's private name, which its tests read), made on first
        reading; once closed, it stays the closed one until the provider is used or entered again. `None` when a
        client was given."""
        if self._http_client is not None:
            return None
        return self._made_http_client or self.client

    async def __aenter__(self) -> Self:
        if self._http_client is None and self._made_http_client is not None and self._made_http_client.is_closed:
            self._made_http_client = self._new_http_client()  # entered again after the last exit closed it
        return await super().__aenter__()


def env_value(*names: str) -> str | None:
    """The value of the first of the environment variables `names` set to a non-empty value, if any."""
    return next((value for name in names if (value := os.getenv(name))), None)


def missing_key_error(env_names: Sequence[str], class_name: str, service: str) -> UserError:
    """The error of a provider whose API key is neither given nor set in `env_names`, for using `service`."""
    variables = ' or '.join(f'`{env}`' for env in env_names)
    noun = 'variable' if len(env_names) == 1 else 'variables'
    return UserError(
        f'Set the {variables} environment {noun} or pass it via `{class_name}(api_key=...)` to use {service}.'
    )
