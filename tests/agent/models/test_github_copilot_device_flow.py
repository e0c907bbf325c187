"""`GitHubCopilotOAuthFlow` (GitHub's device login) against a real HTTP server on 127.0.0.1 playing github.com's
`/login/device/code` and `/login/oauth/access_token`: the exact forms, polling with `authorization_pending` and
`slow_down`, refusal, expiry (a clock set by construction, no waiting), bad answers, and tokens out of reprs."""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qsl

import anyio.lowlevel
import pytest

from edgewise.agent.exceptions import UserError
from edgewise.agent.providers.github_copilot import (
    GitHubCopilotCredentials,
    GitHubCopilotDeviceAuthorization,
    GitHubCopilotOAuthFlow,
)

from .conftest import serve_http

pytestmark = pytest.mark.anyio

DEVICE: dict[str, Any] = {
    'device_code': 'dc-secret-1',
    'user_code': 'ABCD-1234',
    'verification_uri': 'https://github.com/login/device',
    'expires_in': 900,
    'interval': 5,
}
TOKEN: dict[str, Any] = {'access_token': 'gho_secret-token', 'token_type': 'bearer', 'scope': 'read:user'}
GRANT = 'urn:ietf:params:oauth:grant-type:device_code'


@dataclass
class FakeGitHub:
    url: str = ''
    replies: deque[tuple[int, Any]] = field(default_factory=deque)
    received: list[tuple[str, dict[str, str], str]] = field(default_factory=list)


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    fake = FakeGitHub()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = 'HTTP/1.1'

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get('content-length') or 0))
            fake.received.append(
                (self.path, dict(parse_qsl(raw.decode(), keep_blank_values=True)), self.headers['accept'])
            )
            status, body = fake.replies.popleft()
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            self.send_response(status)
            self.send_header('content-type', 'application/json')
            self.send_header('content-length', str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    with serve_http(Handler) as port:
        fake.url = f'http://127.0.0.1:{port}'
        yield fake


@dataclass
class Time:
    """The flow's clock and sleep: sleeping records the interval and moves the clock on, without waiting."""

    now: float = 0.0
    slept: list[float] = field(default_factory=list)

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds
        await anyio.lowlevel.checkpoint()


def flow_for(github: FakeGitHub, time: Time, **kwargs: Any) -> GitHubCopilotOAuthFlow:
    flow = GitHubCopilotOAuthFlow(client_id='Iv1.client', base_url=github.url, **kwargs)
    flow._sleep = time.sleep
    flow._clock = time.clock
    return flow


async def test_a_login_polls_until_approved_and_slows_down_when_told(github: FakeGitHub) -> None:
    github.replies.extend([
        (200, DEVICE),
        (200, {'error': 'authorization_pending'}),
        (200, {'error': 'slow_down', 'interval': 7}),
        (200, {'error': 'slow_down', 'interval': 20}),
        (200, TOKEN),
    ])  # fmt: skip
    time = Time()
    flow = flow_for(github, time, scope='read:user')
    authorization = await flow.start()
    assert authorization == GitHubCopilotDeviceAuthorization(
        device_code='dc-secret-1', user_code='ABCD-1234', verification_uri='https://github.com/login/device',
        expires_in=900, interval=5,
    )  # fmt: skip
    credentials = await flow.wait_for_authorization()
    assert credentials == GitHubCopilotCredentials(
        access_token='gho_secret-token', token_type='bearer', scope='read:user'
    )
    assert time.slept == [5, 5, 10, 20]
    poll = {'client_id': 'Iv1.client', 'device_code': 'dc-secret-1', 'grant_type': GRANT}
    assert github.received == [
        ('/login/device/code', {'client_id': 'Iv1.client', 'scope': 'read:user'}, 'application/json'),
        *[('/login/oauth/access_token', poll, 'application/json')] * 4,
    ]
    with pytest.raises(UserError, match=r'^Call `start\(\)` before `wait_for_authorization\(\)`\.$'):
        await flow.wait_for_authorization()  # a device code is polled once


async def test_a_refusal_and_an_expiry_are_user_errors(github: FakeGitHub) -> None:
    github.replies.extend([(200, DEVICE), (200, {'error': 'access_denied'})])
    flow = flow_for(github, Time())
    await flow.start()
    with pytest.raises(UserError) as caught:
        await flow.wait_for_authorization()
    assert str(caught.value) == 'GitHub device authorization failed: access_denied.'

    pending = (200, {'error': 'authorization_pending'})
    github.replies.extend([(200, {**DEVICE, 'expires_in': 12}), pending, pending])
    time = Time()
    flow = flow_for(github, time)
    await flow.start()
    github.received.clear()
    with pytest.raises(UserError) as caught:
        await flow.wait_for_authorization()  # polls at 5, then 10; the code expires before the poll at 15
    assert str(caught.value) == 'GitHub device authorization expired. Call `start()` to request a new code.'
    assert (time.slept, len(github.received)) == ([5, 5, 5], 2)


@pytest.mark.parametrize(
    ('reply', 'message'),
    [
        ((400, {'error': 'bad'}), 'GitHub device authorization request failed (HTTP 400).'),
        ((200, {'error': 'unauthorized_client'}), 'GitHub device authorization failed: unauthorized_client.'),
        (
            (200, {**DEVICE, 'verification_uri': 'https://evil.example'}),
            'GitHub returned an invalid device authorization response.',
        ),
        ((200, b'not json'), 'GitHub returned an invalid device authorization response.'),
    ],
)  # fmt: skip
async def test_bad_answers_to_start_are_user_errors(github: FakeGitHub, reply: tuple[int, Any], message: str) -> None:
    github.replies.append(reply)
    with pytest.raises(UserError) as caught:
        await flow_for(github, Time()).start()
    assert str(caught.value) == message


async def test_a_malformed_token_answer_is_a_user_error(github: FakeGitHub) -> None:
    github.replies.extend([(200, DEVICE), (200, {**TOKEN, 'token_type': 'mac'})])
    flow = flow_for(github, Time())
    await flow.start()
    with pytest.raises(UserError) as caught:
        await flow.wait_for_authorization()
    assert str(caught.value) == 'GitHub returned an invalid device token response.'


def test_tokens_stay_out_of_reprs_and_a_client_id_is_required() -> None:
    credentials = GitHubCopilotCredentials(
        access_token='gho_secret', token_type='bearer', scope='', refresh_token='ghr_secret', expires_in=28800
    )
    assert repr(credentials) == (
        "GitHubCopilotCredentials(token_type='bearer', scope='', expires_in=28800, refresh_token_expires_in=None)"
    )
    assert 'dc-secret' not in repr(GitHubCopilotDeviceAuthorization(**DEVICE))
    with pytest.raises(UserError, match='client ID of your GitHub OAuth app'):
        GitHubCopilotOAuthFlow(client_id=' ')
