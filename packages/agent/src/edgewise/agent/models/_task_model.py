"""The shape shared by the single-task models beside the chat models: embedding models (`edgewise.agent.embeddings`)
and image generation models (`edgewise.agent.images`).

Each of those packages has the same four pieces, which differ only in the request they make:

- `TaskModel`: the base of a model (its default settings, name, provider and base URL);
- `ProviderBacked`: the name, provider and base URL of a model that talks to a provider's API;
- `TaskModelWrapper`: a model around another that passes everything through;
- `TaskModelFacade`: the object users hold (`Embedder`, `ImageGenerator`): a model found from its name on first use,
  swapped for a block by `override`, and traced with a span when asked;

and the HTTP request of a provider-backed one: `request_headers`, `add_extra_body`, `post_json`.

The packages subclass these with their own types and request methods; nothing here is public.
"""

from __future__ import annotations as _annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar, cast

from .. import _instrument
from ..providers import Provider, infer_provider
from . import _http
from ._instrumentation_settings import InstrumentationSettings

__all__ = (
    'TaskModel',
    'ProviderBacked',
    'TaskModelWrapper',
    'TaskModelFacade',
    'merge_settings',
    'request_headers',
    'add_extra_body',
    'post_json',
)

SettingsT = TypeVar('SettingsT', bound=Mapping[str, Any])
ModelT = TypeVar('ModelT', bound='TaskModel[Any]')


def merge_settings(base: SettingsT | None, overrides: SettingsT | None) -> SettingsT | None:
    """`overrides` over `base` (each key of `overrides` wins); `None` when both are `None`."""
    if base and overrides:
        return cast(SettingsT, {**base, **overrides})
    return base or overrides


class TaskModel(ABC, Generic[SettingsT]):
    """A model of one task: its default settings, and (from subclasses) its name, provider and base URL."""

    _settings: SettingsT | None = None
    _traces_requests: ClassVar[bool] = False
    """Whether the model makes a span per request itself (the instrumented wrappers): a façade then makes none."""

    def __init__(self, *, settings: SettingsT | None = None) -> None:
        """Keep `settings` as the defaults of this model's requests."""
        self._settings = settings

    @property
    def settings(self) -> SettingsT | None:
        """The defaults of this model's requests."""
        return self._settings

    @property
    def base_url(self) -> str | None:
        """The base URL of the provider's API, if the model has one."""
        return None

    @property
    @abstractmethod
    def model_name(self) -> str:
        """The model's name."""
        raise NotImplementedError

    @property
    @abstractmethod
    def system(self) -> str:
        """The provider's name (`'openai'`, ...)."""
        raise NotImplementedError

    def merged_settings(self, settings: SettingsT | None) -> SettingsT:
        """`settings` over the model's defaults (an empty dict when there are neither)."""
        return merge_settings(self._settings, settings) or cast(SettingsT, {})


@dataclass(init=False, repr=False, eq=False)
class ProviderBacked:
    """The name, provider and base URL of a model on a provider's API (listed first among a model's bases).

    The provider and the name stay out of the model's repr (the provider holds the key).
    """

    _model_name: str = field(repr=False)
    _provider: Provider[Any] = field(repr=False)

    def _bind(self, model_name: str, provider: str | Provider[Any]) -> None:
        """Keep the name, and the provider (a name is looked up, its key read from the environment)."""
        self._model_name = model_name
        self._provider = infer_provider(provider) if isinstance(provider, str) else provider

    @property
    def base_url(self) -> str:
        """The provider's base URL."""
        return self._provider.base_url

    @property
    def model_name(self) -> str:
        """The model's name."""
        return self._model_name

    @property
    def system(self) -> str:
        """The provider's name."""
        return self._provider.name


@dataclass(init=False, repr=False, eq=False)
class TaskModelWrapper(Generic[ModelT]):
    """What a wrapper model passes through to `wrapped` (listed first among a wrapper's bases): its name,
    provider, settings and base URL, and every other attribute."""

    wrapped: ModelT
    """The model wrapped."""

    def _wrap(self, wrapped: ModelT | str, infer: Callable[[str], ModelT]) -> None:
        self.wrapped = infer(wrapped) if isinstance(wrapped, str) else wrapped

    @property
    def model_name(self) -> str:
        """The wrapped model's name."""
        return self.wrapped.model_name

    @property
    def system(self) -> str:
        """The wrapped model's provider."""
        return self.wrapped.system

    @property
    def settings(self) -> Any:
        """The wrapped model's defaults."""
        return self.wrapped.settings

    @property
    def base_url(self) -> str | None:
        """The wrapped model's base URL."""
        return self.wrapped.base_url

    def __getattr__(self, item: str) -> Any:
        if item == 'wrapped':  # not set yet (during unpickling): no endless recursion
            raise AttributeError(item)
        return getattr(self.wrapped, item)


class TaskModelFacade(ABC, Generic[ModelT, SettingsT]):
    """The object users hold: a model (or its name until first use), default settings, `override`, and a span per
    request when `instrument` (or the class's `instrument_all`) says so.

    Subclasses give `_infer` (the model of a name), `_span_name`, and `instrument_all` (which sets the class's
    `_instrument_default`).
    """

    instrument: InstrumentationSettings | bool | None
    _instrument_default: ClassVar[InstrumentationSettings | bool] = False
    _span_name: ClassVar[str]

    def __init__(
        self,
        model: ModelT | str,
        *,
        settings: SettingsT | None = None,
        defer_model_check: bool = True,
        instrument: InstrumentationSettings | bool | None = None,
    ) -> None:
        self._model: ModelT | str = model if defer_model_check else self._infer(model)
        self._settings = settings
        self.instrument = instrument
        self._override_model: ContextVar[ModelT | None] = ContextVar('_override_model', default=None)

    @property
    def model(self) -> ModelT | str:
        """The model (or its name, until first use)."""
        return self._model

    @staticmethod
    @abstractmethod
    def _infer(model: ModelT | str) -> ModelT:
        """The model of `model` (a name is looked up)."""
        raise NotImplementedError

    @contextmanager
    def _override(self, model: ModelT | str | None) -> Iterator[None]:
        token = self._override_model.set(self._infer(model)) if model is not None else None
        try:
            yield
        finally:
            if token is not None:
                self._override_model.reset(token)

    def _get_model(self) -> ModelT:
        if (overridden := self._override_model.get()) is not None:
            return overridden
        model = self._model = self._infer(self._model)
        return model

    def _request(self, settings: SettingsT | None) -> tuple[ModelT, SettingsT | None, AbstractContextManager[Any]]:
        """The model of a request, the facade's settings under `settings`, and the request's span (if traced)."""
        model = self._get_model()
        instrument = self.instrument if self.instrument is not None else type(self)._instrument_default
        traced = instrument is not False and not model._traces_requests
        span = _instrument.span_if(traced, self._span_name, model_name=model.model_name)
        return model, merge_settings(self._settings, settings), span


def request_headers(provider: Provider[Any], settings: Mapping[str, Any]) -> dict[str, str]:
    """The provider's headers (its key among them) under the request's `extra_headers`."""
    return {**provider.request_headers(), **(settings.get('extra_headers') or {})}


def add_extra_body(body: dict[str, Any], settings: Mapping[str, Any]) -> list[str]:
    """`extra_body`'s keys put into `body`; the names of the settings ignored (`extra_body` when it is no dict)."""
    extra_body = settings.get('extra_body')
    if not extra_body:
        return []
    if isinstance(extra_body, Mapping) and all(isinstance(key, str) for key in extra_body):
        body.update(extra_body)
        return []
    return ['extra_body']


async def post_json(
    provider: Provider[Any],
    path: str,
    body: Mapping[str, Any],
    headers: Mapping[str, str],
    *,
    model_name: str,
    operation: str,
    endpoint_name: str,
    **call_fields: Any,
) -> Any:
    """POST `body` to `path` under the provider's base URL (as `Provider.endpoint_url` places it: Azure's
    deployments), with the provider's retries and errors (`call_fields` replace those of the call: another
    `http_error` or `error_key`), and return the JSON answer.

    Raises:
        ModelHTTPError: the API answered with an error (after retries).
        ModelAPIError: the API could not be reached (after retries).
        UnexpectedModelBehavior: the answer is not JSON.
    """
    call = _http.provider_call(
        provider,
        provider.endpoint_url(f'/{path}', model_name),
        body,
        headers,
        model_name=model_name,
        operation=operation,
        endpoint_name=endpoint_name,
    )
    return await _http.post_for_data(dataclasses.replace(call, **call_fields) if call_fields else call)
