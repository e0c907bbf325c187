"""OpenAI's Responses API on a user's ChatGPT plan ("Sign in with ChatGPT"): the sign-in, the credentials, the provider.

OpenAI lets apps run locally or as open source use a signed-in user's ChatGPT plan for Responses API requests at
`https://api.openai.com/v1`, with an OAuth access token in place of an API key. `OpenAIChatGPTOAuthFlow` signs in:
authorization code with PKCE and a `nonce`, redirected to a loopback address (`http://127.0.0.1:PORT/auth/callback`).
A ChatGPT account's first sign-in registers an OAuth client for it (dynamic registration: the callback carries the
issued `client_id`); later sign-ins pass that `client_id` back and reuse the registration. The ID token of the answer
is checked (issuer, audience, expiry, nonce, account) before the credentials are returned.

`OpenAIChatGPTProvider` sends the access token, refreshes it at the token endpoint when it is about to expire or a
request is answered 401, and saves each refreshed set through a credential source (see
`edgewise.agent.providers._oauth`). Opening the browser and storing credentials are the application's.
"""

from __future__ import annotations as _annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlencode, urlsplit

from ..exceptions import UserError
from ..profiles import ModelProfile, merge_profile
from ..profiles.openai_chatgpt import openai_chatgpt_model_profile
from ._base import own_http_client
from ._oauth import (
    CredentialsPersistenceError,
    CredentialsRefreshError,
    OAuthCredentialSource,
    OAuthProvider,
    jwt_claims,
    jwt_expires_at,
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
    'OpenAIChatGPTCredentialSource',
    'OpenAIChatGPTCredentials',
    'OpenAIChatGPTOAuthFlow',
    'OpenAIChatGPTProvider',
)

_NAME = 'openai-chatgpt'
BASE_URL = 'https://api.openai.com/v1'
"""The API the plan's requests go to (OpenAI's public API)."""
RESOURCE = 'https://api.openai.com/v1'
"""The `resource` the tokens are issued for."""
ISSUER = 'https://auth.openai.com'
"""The issuer an ID token must name."""
AUTHORIZE_URL = 'https://auth.openai.com/api/accounts/authorize'
"""Where the user signs in."""
TOKEN_URL = 'https://auth.openai.com/api/accounts/oauth/token'
"""Where codes and refresh tokens are exchanged for credentials."""
REDIRECT_URI = 'http://127.0.0.1:1455/auth/callback'
"""The default loopback redirect; only its port may be changed."""
REGISTRATION_CLIENT_ID = 'dynamic_agent_client'
"""The client id a first sign-in starts with, which asks for a new registration (never one to keep)."""
PLAN_USAGE_SCOPE = 'chatgpt.tokens.use.direct'
"""The scope that lets the tokens use the ChatGPT plan (the provider refuses credentials without it)."""
DEFAULT_SCOPE = f'openid profile email offline_access resource.invoke {PLAN_USAGE_SCOPE}'
"""The scopes a sign-in asks for by default."""
UNUSABLE_REFRESH_TOKEN_ERRORS = frozenset(
    {
        'invalid_grant',
        'invalid_refresh_token',
        'token_expired',
        'refresh_token_expired',
        'refresh_token_invalidated',
        'refresh_token_reused',
    }
)
"""The token endpoint's error codes meaning the refresh token is spent: the user signs in again."""
_REDIRECT_PATH = '/auth/callback'
_HOST_ID_PREFIXES = ('urn:uuid:', 'urn:ietf:params:oauth:jwk-thumbprint:', 'did:key:')
_CLOCK_SKEW = timedelta(seconds=60)
"""How far past its `exp` an ID token is still taken (clocks differ)."""


@dataclass(kw_only=True)
class OpenAIChatGPTCredentials:
    """The credentials of one ChatGPT account's plan, for the OAuth client registered for it.

    Store all the fields together: `client_id` is reused by the next sign-in, `id_token` is its `id_token_hint`, and
    `scope` tells whether plan usage was granted. The tokens are left out of the repr.
    """

    client_id: str
    """The OAuth client id OpenAI issued at this account's first sign-in."""
    access_token: str = field(repr=False)
    """The OAuth access token, sent as a bearer token."""
    refresh_token: str = field(repr=False)
    """The single-use token a refresh exchanges for a new set."""
    id_token: str | None = field(default=None, repr=False)
    """The ID token of the latest sign-in or refresh (the `id_token_hint` of a later sign-in)."""
    scope: str = ''
    """The scopes granted, space-separated."""

    @property
    def plan_usage_granted(self) -> bool:
        """Whether the user granted `chatgpt.tokens.use.direct`, without which requests cannot use the plan."""
        return PLAN_USAGE_SCOPE in self.scope.split()


class OpenAIChatGPTCredentialSource(OAuthCredentialSource[OpenAIChatGPTCredentials], Protocol):
    """The application's storage of ChatGPT credentials (`load()` and `save()`), so that refreshed tokens are kept.

    `load()` is called on first use and before each refresh (a newer stored set, refreshed by another process, is
    adopted instead of spending the refresh token); `save()` after each refresh.
    """


def _credentials(
    data: Mapping[str, Any], url: str, *, client_id: str, previous: OpenAIChatGPTCredentials | None = None
) -> OpenAIChatGPTCredentials:
    """The credentials of a token endpoint's answer; a refresh keeps the ID token and scope it does not restate."""
    access, refresh = data.get('access_token'), data.get('refresh_token')
    if not (isinstance(access, str) and access and isinstance(refresh, str) and refresh):
        raise CredentialsRefreshError(
            f'Token endpoint {url} answered without an `access_token` and a `refresh_token`.', _NAME
        )
    id_token, scope = data.get('id_token'), data.get('scope')
    return OpenAIChatGPTCredentials(
        client_id=client_id,
        access_token=access,
        refresh_token=refresh,
        id_token=id_token if isinstance(id_token, str) and id_token else previous.id_token if previous else None,
        scope=scope if isinstance(scope, str) else previous.scope if previous else '',
    )


def _check_id_token(id_token: str, *, client_id: str, nonce: str, subject: str | None) -> None:
    """Check the ID token of a sign-in: issuer, audience, expiry, nonce, and the account when one was hinted.

    The signature is not checked: the token comes straight from the token endpoint over TLS, which OpenID Connect
    Core (3.1.3.7) accepts in its place.

    Raises:
        CredentialsRefreshError: a check failed.
        UserError: the sign-in completed for another account than `id_token_hint` named.
    """
    claims = jwt_claims(id_token)
    if claims is None:
        raise CredentialsRefreshError('The token response carries a malformed ID token.', _NAME)
    issuer, audience = claims.get('iss'), claims.get('aud')
    audiences = [audience] if isinstance(audience, str) else audience if isinstance(audience, list) else []
    if issuer != ISSUER:
        raise CredentialsRefreshError(f'The ID token was issued by {issuer!r}, not {ISSUER!r}.', _NAME)
    if client_id not in audiences:
        raise CredentialsRefreshError(f'The ID token was not issued for client {client_id!r}.', _NAME)
    expires_at = jwt_expires_at(id_token)
    if expires_at is None or expires_at + _CLOCK_SKEW < datetime.now(timezone.utc):
        raise CredentialsRefreshError('The ID token has expired: start the sign-in again.', _NAME)
    if claims.get('nonce') != nonce:
        raise CredentialsRefreshError(
            "The ID token does not carry this sign-in's `nonce`: start the sign-in again.", _NAME
        )
    account = claims.get('sub')
    if not isinstance(account, str) or not account:
        raise CredentialsRefreshError('The ID token names no account (`sub`).', _NAME)
    if subject is not None and account != subject:
        raise UserError(
            'The sign-in completed for another ChatGPT account than `id_token_hint` names; its credentials were '
            'not used.'
        )


class OpenAIChatGPTOAuthFlow:
    """One Sign in with ChatGPT with plan usage: authorization code with PKCE. Making it does no I/O.

    Send the user to `authorization_url()`; `exchange_code_from_callback()` serves the loopback redirect on this
    machine and exchanges its code (or call `exchange_code` from a handler of your own). Without a `client_id` the
    sign-in registers a new OAuth client for the account; the credentials carry the issued one.
    """

    _bound_params = frozenset({'client_id', 'redirect_uri', 'state', 'code_challenge', 'nonce', 'resource'})

    def __init__(
        self,
        *,
        app_name: str,
        host_id: str | None = None,
        client_id: str | None = None,
        id_token_hint: str | None = None,
        redirect_uri: str = REDIRECT_URI,
        state: str | None = None,
        token_url: str = TOKEN_URL,
    ) -> None:
        """Start a flow.

        Args:
            app_name: The app's name, shown to the user when approving a new registration (sent only then).
            host_id: A stable opaque id of this installation, made once and stored (`uuid.uuid4().urn`, an RFC 9278
                JWK thumbprint URI or a `did:key`).
            client_id: The `client_id` of credentials from an earlier sign-in to the same account, to reuse its
                registration; `None` registers a new client.
            id_token_hint: The `id_token` of such credentials, so the user need not pick the account; the sign-in
                must then complete for that account.
            redirect_uri: The loopback address the code is sent to: `http://127.0.0.1:PORT/auth/callback`.
            state: The value the redirect must carry back (a random one by default).
            token_url: The token endpoint (an Edgewise addition, for a proxy or a test server).

        Raises:
            UserError: `redirect_uri`, `host_id` or `id_token_hint` is not of the accepted form.
        """
        try:
            port = urlsplit(redirect_uri).port
        except ValueError:
            port = None
        if not port or redirect_uri != f'http://127.0.0.1:{port}{_REDIRECT_PATH}':
            raise UserError(
                f'`redirect_uri` must be `http://127.0.0.1:PORT{_REDIRECT_PATH}` (Sign in with ChatGPT lets only the '
                f'port vary), not {redirect_uri!r}.'
            )
        if host_id is not None and not host_id.startswith(_HOST_ID_PREFIXES):
            raise UserError(
                '`host_id` must be an opaque `urn:uuid:`, `urn:ietf:params:oauth:jwk-thumbprint:` or `did:key:` '
                f'identifier, not {host_id!r}.'
            )
        self._hint_subject: str | None = None
        if id_token_hint is not None:
            subject = (jwt_claims(id_token_hint) or {}).get('sub')
            if not isinstance(subject, str) or not subject:
                raise UserError('`id_token_hint` is not the ID token of an earlier sign-in.')
            self._hint_subject = subject
        self.app_name = app_name
        """The app's name, shown when a new registration is approved."""
        self.host_id = host_id
        """The installation's stable id, if given."""
        self.client_id = client_id
        """The registration's client id: the one given, else the one the callback issued (once accepted)."""
        self.id_token_hint = id_token_hint
        self.redirect_uri = redirect_uri
        """Where the authorization code is sent."""
        self.state = state or secrets.token_urlsafe(16)
        """The value the redirect carries back, guarding against forged redirects."""
        self.nonce = secrets.token_urlsafe(16)
        """The value the ID token must carry back, binding it to this sign-in."""
        self.code_verifier, self.code_challenge = pkce_pair()
        self._token_url = token_url

    def __repr__(self) -> str:
        return f'{type(self).__name__}(app_name={self.app_name!r}, client_id={self.client_id!r})'

    def authorization_url(self, *, scope: str | None = None, extra_params: Mapping[str, str] | None = None) -> str:
        """The URL the user signs in at (it carries `id_token_hint` when one was given: keep it out of logs).

        Args:
            scope: The OAuth scopes (by default the identity scopes, `offline_access` and plan usage; keep the last
                two: the credentials need a refresh token, and the provider refuses them without plan usage).
            extra_params: More query parameters, over the defaults (`{'prompt': 'consent'}` asks a user who
                declined plan usage again, `{'login_hint': email}` picks an account); `client_id`, `redirect_uri`,
                `state`, `code_challenge`, `nonce` and `resource` cannot be replaced.

        Raises:
            UserError: `extra_params` replaces one of those six.
        """
        params = {
            'response_type': 'code',
            'client_id': self.client_id or REGISTRATION_CLIENT_ID,
            'redirect_uri': self.redirect_uri,
            'scope': DEFAULT_SCOPE if scope is None else scope,
            'resource': RESOURCE,
            'state': self.state,
            'nonce': self.nonce,
            'code_challenge': self.code_challenge,
            'code_challenge_method': 'S256',
        }
        if self.client_id is None:
            params['agent_name_hint'] = self.app_name
        if self.host_id is not None:
            params['ext_agent_host_id'] = self.host_id
        if self.id_token_hint is not None:
            params['id_token_hint'] = self.id_token_hint
        if extra_params:
            bound = sorted(self._bound_params & extra_params.keys())
            if bound:
                raise UserError(
                    f'`extra_params` cannot replace {", ".join(bound)}: the code would not exchange. Pass '
                    '`redirect_uri=` or `client_id=` to `OpenAIChatGPTOAuthFlow` instead.'
                )
            params.update(extra_params)
        return f'{AUTHORIZE_URL}?{urlencode(params)}'

    async def exchange_code(self, code: str, *, client_id: str | None = None) -> OpenAIChatGPTCredentials:
        """The credentials for the authorization code of the redirect.

        They may lack plan usage if the user did not grant it (see `plan_usage_granted`); store them anyway, so the
        next sign-in reuses the registration.

        Args:
            code: The redirect's `code`.
            client_id: The redirect's `client_id`: the issued one, after a new registration (it may be left out when
                the flow reused a `client_id`). Once accepted it is the flow's `client_id`: a retry after a failed
                exchange starts a new flow with `client_id=flow.client_id`.

        Raises:
            UserError: the redirect's `client_id` is missing after a registration, or differs from the flow's.
            CredentialsRefreshError: the token endpoint refused the code, or its ID token failed a check.
        """
        if self.client_id is not None:
            if client_id is not None and client_id != self.client_id:
                raise UserError(
                    f'The redirect carries client {client_id!r} instead of {self.client_id!r}; its code was not '
                    'exchanged.'
                )
            client_id = self.client_id
        elif client_id is None or client_id == REGISTRATION_CLIENT_ID:
            raise UserError('The registration is incomplete: the redirect does not carry the issued `client_id`.')
        else:
            self.client_id = client_id
        form = {
            'grant_type': 'authorization_code',
            'code': code,
            'code_verifier': self.code_verifier,
            'redirect_uri': self.redirect_uri,
            'client_id': client_id,
            'resource': RESOURCE,
        }
        async with own_http_client() as client:
            data = await post_token_request(client, self._token_url, form, provider_name=_NAME)
        credentials = _credentials(data, self._token_url, client_id=client_id)
        if credentials.id_token is None:
            raise CredentialsRefreshError('The token response carries no ID token.', _NAME)
        _check_id_token(credentials.id_token, client_id=client_id, nonce=self.nonce, subject=self._hint_subject)
        return credentials

    async def exchange_code_from_callback(self) -> OpenAIChatGPTCredentials:
        """Serve `redirect_uri` on this machine until the sign-in's redirect arrives, then exchange its code.

        Requests without this flow's `state` are ignored. Wrap the call in `anyio.fail_after` for a time limit.

        Raises:
            UserError: the redirect carries an error instead of a code (the user refused, say).
            CredentialsRefreshError: the token endpoint refused the code, or its ID token failed a check.
        """
        params = await receive_redirect(self.redirect_uri, self.state)
        if not params.get('code'):
            raise UserError(f'Authorization failed: {params.get("error", "unknown")}')
        return await self.exchange_code(params['code'], client_id=params.get('client_id'))


class OpenAIChatGPTProvider(OAuthProvider[OpenAIChatGPTCredentials]):
    """OpenAI's Responses API (`https://api.openai.com/v1`) on a user's ChatGPT plan, with OAuth tokens.

    One provider holds one set of credentials, refreshed in place; `OPENAI_API_KEY` is never read. Give it to an
    `OpenAIResponsesModel`: the name `'openai-chatgpt:<model>'` maps to that model too, but a provider made from the
    name alone has no credentials and raises `UserError`.
    """

    def __init__(
        self,
        credentials: OpenAIChatGPTCredentials | None = None,
        *,
        credential_source: OpenAIChatGPTCredentialSource | None = None,
        http_client: httpx.AsyncClient | None = None,
        base_url: str = BASE_URL,
        token_url: str = TOKEN_URL,
        max_retries: int = 2,
    ) -> None:
        """Configure the provider.

        Args:
            credentials: The credentials of `OpenAIChatGPTOAuthFlow` (refreshed ones then live in memory only).
            credential_source: The application's storage of the credentials (loaded on first use, saved after each
                refresh); not together with `credentials`.
            http_client: An `httpx.AsyncClient` for this provider alone (it must have no `auth`: the provider sets
                its own, which adds credentials only to requests under `base_url`).
            base_url: The API's URL (an Edgewise addition, for a proxy or a test server).
            token_url: The OAuth token endpoint (an Edgewise addition, for a proxy or a test server).
            max_retries: How many times a failed request (429, 5xx, timeout, dropped connection) is retried.

        Raises:
            UserError: neither `credentials` nor `credential_source` is given, or both are; the credentials do not
                grant plan usage; or `http_client` has an auth already.
        """
        if credentials is None and credential_source is None:
            raise UserError(
                '`OpenAIChatGPTProvider` needs `credentials` or a `credential_source`: sign in with '
                '`OpenAIChatGPTOAuthFlow` first.'
            )
        self._base_url = base_url.rstrip('/')
        self._token_url = token_url
        super().__init__(
            credentials, credential_source=credential_source, http_client=http_client, max_retries=max_retries
        )

    @property
    def name(self) -> str:
        """`'openai-chatgpt'`."""
        return _NAME

    @property
    def base_url(self) -> str:
        """The API's URL."""
        return self._base_url

    @property
    def canonical_system(self) -> str:
        """`'openai-chatgpt'`: whether plan usage and OpenAI's API read each other's encrypted reasoning is not
        known, so they are kept apart."""
        return _NAME

    @staticmethod
    def model_profile(model_name: str) -> ModelProfile | None:
        """OpenAI's profile of the model on its API, narrowed to what plan usage accepts."""
        first_party = OpenAIProvider.model_profile(model_name)
        transformer = (first_party or {}).get('json_schema_transformer')
        return merge_profile(
            first_party,
            openai_chatgpt_model_profile(model_name),
            ModelProfile(json_schema_transformer=transformer) if transformer is not None else None,
        )

    def _auth_headers(self, credentials: OpenAIChatGPTCredentials) -> dict[str, str]:
        return {'authorization': f'Bearer {credentials.access_token}'}

    def _access_token(self, credentials: OpenAIChatGPTCredentials) -> str:
        return credentials.access_token

    def _check(self, credentials: OpenAIChatGPTCredentials) -> None:
        if not credentials.plan_usage_granted:
            raise UserError(
                f'These credentials do not grant ChatGPT plan usage (`{PLAN_USAGE_SCOPE}`). Sign in again with '
                f'`OpenAIChatGPTOAuthFlow(client_id={credentials.client_id!r}, ...)`, passing '
                "`extra_params={'prompt': 'consent'}` to `authorization_url()`, and approve using the ChatGPT plan."
            )

    async def _refresh_grant(
        self, credentials: OpenAIChatGPTCredentials, client: httpx.AsyncClient
    ) -> OpenAIChatGPTCredentials:
        form = {
            'grant_type': 'refresh_token',
            'refresh_token': credentials.refresh_token,
            'client_id': credentials.client_id,
            'resource': RESOURCE,
        }
        data = await post_token_request(
            client, self._token_url, form, provider_name=_NAME, rejected_grant_errors=UNUSABLE_REFRESH_TOKEN_ERRORS
        )
        return _credentials(data, self._token_url, client_id=credentials.client_id, previous=credentials)
