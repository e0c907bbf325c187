"""`OpenAICodexProvider`: OpenAI's models under a ChatGPT (Codex) subscription, on the Codex backend's Responses API.

The subscription signs in with OAuth (authorization code with PKCE, on the public Codex client, whose redirect is
pinned to `http://localhost:1455/auth/callback`); the credentials are an access token, a single-use refresh token and
the ChatGPT account id. `OpenAICodexOAuthFlow` builds the sign-in URL and exchanges its code; the provider sends the
credentials (`Authorization`, `chatgpt-account-id`) and refreshes them at `https://auth.openai.com/oauth/token` when
the access token is about to expire or a request is answered 401 (see `edgewise.agent.providers._oauth`). Without
credentials it reads the Codex CLI's `auth.json` (`$CODEX_HOME`, else `~/.codex`), never writing it back.
"""

from __future__ import annotations as _annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, Self
from urllib.parse import urlencode

from ..exceptions import UserError
from ..profiles import ModelProfile, merge_profile
from ..profiles.openai_codex import openai_codex_model_profile
from ._base import own_http_client
from ._oauth import (
    CredentialsPersistenceError,
    CredentialsRefreshError,
    OAuthCredentialSource,
    OAuthProvider,
    jwt_claims,
    pkce_pair,
    post_token_request,
    receive_redirect,
)
from .openai import OpenAIProvider

if TYPE_CHECKING:
    import httpx

__all__ = (
    'CredentialsPersistenceError',
    'CredentialsRefreshError',
    'OpenAICodexCredentialSource',
    'OpenAICodexCredentials',
    'OpenAICodexOAuthFlow',
    'OpenAICodexProvider',
)

_NAME = 'openai-codex'
CODEX_BASE_URL = 'https://chatgpt.com/backend-api/codex'
"""The Codex backend's base URL."""
AUTHORIZE_URL = 'https://auth.openai.com/oauth/authorize'
"""Where the user signs in."""
TOKEN_URL = 'https://auth.openai.com/oauth/token'
"""Where codes and refresh tokens are exchanged for credentials."""
PUBLIC_CLIENT_ID = 'app_EMoamEEZ73f0CkXaXp7hrann'
"""The OAuth client id of the public Codex CLI."""
REDIRECT_URI = 'http://localhost:1455/auth/callback'
"""The only redirect URI the public client's registration accepts."""
_SCOPE = 'openid profile email offline_access'
_ORIGINATOR = 'pydantic-ai'


@dataclass(kw_only=True)
class OpenAICodexCredentials:
    """The credentials of a Codex subscription; the tokens are left out of the repr."""

    access_token: str = field(repr=False)
    """The OAuth access token (a JWT), sent as a bearer token."""
    refresh_token: str = field(repr=False)
    """The single-use token a refresh exchanges for a new set."""
    account_id: str
    """The ChatGPT account id (`chatgpt-account-id` header)."""

    @classmethod
    def from_codex_cli_auth(cls, data: Mapping[str, Any]) -> Self:
        """The credentials in the Codex CLI's `auth.json` data (`{'tokens': {'access_token': ..., ...}}`).

        Raises:
            UserError: the data lacks one of the three (non-empty) strings.
        """
        tokens = data.get('tokens') if isinstance(data, Mapping) else None
        values = {key: tokens.get(key) if isinstance(tokens, Mapping) else None for key in _CLI_KEYS}
        missing = [key for key, value in values.items() if not isinstance(value, str) or not value]
        if missing:
            raise UserError(
                f'Malformed Codex CLI credentials: `tokens` lacks {", ".join(f"`{key}`" for key in missing)}. '
                'Run `codex login` to write them again.'
            )
        return cls(
            access_token=str(values['access_token']),
            refresh_token=str(values['refresh_token']),
            account_id=str(values['account_id']),
        )


_CLI_KEYS = ('access_token', 'refresh_token', 'account_id')


class OpenAICodexCredentialSource(OAuthCredentialSource[OpenAICodexCredentials], Protocol):
    """The application's storage of Codex credentials (`load()` and `save()`), so that refreshed tokens are kept."""


def _account_id(data: Mapping[str, Any]) -> str | None:
    """The ChatGPT account id of a token response: its own field, else the `id_token`'s claims."""
    if isinstance(found := data.get('account_id'), str) and found:
        return found
    id_token = data.get('id_token')
    claims = jwt_claims(id_token) if isinstance(id_token, str) else None
    if claims is None:
        return None
    nested = claims.get('https://api.openai.com/auth')
    for value in (
        nested.get('chatgpt_account_id') if isinstance(nested, dict) else None,
        claims.get('chatgpt_account_id'),
        claims.get('account_id'),
    ):
        if isinstance(value, str) and value:
            return value
    return None


def _credentials(data: Mapping[str, Any], url: str, fallback_account_id: str | None = None) -> OpenAICodexCredentials:
    """The credentials of a token endpoint's answer (it must hold both tokens; the account id may be carried over)."""
    access, refresh = data.get('access_token'), data.get('refresh_token')
    if not (isinstance(access, str) and access and isinstance(refresh, str) and refresh):
        raise CredentialsRefreshError(
            f'Token endpoint {url} answered without an `access_token` and a `refresh_token`.', _NAME
        )
    account_id = _account_id(data) or fallback_account_id
    if not account_id:
        raise CredentialsRefreshError('The token response names no ChatGPT account id.', _NAME)
    return OpenAICodexCredentials(access_token=access, refresh_token=refresh, account_id=account_id)


def _codex_cli_credentials() -> OpenAICodexCredentials:
    """The Codex CLI's credentials (`$CODEX_HOME/auth.json`, else `~/.codex/auth.json`), read only."""
    path = Path(os.getenv('CODEX_HOME') or Path.home() / '.codex') / 'auth.json'
    try:
        text = path.read_text(encoding='utf-8')
    except FileNotFoundError:
        raise UserError(
            f'No Codex CLI credentials at `{path}`: run `codex login`, or pass `credentials=` or '
            '`credential_source=` (`OpenAICodexOAuthFlow` signs in).'
        ) from None
    except (OSError, UnicodeDecodeError) as e:
        raise UserError(f'Cannot read the Codex CLI credentials at `{path}`: {e}') from e
    try:
        data = json.loads(text)
    except ValueError as e:
        raise UserError(f'The Codex CLI credentials at `{path}` are not JSON: {e}') from e
    return OpenAICodexCredentials.from_codex_cli_auth(data)


class OpenAICodexOAuthFlow:
    """One sign-in on the public Codex client: authorization code with PKCE. Making it does no I/O.

    Send the user to `authorization_url()`; the browser is then redirected to `redirect_uri` with a `code` (and this
    flow's `state`, to check); `exchange_code(code)` turns it into credentials. Opening the browser, receiving the
    redirect and storing the credentials are the application's.
    """

    def __init__(
        self, *, redirect_uri: str = REDIRECT_URI, state: str | None = None, token_url: str = TOKEN_URL
    ) -> None:
        """Start a flow.

        Args:
            redirect_uri: Where the code is sent; the public client accepts only the default.
            state: The value the redirect must carry back (a random one by default).
            token_url: The token endpoint (an Edgewise addition, for a proxy or a test server).
        """
        import secrets

        self.redirect_uri = redirect_uri
        """Where the authorization code is sent."""
        self.state = state or secrets.token_urlsafe(16)
        """The value the redirect carries back, guarding against forged redirects."""
        self.code_verifier, self.code_challenge = pkce_pair()
        self._token_url = token_url

    def __repr__(self) -> str:
        return f'{type(self).__name__}(redirect_uri={self.redirect_uri!r})'

    def authorization_url(self, *, scope: str | None = None, extra_params: Mapping[str, str] | None = None) -> str:
        """The URL the user signs in at.

        Args:
            scope: The OAuth scopes (default `'openid profile email offline_access'`).
            extra_params: More query parameters, over the defaults; `client_id`, `redirect_uri`, `state` and
                `code_challenge` cannot be replaced (the exchange relies on them).

        Raises:
            UserError: `extra_params` replaces one of the four.
        """
        params = {
            'response_type': 'code',
            'client_id': PUBLIC_CLIENT_ID,
            'redirect_uri': self.redirect_uri,
            'scope': _SCOPE if scope is None else scope,
            'state': self.state,
            'code_challenge': self.code_challenge,
            'code_challenge_method': 'S256',
            'id_token_add_organizations': 'true',
            'codex_cli_simplified_flow': 'true',
        }
        if extra_params:
            bound = sorted({'client_id', 'redirect_uri', 'state', 'code_challenge'} & extra_params.keys())
            if bound:
                raise UserError(
                    f'`extra_params` cannot replace {", ".join(bound)}: the code would not exchange. Pass '
                    '`redirect_uri=` to `OpenAICodexOAuthFlow` instead.'
                )
            params.update(extra_params)
        return f'{AUTHORIZE_URL}?{urlencode(params)}'

    async def exchange_code(self, code: str) -> OpenAICodexCredentials:
        """The credentials for the authorization code of the redirect.

        Raises:
            CredentialsRefreshError: the token endpoint refused the code or answered something unusable.
        """
        form = {
            'grant_type': 'authorization_code',
            'code': code,
            'code_verifier': self.code_verifier,
            'redirect_uri': self.redirect_uri,
            'client_id': PUBLIC_CLIENT_ID,
        }
        async with own_http_client() as client:
            data = await post_token_request(client, self._token_url, form, provider_name=_NAME)
        return _credentials(data, self._token_url)

    async def exchange_code_from_callback(self) -> OpenAICodexCredentials:
        """Serve `redirect_uri` on this machine until the sign-in's redirect arrives, then exchange its code.

        Requests without this flow's `state` are ignored. Wrap the call in `anyio.fail_after` for a time limit.

        Raises:
            UserError: the redirect carries an error instead of a code (the user refused, say).
            CredentialsRefreshError: the token endpoint refused the code.
        """
        params = await receive_redirect(self.redirect_uri, self.state)
        if not params.get('code'):
            raise UserError(f'Authorization failed: {params.get("error", "unknown")}')
        return await self.exchange_code(params['code'])


def _codex_profile(model_name: str) -> ModelProfile:
    """`OpenAIProvider`'s profile of the model (its first-party keys), with the Codex backend's dialect over it."""
    return merge_profile(OpenAIProvider.model_profile(model_name), openai_codex_model_profile(model_name))


class OpenAICodexProvider(OAuthProvider[OpenAICodexCredentials]):
    """OpenAI's models under a ChatGPT subscription: the Codex backend (`https://chatgpt.com/backend-api/codex`).

    One provider holds one set of credentials, refreshed in place; `OPENAI_API_KEY` is never read.
    `OpenAICodexModel` (or `'openai-codex:<model>'`) speaks the backend's Responses API.
    """

    def __init__(
        self,
        credentials: OpenAICodexCredentials | None = None,
        *,
        credential_source: OpenAICodexCredentialSource | None = None,
        http_client: httpx.AsyncClient | None = None,
        base_url: str = CODEX_BASE_URL,
        token_url: str = TOKEN_URL,
        max_retries: int = 2,
    ) -> None:
        """Configure the provider.

        Args:
            credentials: The subscription's credentials. With neither these nor `credential_source`, the Codex
                CLI's `auth.json` is read (never written: refreshed tokens then live in memory only).
            credential_source: The application's storage of the credentials (loaded on first use, saved after each
                refresh); not together with `credentials`.
            http_client: An `httpx.AsyncClient` for this provider alone (it must have no `auth`: the provider sets
                its own, which adds credentials only to requests under `base_url`).
            base_url: The Codex backend's URL (an Edgewise addition, for a proxy or a test server).
            token_url: The OAuth token endpoint (an Edgewise addition, for a proxy or a test server).
            max_retries: How many times a failed request (429, 5xx, timeout, dropped connection) is retried.

        Raises:
            UserError: both `credentials` and `credential_source` are given; neither is, and the Codex CLI's
                credentials are missing or malformed; or `http_client` has an auth already.
        """
        if credentials is None and credential_source is None:
            credentials = _codex_cli_credentials()
        self._base_url = base_url.rstrip('/')
        self._token_url = token_url
        super().__init__(
            credentials, credential_source=credential_source, http_client=http_client, max_retries=max_retries
        )

    @property
    def name(self) -> str:
        """`'openai-codex'`."""
        return _NAME

    @property
    def base_url(self) -> str:
        """The Codex backend's URL."""
        return self._base_url

    @property
    def canonical_system(self) -> str:
        """`'openai'`: the backend and OpenAI's API read each other's encrypted reasoning and compactions."""
        return 'openai'

    @staticmethod
    def model_profile(model_name: str) -> ModelProfile | None:
        """OpenAI's profile of the model, with the settings the Codex backend refuses left out."""
        return _codex_profile(model_name)

    def _auth_headers(self, credentials: OpenAICodexCredentials) -> dict[str, str]:
        return {
            'authorization': f'Bearer {credentials.access_token}',
            'chatgpt-account-id': credentials.account_id,
            'originator': _ORIGINATOR,
        }

    def _access_token(self, credentials: OpenAICodexCredentials) -> str:
        return credentials.access_token

    async def _refresh_grant(
        self, credentials: OpenAICodexCredentials, client: httpx.AsyncClient
    ) -> OpenAICodexCredentials:
        form = {
            'grant_type': 'refresh_token',
            'refresh_token': credentials.refresh_token,
            'client_id': PUBLIC_CLIENT_ID,
        }
        data = await post_token_request(client, self._token_url, form, provider_name=_NAME)
        return _credentials(data, self._token_url, fallback_account_id=credentials.account_id)
