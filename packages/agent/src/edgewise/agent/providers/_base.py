"""`Provider`: the interface of every provider (a private module, so that provider modules import it without
importing the package's `infer_provider`).
"""

from __future__ import annotations as _annotations

from abc import ABC, abstractmethod
from types import TracebackType
from typing import Generic, Self

import httpx
from typing_extensions import TypeVar

from ..profiles import ModelProfile

__all__ = ('Provider', 'DEFAULT_TIMEOUT')

InterfaceClient = TypeVar('InterfaceClient', default=httpx.AsyncClient)

DEFAULT_TIMEOUT = httpx.Timeout(600.0, connect=5.0)
"""The timeout of the HTTP clients providers make: generous reads (long generations), quick connects."""


class Provider(ABC, Generic[InterfaceClient]):
    """Where requests to a model API go: the base URL, the credentials and the HTTP client.

    Subclasses give `name`, `base_url` and `client`, and usually `model_profile`. Used as an async context
    manager, a provider closes the HTTP client it made itself when the last `async with` exits.
    """

    max_retries: int = 2
    """How many times a failed request (429, 5xx, timeout, dropped connection) is retried."""
    _own_http_client: httpx.AsyncClient | None = None
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

    async def __aenter__(self) -> Self:
        self._entered += 1
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._entered == 0:
            return
        self._entered -= 1
        if self._entered == 0 and self._own_http_client is not None:
            await self._own_http_client.aclose()

    def __repr__(self) -> str:
        return f'{type(self).__name__}(name={self.name}, base_url={self.base_url})'
