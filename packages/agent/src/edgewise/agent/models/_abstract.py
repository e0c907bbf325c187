"""`AbstractModel`: what every kind of model is known by (its name, its provider, its id), as pydantic-ai 2.68's.

`Model` (request and response) builds on it, through `ConfiguredModel` (settings, profile, provider); a model of
another kind (a realtime one, say) can too, and code that only names, logs or enters a model can take any
`AbstractModel`.
"""

from __future__ import annotations as _annotations

from abc import ABC, abstractmethod
from types import TracebackType
from typing import Self

__all__ = ('AbstractModel',)


class AbstractModel(ABC):
    """A model's identity: `model_name` and `system` to implement; `model_id`, `label`, `base_url` and
    `context_window` follow (or are overridden), and `async with model:` holds whatever it needs open."""

    @property
    @abstractmethod
    def model_name(self) -> str:
        """The model's name."""
        raise NotImplementedError

    @property
    @abstractmethod
    def system(self) -> str:
        """The provider's name, as used in OpenTelemetry attributes (`gen_ai.system`)."""
        raise NotImplementedError

    @property
    def model_id(self) -> str:
        """The model's full id, `'<system>:<model_name>'` (`'openai:gpt-5'`, say)."""
        return f'{self.system}:{self.model_name}'

    @property
    def label(self) -> str:
        """`<system>:<model_name>`, used in spans and error messages."""
        return self.model_id

    @property
    def base_url(self) -> str | None:
        """The base URL of the API requests go to; `None` when unknown or when the model makes no HTTP requests."""
        return None

    @property
    def context_window(self) -> int | None:
        """The most tokens the model takes in one request; `None` when unknown."""
        return None

    async def __aenter__(self) -> Self:
        """Nothing to open by default."""
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        """Nothing to close by default."""
        return None
