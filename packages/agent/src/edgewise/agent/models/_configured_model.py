"""`ConfiguredModel`, the part of `Model` that holds what a model is configured with (its default settings, its
profile and its provider) and answers what follows from them: the modes and native tools it renders, its context
window, its prompt-cache retention, and the signed data and server state it accepts back.

`Model` (in `_model`) adds the requests themselves on top of it; code that needs only these answers may take a
`ConfiguredModel`.
"""

from __future__ import annotations as _annotations

import warnings
from datetime import timedelta
from types import TracebackType
from typing import TYPE_CHECKING, Any, ClassVar, Self

from .._cost import lookup_context_window
from .._messages.model_messages import ModelResponse, ModelResponsePart
from .._warnings import PydanticAIDeprecationWarning
from ..native_tools import AbstractNativeTool
from ..profiles import ModelProfile, ModelProfileSpec, ToolAdditionMode, ToolDeferralMode, resolve_profile
from ..settings import ModelSettings, merge_model_settings
from ._abstract import AbstractModel
from ._canonical_system import accepts_stateless_artifact
from ._prompt_cache import cache_retention

if TYPE_CHECKING:
    from ..providers import Provider

__all__ = ('ConfiguredModel',)


class ConfiguredModel(AbstractModel):
    """A model's settings, profile and provider, and what they decide (the base of `Model`)."""

    _settings: ModelSettings | None = None
    _profile_spec: ModelProfileSpec | None = None
    _resolved_profile: ModelProfile | None = None
    _default_profile: ClassVar[ModelProfile] = {}
    """The class's own profile keys over `DEFAULT_PROFILE` (subclasses set their own); `profile=` merges over it."""
    supported_tool_deferral_modes: ClassVar[frozenset[ToolDeferralMode]] = frozenset()
    """The profile's `tool_deferral_mode` values this class's request mapping renders (none by default): a profile
    claiming another one is not followed (see `tool_deferral_mode`)."""
    supported_tool_addition_modes: ClassVar[frozenset[ToolAdditionMode]] = frozenset()
    """The profile's `tool_addition_mode` values this class's request mapping renders (none by default)."""
    _provider_cache_settings: ClassVar[tuple[str, ...]] = ()
    """The provider's own cache settings (`anthropic_cache_instructions`, ...): when a request's settings hold any,
    they are what `resolve_cache_retention` reads instead of the unified `cache` setting."""
    _looked_up_context_window: tuple[int | None] | None = None

    def __init__(self, *, settings: ModelSettings | None = None, profile: ModelProfileSpec | None = None) -> None:
        """Configure the model (subclasses need not call this: both default to `None`).

        Args:
            settings: Default settings of requests to this model.
            profile: What the model accepts: a (partial) profile merged over the class's default profile, or a
                function given that default and returning the profile to use.
        """
        self._settings = settings
        self._profile_spec = profile

    @property
    def profile(self) -> ModelProfile:
        """What the model accepts: `DEFAULT_PROFILE`, the class's default and `profile=` merged (resolved once)."""
        found = self._resolved_profile
        if found is None:
            found = self._resolved_profile = resolve_profile(self._default_profile, self._profile_spec)
        return found

    @property
    def tool_deferral_mode(self) -> ToolDeferralMode | None:
        """The profile's `tool_deferral_mode` when this class renders it (`supported_tool_deferral_modes`), else
        `None`: whether a request may hold a tool whose schema the provider keeps from the model until found."""
        mode = self.profile.get('tool_deferral_mode')
        return mode if mode in self.supported_tool_deferral_modes else None

    @property
    def tool_addition_mode(self) -> ToolAdditionMode | None:
        """The profile's `tool_addition_mode` when this class renders it (`supported_tool_addition_modes`), else
        `None` (tools revealed mid-run are then announced by `prepare_messages`)."""
        mode = self.profile.get('tool_addition_mode')
        return mode if mode in self.supported_tool_addition_modes else None

    @property
    def context_window(self) -> int | None:
        """The most tokens the model takes in one request: the profile's `context_window` when a profile layer sets
        the key (to `None` too), else the figure of genai-prices' data for this model and provider, when the `prices`
        extra is installed (its data is loaded on first use, a blocking read that a run has done in a worker thread
        before its first priced response); `None` when unknown."""
        profile = self.profile
        window = profile.get('context_window')
        if window is not None or self._sets_context_window():
            return window
        found = self._looked_up_context_window
        if found is None:
            found = self._looked_up_context_window = (self._lookup_context_window(),)
        return found[0]

    def _sets_context_window(self) -> bool:
        """Whether the class's default profile or a dict `profile=` holds `context_window` (then no lookup)."""
        spec = self._profile_spec
        return 'context_window' in self._default_profile or (isinstance(spec, dict) and 'context_window' in spec)

    def _lookup_context_window(self) -> int | None:
        """The model's context window in genai-prices' data (`None` for a model that makes no HTTP requests)."""
        provider = self.provider
        if provider is None:
            return None
        return lookup_context_window(self.model_name, provider_name=self.system, provider_api_url=provider.base_url)

    def resolve_cache_retention(self, model_settings: ModelSettings | None) -> timedelta | None:
        """How long the prompt cache keeps a prefix, as the request's settings (over the model's own) ask for it:
        the longest retention they ask for, the provider's own cache settings winning over the unified `cache` (which
        counts only where the profile has `supports_cache`, snapped to its `supported_cache_retentions`); `None`
        when they ask for none, where the profile's `default_cache_retention` applies (see `prompt_cache_outlook`).

        Raises:
            UserError: the `cache` setting holds an unknown retention or option.
        """
        merged = merge_model_settings(self.settings, model_settings) or {}
        return cache_retention(merged, self.profile, self._provider_cache_settings)

    @property
    def canonical_system(self) -> str:
        """The system whose keys verify the signed or encrypted data this model returns: its provider's
        `canonical_system`, or `system` for a model without a provider."""
        provider = self.provider
        return provider.canonical_system if provider is not None else self.system

    @property
    def compatible_systems(self) -> frozenset[str]:
        """Other systems whose signed or encrypted data this model's provider also verifies (its provider's)."""
        provider = self.provider
        return provider.compatible_systems if provider is not None else frozenset()

    def accepts_stateless_artifacts(self, response: ModelResponse, part: ModelResponsePart | None = None) -> bool:
        """Whether this model's provider verifies the signed or encrypted data (thinking signatures, encrypted
        reasoning, compaction items) that `part` carries in `response`.

        The data's system is `response.canonical_system` for a part of the response's own provider, else the part's
        `provider_name` (former names read as pydantic-ai 2.68 reads them); it is accepted when that is this model's
        `canonical_system` or one of its `compatible_systems`, or, read from a name alone, when the name is this
        model's `system`.

        Args:
            response: The response the part is in.
            part: The part carrying the data; `None` judges data of the response itself by its `provider_name`. A
                part without a `provider_name` is never accepted.
        """
        return accepts_stateless_artifact(
            response,
            response.provider_name if part is None else part.provider_name,
            system=self.system,
            canonical_system=self.canonical_system,
            compatible_systems=self.compatible_systems,
        )

    def accepts_server_state(self, response: ModelResponse) -> bool:
        """Whether this model can send back the ids of state the API keeps for `response` and looks up by id:
        the stored response (`previous_response_id`), its output item ids, its code execution container.

        That is when the response's `provider_name` is this model's `system` and its provider
        `shares_server_state_with` the endpoint the response was made at (its `provider_url`). A response that
        recorded no endpoint, and any response of a model without a provider, are judged by the name alone. Data the
        API verifies by its own key rather than by lookup (encrypted reasoning, thinking signatures) is judged by
        `accepts_stateless_artifacts` instead, so it still goes back to another endpoint of the same service.
        """
        if response.provider_name != self.system:
            return False
        provider = self.provider
        if provider is None or response.provider_url is None:
            return True
        return provider.shares_server_state_with(response.provider_url)

    @property
    def _canonical_system_stamp(self) -> str | None:
        """The `ModelResponse.canonical_system` of this model's responses: its `canonical_system` where that is not
        its `system`, or always where the provider's name stands for several systems."""
        canonical_system, provider = self.canonical_system, self.provider
        if provider is not None and provider._canonical_system_follows_client:
            return canonical_system
        return None if canonical_system == self.system else canonical_system

    def _caching_not_enabled(self, model_settings: ModelSettings | None) -> bool:
        """Whether this model caches only when a request asks (its profile has `supports_cache`) and the request's
        settings (over the model's own) ask nothing about caching: no unified `cache` (`cache=False` counts as
        asking), no provider cache setting. Read by the cache health of instrumented runs; a model that also caches
        unasked returns `False`."""
        if not self.profile.get('supports_cache', False):
            return False
        merged = merge_model_settings(self.settings, model_settings) or {}
        return 'cache' not in merged and not any(key in merged for key in self._provider_cache_settings)

    @property
    def settings(self) -> ModelSettings | None:
        """Default settings of requests to this model (the agent's and the run's override them)."""
        return self._settings

    @property
    def provider(self) -> Provider[Any] | None:
        """The provider requests go through; `None` for models that make no HTTP requests."""
        return None

    @property
    def base_url(self) -> str | None:
        """The base URL of the API requests go to; `None` for models that make no HTTP requests."""
        return None

    async def __aenter__(self) -> Self:
        """Enter the provider's context: its HTTP client is closed when the last context exits."""
        if (provider := self.provider) is not None:
            await provider.__aenter__()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        """Leave the provider's context, closing the HTTP client it made if this was the last one."""
        if (provider := self.provider) is not None:
            await provider.__aexit__(exc_type, exc, tb)

    @classmethod
    def supported_native_tools(cls) -> frozenset[type[AbstractNativeTool]]:
        """The native tool classes (`edgewise.agent.native_tools`) this model class maps to its API; none by
        default (a model's profile may narrow them further for a given model name)."""
        return frozenset()

    @classmethod
    def supported_builtin_tools(cls) -> frozenset[type[AbstractNativeTool]]:
        """Deprecated: `supported_native_tools()`."""
        warnings.warn(
            '`Model.supported_builtin_tools()` is deprecated, use `Model.supported_native_tools()` instead.',
            PydanticAIDeprecationWarning,
            stacklevel=2,
        )
        return cls.supported_native_tools()
