"""`AzureProvider`: Azure OpenAI and the models of Azure AI Foundry, over their OpenAI-compatible APIs.

Azure serves two shapes of the same API, and the endpoint says which one a provider speaks:

- A resource endpoint (`https://<resource>.openai.azure.com`) with an API version (`api_version=` or
  `OPENAI_API_VERSION`): requests go to `{endpoint}/openai/deployments/{deployment}/chat/completions` (and
  `/embeddings`, `/images/...`), or to `{endpoint}/openai/responses`, each with `?api-version=...`, and the key
  travels in the `api-key` header. The model name is the deployment's name.
- The v1 API (an endpoint ending in `/v1`, such as `https://<resource>.openai.azure.com/openai/v1`) and the
  serverless model endpoints of Azure AI Foundry (`https://<name>.<region>.models.ai.azure.com`): plain
  OpenAI paths under that base, a bearer key, and no API version (these endpoints reject one).
"""

from __future__ import annotations as _annotations

from typing import TYPE_CHECKING
from urllib.parse import quote, urlparse

from ..exceptions import UserError
from ..profiles import ModelProfile, merge_profile
from ..profiles._json_schema import JsonSchema
from ..profiles.cohere import cohere_model_profile
from ..profiles.deepseek import deepseek_model_profile
from ..profiles.grok import grok_model_profile
from ..profiles.meta import meta_model_profile
from ..profiles.mistral import mistral_model_profile
from ..profiles.openai import OpenAIJsonSchemaTransformer, OpenAIModelProfile, openai_model_profile
from ._base import HTTPProvider, env_value
from ._families import Family

if TYPE_CHECKING:
    import httpx

__all__ = ('AzureProvider',)

_DEFAULT_VOICE_LIVE_API_VERSION = '2026-07-15'
"""The Azure AI Voice Live API version when neither `voice_live_api_version=` nor `AZURE_VOICELIVE_API_VERSION`
names one (pydantic-ai 2.68's default)."""

_DEPLOYMENT_PATHS = frozenset(
    (
        '/completions',
        '/chat/completions',
        '/embeddings',
        '/audio/transcriptions',
        '/audio/translations',
        '/audio/speech',
        '/images/generations',
        '/images/edits',
    )
)
"""The endpoints a resource endpoint serves per deployment (`/openai/deployments/{name}{path}`); the others
(`/responses`) are served once for the resource, the model named in the body."""

_FAMILIES: dict[str, Family] = {
    'llama': meta_model_profile,
    'meta-': meta_model_profile,
    'deepseek': deepseek_model_profile,
    'mistralai-': mistral_model_profile,
    'mistral': mistral_model_profile,
    'ministral': mistral_model_profile,
    'magistral': mistral_model_profile,
    'cohere-': cohere_model_profile,
    'grok': grok_model_profile,
}
"""The model families of the Azure AI Foundry catalogue, by how a name starts (in lower case; tried in order). A
prefix ending in `-` names the vendor and is dropped before the family reads the name; other names are OpenAI's."""


class _AzureGrokJsonSchemaTransformer(OpenAIJsonSchemaTransformer):
    """OpenAI's strict dialect with definitions inlined: Grok on Azure rejects `$ref`s to `$defs`.

    A recursive schema cannot be inlined; it keeps its references, converted as OpenAI's dialect converts them.
    """

    def __init__(self, schema: JsonSchema, *, strict: bool | None = None) -> None:
        """Prepare a walk over `schema` that inlines its (non-recursive) definitions."""
        super().__init__(schema, strict=strict)
        self.prefer_inlined_defs = True

    def walk(self) -> JsonSchema:
        """The schema with its definitions inlined, or OpenAI's conversion when a definition is recursive."""
        walked = super().walk()
        if not self.recursive_refs:
            return walked
        plain = OpenAIJsonSchemaTransformer(self.schema, strict=self.strict)
        walked = plain.walk()
        self.is_strict_compatible = plain.is_strict_compatible
        return walked


def _v1_base_url(endpoint: str) -> str | None:
    """The base URL of an endpoint serving OpenAI's paths without an API version, or `None` for a resource endpoint.

    An endpoint whose path ends in `/v1` asks for the v1 API; a `*.models.ai.azure.com` host is a serverless
    model endpoint of Azure AI Foundry, which serves the OpenAI API under `/v1`.
    """
    if endpoint.endswith('/v1'):
        return endpoint
    if (urlparse(endpoint).hostname or '').endswith('.models.ai.azure.com'):
        return f'{endpoint}/v1'
    return None


class AzureProvider(HTTPProvider):
    """Azure OpenAI and Azure AI Foundry; the endpoint, key and API version come from `AZURE_OPENAI_ENDPOINT`,
    `AZURE_OPENAI_API_KEY` and `OPENAI_API_VERSION` unless given.

    Use it with `OpenAIChatModel` (`'azure:<deployment>'`) or `OpenAIResponsesModel` (`'azure-responses:...'`);
    the model name is the name of your deployment::

        provider = AzureProvider(azure_endpoint='https://my-resource.openai.azure.com', api_version='2024-10-21')
        agent = Agent(OpenAIChatModel('my-gpt-4o', provider=provider))
    """

    def __init__(
        self,
        *,
        azure_endpoint: str | None = None,
        api_version: str | None = None,
        api_key: str | None = None,
        voice_live_endpoint: str | None = None,
        voice_live_api_key: str | None = None,
        voice_live_api_version: str | None = None,
        http_client: httpx.AsyncClient | None = None,
        max_retries: int = 2,
    ) -> None:
        """Configure the provider.

        Args:
            azure_endpoint: The resource's endpoint, e.g. `'https://my-resource.openai.azure.com'`, or a v1 API
                base (`.../openai/v1`), or a serverless model endpoint (`*.models.ai.azure.com`); defaults to
                `AZURE_OPENAI_ENDPOINT`.
            api_version: The API version of a resource endpoint, e.g. `'2024-10-21'`; defaults to
                `OPENAI_API_VERSION`. Not taken by the v1 API or serverless endpoints (giving it there is an error).
            api_key: The resource's key; defaults to `AZURE_OPENAI_API_KEY`.
            voice_live_endpoint: The Azure AI Voice Live endpoint; defaults to `AZURE_VOICELIVE_ENDPOINT`, then
                the resource's endpoint. Kept for pydantic-ai's realtime sessions, which Edgewise does not open.
            voice_live_api_key: The Voice Live key; defaults to `AZURE_VOICELIVE_API_KEY`, then the resource's key.
            voice_live_api_version: The Voice Live API version; defaults to `AZURE_VOICELIVE_API_VERSION`, then a
                version Voice Live serves (never `api_version`, which versions another API).
            http_client: An `httpx.AsyncClient` to send requests with, used as given (and not closed here).
            max_retries: How many times a failed request (429, 5xx, timeout, dropped connection) is retried.

        Raises:
            UserError: the endpoint or key is neither given nor set; a resource endpoint has no API version; or an
                API version is given for an endpoint that takes none.
        """
        endpoint = azure_endpoint or env_value('AZURE_OPENAI_ENDPOINT')
        key = api_key or env_value('AZURE_OPENAI_API_KEY')
        version = api_version or env_value('OPENAI_API_VERSION')
        voice_live_endpoint = voice_live_endpoint or env_value('AZURE_VOICELIVE_ENDPOINT')
        voice_live_api_key = voice_live_api_key or env_value('AZURE_VOICELIVE_API_KEY')
        voice_live_api_version = (
            voice_live_api_version or env_value('AZURE_VOICELIVE_API_VERSION') or _DEFAULT_VOICE_LIVE_API_VERSION
        )
        # A provider configured only through the Voice Live settings (a Voice Live resource) takes its endpoint,
        # key and version from them; a partly configured Azure OpenAI resource never borrows another's.
        voice_live_only = not (endpoint or key or version)
        if voice_live_only:
            endpoint, key, version = voice_live_endpoint, voice_live_api_key, voice_live_api_version
        if not endpoint:
            raise UserError(
                'Set the `AZURE_OPENAI_ENDPOINT` environment variable or pass it via '
                '`AzureProvider(azure_endpoint=...)` (e.g. `https://<resource>.openai.azure.com`) to use Azure OpenAI.'
            )
        if not key:
            raise UserError(
                'Set the `AZURE_OPENAI_API_KEY` environment variable or pass it via `AzureProvider(api_key=...)` '
                'to use Azure OpenAI.'
            )
        endpoint = endpoint.rstrip('/')
        v1_base_url = _v1_base_url(endpoint)
        if v1_base_url is not None:
            if api_version is not None:
                raise UserError(
                    f'`AzureProvider(api_version=...)` must not be given for the endpoint {endpoint!r}: the Azure '
                    'OpenAI v1 API and the serverless model endpoints of Azure AI Foundry take no API version. '
                    'Leave `api_version` out, or give the resource endpoint (without `/openai/v1`).'
                )
            version = None
        elif not version:
            raise UserError(
                'Set the `OPENAI_API_VERSION` environment variable or pass it via `AzureProvider(api_version=...)` '
                f'(e.g. `2024-10-21`) to use the Azure OpenAI endpoint {endpoint!r}, or give its v1 API as the '
                'endpoint (`https://<resource>.openai.azure.com/openai/v1`), which needs no version.'
            )
        super().__init__(
            base_url=v1_base_url or f'{endpoint}/openai', api_key=key, http_client=http_client, max_retries=max_retries
        )
        self._api_key: str = key
        self._azure_endpoint = endpoint
        self._api_version = version
        self._voice_live_endpoint = (voice_live_endpoint or endpoint).rstrip('/')
        self._voice_live_api_key = voice_live_api_key or key
        self._voice_live_api_version = voice_live_api_version

    @property
    def name(self) -> str:
        """The provider's name, `'azure'`."""
        return 'azure'

    @property
    def azure_endpoint(self) -> str:
        """The Azure endpoint the provider was configured with (without a trailing slash)."""
        return self._azure_endpoint

    @property
    def api_version(self) -> str | None:
        """The API version sent with each request, `None` for endpoints that take none."""
        return self._api_version

    @property
    def api_key(self) -> str:
        """The resource's key (a secret: never log it)."""
        return self._api_key

    @property
    def voice_live_endpoint(self) -> str:
        """The Azure AI Voice Live endpoint (`AZURE_VOICELIVE_ENDPOINT`, else the resource's endpoint)."""
        return self._voice_live_endpoint

    @property
    def voice_live_api_key(self) -> str:
        """The Azure AI Voice Live key (`AZURE_VOICELIVE_API_KEY`, else the resource's key)."""
        return self._voice_live_api_key

    @property
    def voice_live_api_version(self) -> str:
        """The Azure AI Voice Live API version (`AZURE_VOICELIVE_API_VERSION`, else a version it serves)."""
        return self._voice_live_api_version

    @staticmethod
    def model_profile(model_name: str) -> ModelProfile | None:
        """The profile of a model deployed on Azure, found by its name: OpenAI's models, or the Meta, DeepSeek,
        Mistral, Cohere and Grok models of the Foundry catalogue (with OpenAI's schema dialect).

        Azure's Chat Completions take no document parts; Grok there takes no `$defs` in its schemas, and Mistral's
        models take the `max_tokens` setting only as the older `max_tokens` field.
        """
        lowered = model_name.lower()
        profile: ModelProfile | None = None
        for prefix, family in _FAMILIES.items():
            if lowered.startswith(prefix):
                name = lowered.removeprefix(prefix) if prefix.endswith('-') else lowered
                profile = merge_profile(
                    OpenAIModelProfile(json_schema_transformer=OpenAIJsonSchemaTransformer), family(name)
                )
                if family is mistral_model_profile:  # Foundry's Mistral endpoints refuse `max_completion_tokens`
                    profile = merge_profile(
                        profile, OpenAIModelProfile(openai_chat_supports_max_completion_tokens=False)
                    )
                break
        else:
            profile = openai_model_profile(lowered)
        profile = merge_profile(profile, OpenAIModelProfile(openai_chat_supports_document_input=False))
        if lowered.startswith('grok'):
            profile = merge_profile(
                profile, OpenAIModelProfile(json_schema_transformer=_AzureGrokJsonSchemaTransformer)
            )
        return profile

    def request_headers(self) -> dict[str, str]:
        """The key: in the `api-key` header on a resource endpoint, as a bearer token on the v1 API."""
        if self._api_version is None:
            return {'authorization': f'Bearer {self._api_key}'}
        return {'api-key': self._api_key}

    def endpoint_url(self, path: str, model_name: str) -> str:
        """The URL of `path` for the deployment `model_name`, with the API version on a resource endpoint."""
        if self._api_version is None:
            return f'{self.base_url}{path}'
        if path in _DEPLOYMENT_PATHS:
            path = f'/deployments/{quote(model_name, safe="")}{path}'
        return f'{self.base_url}{path}?api-version={quote(self._api_version, safe="")}'
