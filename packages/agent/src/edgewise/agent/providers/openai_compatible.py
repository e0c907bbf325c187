"""`OpenAICompatibleProvider`: any service speaking OpenAI's API that has no provider of its own, under your name."""

from __future__ import annotations as _annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..exceptions import UserError
from ..profiles import ModelProfile, merge_profile
from ..profiles.harmony import harmony_model_profile
from ..profiles.mistral import mistral_model_profile
from ..profiles.openai import OpenAIJsonSchemaTransformer, OpenAIModelProfile, openai_model_profile
from ._families import vendors
from .openai import OpenAIProvider, ProviderSpec

if TYPE_CHECKING:
    import httpx

__all__ = ('OpenAICompatibleProvider',)


def _openai_family(model_name: str) -> ModelProfile | None:
    # OpenAI's open-weight models speak Harmony, unlike the ones OpenAI serves itself.
    return harmony_model_profile(model_name) if model_name.startswith('gpt-oss') else openai_model_profile(model_name)


def _mistral_family(model_name: str) -> ModelProfile | None:
    # Outside Magistral, Mistral's profile only sets the tool call ids; the rest stays OpenAI's.
    profile = mistral_model_profile(model_name)
    return profile if model_name.startswith('magistral') else merge_profile(openai_model_profile(model_name), profile)


_VENDORS = vendors(
    'alibaba',
    'amazon',
    'bedrock',
    'anthropic',
    'cohere',
    'deepseek',
    'deepseek-ai',
    'google',
    'groq',
    'meta',
    'meta-llama',
    'meta-models',
    'moonshotai',
    'qwen',
    'x-ai',
    'xai',
    'z-ai',
    'zai',
    'zai-org',
    mistral=_mistral_family,
    mistralai=_mistral_family,
    openai=_openai_family,
)
"""The model family of a `vendor/model` name, by vendor."""


def _default_profile(model_name: str) -> ModelProfile:
    family: ModelProfile | None = None
    if '/' in model_name:
        vendor, _, name = model_name.lower().partition('/')
        if (found := _VENDORS.get(vendor)) is not None:
            family = found(name)
    else:
        family = openai_model_profile(model_name)
    return merge_profile(OpenAIModelProfile(json_schema_transformer=OpenAIJsonSchemaTransformer), family)


class OpenAICompatibleProvider(OpenAIProvider):
    """A service with an OpenAI-compatible API and no provider of its own, named by you.

    Use it with `OpenAIChatModel` (or `OpenAIResponsesModel` if the service has the Responses API)::

        provider = OpenAICompatibleProvider('my-gateway', base_url='https://gateway.example.com/v1', api_key='...')
        agent = Agent(OpenAIChatModel('qwen/qwen3-coder', provider=provider))

    The name is each response's `provider_name`: the data a response leaves in the history for its own service
    (response ids, encrypted reasoning, signatures) goes back only to a provider of the same name, so renaming the
    service later stops sending it back for older histories. `OPENAI_API_KEY` is never read: an OpenAI key is not
    sent to another service. For OpenAI itself, or a proxy passing requests through to it, use `OpenAIProvider`.
    """

    def __init__(
        self,
        name: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        http_client: httpx.AsyncClient | None = None,
        profile: ModelProfile | Callable[[str], ModelProfile | None] | None = None,
        max_retries: int = 2,
    ) -> None:
        """Configure the provider.

        Args:
            name: The service's name, e.g. `'my-gateway'`: each response's `provider_name`, and what decides which
                history data goes back to the service.
            base_url: The base URL of the service's OpenAI-compatible API, e.g. `'https://gateway.example.com/v1'`.
            api_key: The service's API key, if it takes one (sent as a bearer token).
            http_client: An `httpx.AsyncClient` to send requests with, used as given (and not closed here).
            profile: The profile of the service's models. A `ModelProfile` is merged over the default of every
                model; a function of the model name replaces the default. The default gives a `vendor/model`
                name its vendor's family profile and any other name OpenAI's, with OpenAI's schema dialect.
            max_retries: How many times a failed request (429, 5xx, timeout, dropped connection) is retried.

        Raises:
            UserError: `name` is empty, or `base_url` is not given.
        """
        if not name:
            raise UserError('`OpenAICompatibleProvider` needs a `name` for the service, such as `"my-gateway"`.')
        if base_url is None:
            raise UserError(
                "`OpenAICompatibleProvider` needs a `base_url`: the base URL of the service's OpenAI-compatible API, "
                "such as `'https://gateway.example.com/v1'`."
            )
        if callable(profile):
            family = profile
        elif profile is None:
            family = _default_profile
        else:
            override = profile

            def family(model_name: str) -> ModelProfile | None:
                return merge_profile(_default_profile(model_name), override)

        # One spec per instance: the name and the profile are the caller's, no environment variable is read.
        self._spec = ProviderSpec(
            name=name,
            class_name=type(self).__name__,
            default_base_url=None,
            api_key_required=False,
            profile=family,
        )
        super().__init__(base_url=base_url, api_key=api_key, http_client=http_client, max_retries=max_retries)

    def model_profile(self, model_name: str) -> ModelProfile | None:  # type: ignore[override]
        """The profile of the named model on this service, `profile=` applied."""
        return self._spec.profile(model_name)
