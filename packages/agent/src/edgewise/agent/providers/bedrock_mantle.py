"""`BedrockMantleProvider`: OpenAI's models on Amazon Bedrock Mantle, over its OpenAI-compatible APIs.

Mantle serves two endpoint families under one origin (`https://bedrock-mantle.<region>.api.aws`): `/v1` (Chat
Completions for GPT-OSS Safeguard, Responses for GPT-OSS) and `/openai/v1` (Responses for GPT-5.x). The model's
profile (`bedrock_mantle_interface`) picks the family, and the provider the URL. Requests carry a Bedrock API key
as a bearer token, or are signed with SigV4 for the `bedrock-mantle` service, with the credentials
`BedrockProvider` finds (arguments, environment, shared credentials file).
"""

from __future__ import annotations as _annotations

import os
from typing import TYPE_CHECKING, ClassVar, Literal, cast

from ..exceptions import UserError
from ..profiles import ModelProfile, merge_profile
from ..profiles.openai import OpenAIModelProfile, openai_model_profile
from ._base import HTTPProvider
from ._bedrock_profiles import split_bedrock_model_id
from .bedrock import BedrockProvider

if TYPE_CHECKING:
    import httpx

__all__ = (
    'BedrockMantleInterface',
    'BedrockMantleModelProfile',
    'BedrockMantleProvider',
    'bedrock_mantle_model_profile',
)

BedrockMantleInterface = Literal['chat', 'responses', 'openai-responses']
"""The Mantle endpoint family of a model: `'chat'` (Chat Completions at `/v1`, GPT-OSS Safeguard), `'responses'`
(Responses at `/v1`, GPT-OSS) or `'openai-responses'` (Responses at `/openai/v1`, GPT-5.x)."""

_PREFIXES: dict[BedrockMantleInterface, str] = {'chat': '/v1', 'responses': '/v1', 'openai-responses': '/openai/v1'}


class BedrockMantleModelProfile(OpenAIModelProfile, total=False):
    """The profile of an OpenAI model on Mantle: OpenAI's keys and Mantle's own (`bedrock_mantle_`-prefixed)."""

    bedrock_mantle_interface: BedrockMantleInterface
    """The endpoint family that serves the model, which picks the model class and the URL."""


def bedrock_mantle_model_profile(model_name: str) -> ModelProfile:
    """The profile of an OpenAI model on Mantle (`openai.gpt-oss-120b`, `openai.gpt-5.6-luna`).

    OpenAI's profile of the bare name, without image output or native tools (Mantle serves neither); GPT-OSS on
    `/v1/responses` cannot be forced to call a tool.

    Raises:
        UserError: the model is not one of OpenAI's (Mantle serves only those).
    """
    family, name = split_bedrock_model_id(model_name)
    if family != 'openai':
        raise UserError(
            f'Model {model_name!r} is not an OpenAI model on Bedrock Mantle. '
            'Bedrock Mantle currently serves OpenAI models through the `bedrock-mantle:` prefix.'
        )
    interface: BedrockMantleInterface = (
        'chat'
        if name.startswith('gpt-oss-safeguard')
        else 'responses'
        if name.startswith('gpt-oss')
        else 'openai-responses'
    )
    mantle = BedrockMantleModelProfile(
        bedrock_mantle_interface=interface, supports_image_output=False, supported_native_tools=frozenset()
    )
    if interface == 'responses':
        mantle['supports_forced_tool_choice'] = False
    return merge_profile(openai_model_profile(name), mantle)


def mantle_origin(base_url: str) -> str:
    """The scheme and host of a Mantle URL, without a `/openai/v1` or `/v1` ending."""
    origin = base_url.rstrip('/')
    for suffix in ('/openai/v1', '/v1'):
        if origin.endswith(suffix):
            return origin[: -len(suffix)]
    return origin


class _MantleSigning(BedrockProvider):
    """Bedrock's credentials and signing, for the `bedrock-mantle` service."""

    _signing_service: ClassVar[str] = 'bedrock-mantle'


class BedrockMantleProvider(HTTPProvider):
    """Amazon Bedrock Mantle's OpenAI-compatible APIs (a Bedrock API key, or AWS credentials for SigV4)."""

    def __init__(
        self,
        *,
        region_name: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        aws_access_key_id: str | None = None,
        aws_secret_access_key: str | None = None,
        aws_session_token: str | None = None,
        profile_name: str | None = None,
        http_client: httpx.AsyncClient | None = None,
        max_retries: int = 2,
    ) -> None:
        """Configure the provider.

        Args:
            region_name: The AWS region of the default origin `https://bedrock-mantle.<region>.api.aws`; defaults to
                `AWS_DEFAULT_REGION`, then `AWS_REGION`.
            base_url: A Mantle URL: its origin (any `/openai/v1` or `/v1` ending dropped) serves both families.
            api_key: A Bedrock API key, sent as a bearer token; defaults to `AWS_BEARER_TOKEN_BEDROCK`.
            aws_access_key_id: The access key id for SigV4; defaults to `AWS_ACCESS_KEY_ID`.
            aws_secret_access_key: The secret access key for SigV4; defaults to `AWS_SECRET_ACCESS_KEY`.
            aws_session_token: The session token of temporary credentials; defaults to `AWS_SESSION_TOKEN`.
            profile_name: A profile of the shared credentials and config files, for SigV4.
            http_client: An `httpx.AsyncClient` to send requests with, used as given (and not closed here).
            max_retries: How many times a failed request (429, 5xx, timeout, dropped connection) is retried.

        Raises:
            UserError: neither a region nor a base URL is given, or no credentials are found.
        """
        region = region_name or os.getenv('AWS_DEFAULT_REGION') or os.getenv('AWS_REGION')
        if base_url is not None:
            origin = mantle_origin(base_url)
        elif region:
            origin = f'https://bedrock-mantle.{region}.api.aws'
        else:
            raise UserError(
                'Set the `AWS_DEFAULT_REGION` or `AWS_REGION` environment variable, pass `region_name`, '
                'or pass `base_url` to use a Bedrock Mantle model.'
            )
        self._auth = _MantleSigning(
            api_key=api_key, aws_access_key_id=aws_access_key_id, aws_secret_access_key=aws_secret_access_key,
            aws_session_token=aws_session_token, profile_name=profile_name, region_name=region, base_url=origin,
        )  # fmt: skip
        super().__init__(base_url=f'{origin}/openai/v1', api_key=None, http_client=http_client, max_retries=max_retries)
        self._origin = origin

    @property
    def name(self) -> str:
        """The provider's name, `'bedrock-mantle'`."""
        return 'bedrock-mantle'

    @staticmethod
    def model_profile(model_name: str) -> ModelProfile | None:
        """The profile of an OpenAI model on Mantle (a `UserError` for other models)."""
        return bedrock_mantle_model_profile(model_name)

    def endpoint_url(self, path: str, model_name: str) -> str:
        """The URL of `path` in the model's endpoint family: under `/v1` for GPT-OSS, `/openai/v1` for GPT-5.x."""
        profile = cast(BedrockMantleModelProfile, bedrock_mantle_model_profile(model_name))
        interface = profile.get('bedrock_mantle_interface', 'openai-responses')
        return f'{self._origin}{_PREFIXES[interface]}{path}'

    def request_headers(self) -> dict[str, str]:
        """The bearer token of an API key, or the session token of temporary credentials (signed with the rest)."""
        return self._auth.request_headers()

    def sign_request(self, request: httpx.Request) -> None:
        """Sign a request about to be sent with SigV4 for the `bedrock-mantle` service (nothing for an API key)."""
        self._auth.sign_request(request)
