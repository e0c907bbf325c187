"""`BedrockProvider`: Amazon Bedrock's runtime API (`https://bedrock-runtime.<region>.amazonaws.com`), over httpx.

No boto3: requests are signed with AWS Signature Version 4 here (`_sigv4`), from an access key pair (and the session
token of temporary credentials), or carry a Bedrock API key as a bearer token. Credentials come from the arguments,
else from the environment (`AWS_BEARER_TOKEN_BEDROCK`, then `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY` /
`AWS_SESSION_TOKEN`), else from a profile of the shared credentials file (`~/.aws/credentials`). The region comes
from `region_name`, `AWS_REGION`, `AWS_DEFAULT_REGION` or the profile's `region` in `~/.aws/config`.
"""

from __future__ import annotations as _annotations

import configparser
import contextlib
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ..exceptions import UserError
from ..profiles import ModelProfile
from ._base import HTTPProvider, env_value
from ._bedrock_profiles import (
    BEDROCK_GEO_PREFIXES,
    BedrockJsonSchemaTransformer,
    BedrockModelProfile,
    bedrock_model_profile,
    remove_bedrock_geo_prefix,
    split_bedrock_model_id,
)
from ._sigv4 import AWSCredentials, sign

if TYPE_CHECKING:
    import httpx

__all__ = (
    'BEDROCK_GEO_PREFIXES',
    'BedrockJsonSchemaTransformer',
    'BedrockModelProfile',
    'BedrockProvider',
    'remove_bedrock_geo_prefix',
    'split_bedrock_model_id',
)

SIGNING_SERVICE = 'bedrock'
"""The service name Bedrock's runtime API is signed for."""


def _shared_file(env: str, default: str) -> configparser.ConfigParser:
    parser = configparser.ConfigParser()
    path = Path(os.getenv(env) or Path.home() / '.aws' / default)
    with contextlib.suppress(OSError, configparser.Error):  # an unreadable file names no credentials
        parser.read(path, encoding='utf-8')
    return parser


def _profile_values(profile_name: str) -> tuple[dict[str, str], dict[str, str]]:
    """The credentials and the config of a profile of the shared AWS files (empty where absent)."""
    credentials = _shared_file('AWS_SHARED_CREDENTIALS_FILE', 'credentials')
    config = _shared_file('AWS_CONFIG_FILE', 'config')
    section = profile_name if profile_name == 'default' else f'profile {profile_name}'
    found_credentials = dict(credentials[profile_name]) if credentials.has_section(profile_name) else {}
    found_config = dict(config[section]) if config.has_section(section) else {}
    return found_credentials, found_config


class BedrockProvider(HTTPProvider):
    """Amazon Bedrock's runtime API, signed with SigV4 (or authenticated by a Bedrock API key)."""

    _signing_service: ClassVar[str] = SIGNING_SERVICE

    def __init__(
        self,
        *,
        bedrock_client: Any = None,
        aws_access_key_id: str | None = None,
        aws_secret_access_key: str | None = None,
        aws_session_token: str | None = None,
        base_url: str | None = None,
        region_name: str | None = None,
        profile_name: str | None = None,
        api_key: str | None = None,
        aws_read_timeout: float | None = None,
        aws_connect_timeout: float | None = None,
        http_client: httpx.AsyncClient | None = None,
        max_retries: int = 2,
    ) -> None:
        """Configure the provider.

        Args:
            bedrock_client: A boto3 client in pydantic-ai; refused here (Edgewise does not use boto3).
            aws_access_key_id: The access key id; defaults to `AWS_ACCESS_KEY_ID`.
            aws_secret_access_key: The secret access key; defaults to `AWS_SECRET_ACCESS_KEY`.
            aws_session_token: The session token of temporary credentials; defaults to `AWS_SESSION_TOKEN`.
            base_url: The endpoint; defaults to `https://bedrock-runtime.<region>.amazonaws.com`.
            region_name: The AWS region; defaults to `AWS_REGION`, then `AWS_DEFAULT_REGION`, then the profile's.
            profile_name: A profile of the shared credentials and config files; defaults to `AWS_PROFILE`, then
                `default`, used when no key is given or set.
            api_key: A Bedrock API key, sent as a bearer token instead of signing; defaults to
                `AWS_BEARER_TOKEN_BEDROCK`.
            aws_read_timeout: Seconds to wait for data; defaults to `AWS_READ_TIMEOUT`, then 300.
            aws_connect_timeout: Seconds to connect; defaults to `AWS_CONNECT_TIMEOUT`, then 60.
            http_client: An `httpx.AsyncClient` to send requests with, used as given (and not closed here).
            max_retries: How many times a failed request (throttling, 5xx, timeout, dropped connection) is retried.

        Raises:
            UserError: no region or no credentials are found, or a boto3 client is given.
        """
        if bedrock_client is not None:
            raise UserError(
                'Edgewise talks to Bedrock over httpx, not through a boto3 client: pass the credentials '
                '(`aws_access_key_id=...`, `api_key=...`, or the AWS environment variables) and `region_name` to '
                '`BedrockProvider` instead of `bedrock_client`.'
            )
        credentials: AWSCredentials | None = None
        bearer = api_key
        config: dict[str, str] = {}
        if bearer is None:
            if aws_access_key_id or aws_secret_access_key:
                credentials = self._key_pair(aws_access_key_id, aws_secret_access_key, aws_session_token)
            elif (bearer := env_value('AWS_BEARER_TOKEN_BEDROCK')) is None:
                if env_value('AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'):
                    credentials = self._key_pair(
                        env_value('AWS_ACCESS_KEY_ID'), env_value('AWS_SECRET_ACCESS_KEY'),
                        aws_session_token or env_value('AWS_SESSION_TOKEN'),
                    )  # fmt: skip
                else:
                    name = profile_name or env_value('AWS_PROFILE') or 'default'
                    stored, config = _profile_values(name)
                    if stored.get('aws_access_key_id') and stored.get('aws_secret_access_key'):
                        credentials = AWSCredentials(
                            stored['aws_access_key_id'], stored['aws_secret_access_key'],
                            stored.get('aws_session_token') or None,
                        )  # fmt: skip
        if credentials is None and not bearer:
            raise UserError(
                'Set the `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY` (or `AWS_BEARER_TOKEN_BEDROCK`) environment '
                'variables, or pass `BedrockProvider(aws_access_key_id=..., aws_secret_access_key=...)` or '
                '`BedrockProvider(api_key=...)`, to use the Bedrock provider.'
            )
        if profile_name is not None and not config:
            config = _profile_values(profile_name)[1]
        region = region_name or env_value('AWS_REGION', 'AWS_DEFAULT_REGION') or config.get('region')
        if region is None and (credentials is not None or base_url is None):
            raise UserError(
                'You must provide a `region_name` (or set `AWS_REGION` / `AWS_DEFAULT_REGION`) to use the Bedrock '
                'provider: requests go to and are signed for a region.'
            )
        base_url = base_url or f'https://bedrock-runtime.{region}.amazonaws.com'
        super().__init__(base_url=base_url, api_key=None, http_client=http_client, max_retries=max_retries)
        self._credentials = credentials
        self._bearer = bearer
        self._region = region
        self._read_timeout = aws_read_timeout or float(os.getenv('AWS_READ_TIMEOUT') or 300)
        self._connect_timeout = aws_connect_timeout or float(os.getenv('AWS_CONNECT_TIMEOUT') or 60)

    @staticmethod
    def _key_pair(access_key_id: str | None, secret_access_key: str | None, token: str | None) -> AWSCredentials:
        if not access_key_id or not secret_access_key:
            missing = '`aws_access_key_id`' if not access_key_id else '`aws_secret_access_key`'
            raise UserError(
                f'The AWS access key pair is incomplete: {missing} (or its environment variable) is missing; '
                'give both the access key id and the secret access key.'
            )
        return AWSCredentials(access_key_id, secret_access_key, token or None)

    @property
    def name(self) -> str:
        """The provider's name, `'bedrock'`."""
        return 'bedrock'

    @property
    def region_name(self) -> str | None:
        """The AWS region requests are signed for."""
        return self._region

    @property
    def client(self) -> httpx.AsyncClient:
        """The HTTP client: the one given, else the provider's own, with the AWS read and connect timeouts."""
        made = self._http_client is None and (self._made_http_client is None or self._made_http_client.is_closed)
        client = super().client
        if made:
            import httpx

            client.timeout = httpx.Timeout(self._read_timeout, connect=self._connect_timeout)
        return client

    @staticmethod
    def model_profile(model_name: str) -> ModelProfile | None:
        """The profile of a Bedrock model id, by its family (`anthropic.`, `amazon.`, `meta.`, ...)."""
        return bedrock_model_profile(model_name)

    def request_headers(self) -> dict[str, str]:
        """The bearer token of an API key, or the session token of temporary credentials (signed with the rest)."""
        if self._credentials is None:
            return {'authorization': f'Bearer {self._bearer}'}
        if self._credentials.session_token:
            return {'x-amz-security-token': self._credentials.session_token}
        return {}

    def sign_request(self, request: httpx.Request) -> None:
        """Add the SigV4 `Authorization` and `X-Amz-Date` headers to a request about to be sent (nothing for a
        bearer token)."""
        if self._credentials is None:
            return
        when = datetime.now(tz=timezone.utc)
        stamp = when.strftime('%Y%m%dT%H%M%SZ')
        request.headers['x-amz-date'] = stamp
        signed = {'host': request.headers['host'], 'x-amz-date': stamp}
        for name in ('content-type', 'x-amz-security-token'):
            if (value := request.headers.get(name)) is not None:
                signed[name] = value
        path, _, query = request.url.raw_path.decode('ascii').partition('?')
        parts = sign(
            method=request.method, path=path, query=query, headers=signed, body=request.content,
            credentials=self._credentials, region=self._region or '', service=self._signing_service, when=when,
        )  # fmt: skip
        request.headers['authorization'] = parts.authorization
