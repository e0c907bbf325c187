"""Rendering images through a mermaid.ink-compatible service: a real HTTP server on 127.0.0.1 checks each request.

The expected endpoints and query strings are those pydantic-graph 1.107.10 sent for the same options
(recorded once, pasted here); the diagram in the URL is checked against `generate_code`, whose text is
checked against pydantic-graph in test_mermaid_code.py.
"""

from __future__ import annotations

import base64
import binascii
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import parse_qsl, urlsplit

import httpx
import pytest

from edgewise.graph import BaseNode, Edge, End, Graph, GraphRunContext, mermaid
from edgewise.graph.exceptions import (
    DiagramError,
    DiagramRenderError,
    DiagramTooLongError,
    GraphError,
    MermaidServiceError,
)


@dataclass
class Ask(BaseNode[None, None, str]):
    async def run(self, ctx: GraphRunContext) -> Annotated[Answer, Edge(label='ask it')]:
        return Answer()


@dataclass
class Answer(BaseNode[None, None, str]):
    async def run(self, ctx: GraphRunContext) -> Ask | Annotated[End[str], Edge(label='right')]:
        return End('ok')


quiz = Graph(nodes=[Ask, Answer])

_ENDPOINT_PARAMS = {
    'img': {'type', 'bgColor', 'theme', 'width', 'height', 'scale'},
    'svg': {'bgColor', 'theme', 'width', 'height', 'scale'},
    'pdf': {'fit', 'landscape', 'paper', 'bgColor', 'theme', 'width', 'height', 'scale'},
}


@dataclass
class Received:
    """A request the service accepted, decoded."""

    endpoint: str
    code: str
    query: str


@dataclass
class Service:
    """A mermaid.ink look-alike: checks every request like the real service would, answers with fake images."""

    url: str
    prefix: str = ''
    received: list[Received] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    answer: tuple[int, str, bytes] | None = None
    """A canned answer (status, content type, body) instead of an image."""

    def check(self, method: str, target: str) -> tuple[int, str, bytes]:
        url = urlsplit(target)
        if method != 'GET':
            return self.reject(f'{method} is not supported')
        parts = url.path.removeprefix(self.prefix).split('/')
        if len(parts) != 3 or parts[0] != '' or parts[1] not in _ENDPOINT_PARAMS:
            return self.reject(f'unknown path {url.path}')
        endpoint, encoded = parts[1], parts[2]
        try:
            code = base64.b64decode(encoded, validate=True).decode()
        except (binascii.Error, UnicodeDecodeError):
            return self.reject(f'the diagram is not standard base64 of UTF-8: {encoded[:40]}')
        if not code.startswith(('stateDiagram-v2\n', '---\ntitle: ')):
            return self.reject(f'not a state diagram: {code[:40]!r}')
        extra = {key for key, _ in parse_qsl(url.query, keep_blank_values=True)} - _ENDPOINT_PARAMS[endpoint]
        if extra:
            return self.reject(f'parameters {sorted(extra)} are not accepted by /{endpoint}/')
        self.received.append(Received(endpoint, code, url.query))
        if self.answer is not None:
            return self.answer
        image_type = dict(parse_qsl(url.query)).get('type', 'jpeg') if endpoint == 'img' else endpoint
        return 200, f'image/{image_type}', f'{image_type} image'.encode()

    def reject(self, problem: str) -> tuple[int, str, bytes]:
        self.problems.append(problem)
        return 400, 'text/plain', problem.encode()


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:
        self._answer()

    def do_POST(self) -> None:
        self._answer()

    def _answer(self) -> None:
        status, content_type, body = self.server.service.check(self.command, self.path)
        self.send_response(status)
        self.send_header('Content-Type', content_type)
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    service: Service


def _serve(prefix: str) -> Iterator[Service]:
    server = _Server(('127.0.0.1', 0), _Handler)
    host, port = server.server_address[:2]
    server.service = Service(url=f'http://{host!s}:{port}{prefix}', prefix=prefix)
    thread = threading.Thread(target=server.serve_forever, kwargs={'poll_interval': 0.01}, daemon=True)
    thread.start()
    try:
        yield server.service
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    assert server.service.problems == []


@pytest.fixture
def service() -> Iterator[Service]:
    yield from _serve('')


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client() as client:
        yield client


QUIZ = mermaid.generate_code(quiz)


def _received(service: Service) -> list[tuple[str, str, str]]:
    return [(r.endpoint, r.code, r.query) for r in service.received]


def test_default_image_is_a_jpeg_from_img(service: Service, client: httpx.Client) -> None:
    image = mermaid.request_image(quiz, httpx_client=client, base_url=service.url)
    assert image == b'jpeg image'
    assert _received(service) == [('img', QUIZ, '')]


@pytest.mark.parametrize(
    ('config', 'expected'),
    [
        pytest.param({'image_type': 'png'}, ('img', 'type=png'), id='png'),
        pytest.param({'image_type': 'jpeg'}, ('img', 'type=jpeg'), id='jpeg'),
        pytest.param(
            {
                'image_type': 'webp',
                'background_color': 'FF0000',
                'theme': 'dark',
                'width': 800,
                'height': 600,
                'scale': 2,
            },
            ('img', 'type=webp&bgColor=FF0000&theme=dark&width=800&height=600&scale=2'),
            id='webp-every-image-option',
        ),
        pytest.param(
            {'image_type': 'svg', 'theme': 'forest', 'background_color': '!white'},
            ('svg', 'bgColor=%21white&theme=forest'),
            id='svg-named-background',
        ),
        pytest.param(
            {'image_type': 'pdf', 'pdf_fit': True, 'pdf_landscape': True, 'pdf_paper': 'a4'},
            ('pdf', 'fit=&landscape=&paper=a4'),
            id='pdf-every-option',
        ),
        pytest.param({'image_type': 'pdf', 'pdf_fit': False}, ('pdf', ''), id='pdf-no-fit'),
        pytest.param({'width': 300, 'scale': 1.5}, ('img', 'width=300&scale=1.5'), id='float-scale'),
    ],
)
def test_image_options_become_the_query_pydantic_graph_sent(
    service: Service, client: httpx.Client, config: dict[str, Any], expected: tuple[str, str]
) -> None:
    mermaid.request_image(quiz, httpx_client=client, base_url=service.url, **config)
    assert _received(service) == [(expected[0], QUIZ, expected[1])]


def test_diagram_options_shape_the_code_sent(service: Service, client: httpx.Client) -> None:
    mermaid.request_image(
        quiz,
        httpx_client=client,
        base_url=service.url,
        start_node='Ask',
        highlighted_nodes=['Answer'],
        edge_labels=False,
        notes=False,
        direction='LR',
        title='T',
    )
    assert _received(service) == [
        (
            'img',
            """\
---
title: T
---
stateDiagram-v2
  direction LR
  [*] --> Ask
  Ask --> Answer
  Answer --> Ask
  Answer --> [*]

classDef highlighted fill:#fdff32
class Answer highlighted""",
            '',
        )
    ]


@pytest.mark.parametrize(
    ('suffix', 'expected'),
    [
        ('png', ('img', 'type=png', b'png image')),
        ('svg', ('svg', '', b'svg image')),
        ('pdf', ('pdf', '', b'pdf image')),
        ('webp', ('img', 'type=webp', b'webp image')),
        ('jpg', ('img', '', b'jpeg image')),
        ('jpeg', ('img', '', b'jpeg image')),
        ('PNG', ('img', 'type=png', b'png image')),
        ('gif', ('img', '', b'jpeg image')),
    ],
)
def test_save_image_picks_the_format_from_the_suffix(
    service: Service, client: httpx.Client, tmp_path: Path, suffix: str, expected: tuple[str, str, bytes]
) -> None:
    path = tmp_path / f'diagram.{suffix}'
    mermaid.save_image(path, quiz, httpx_client=client, base_url=service.url)
    assert (_received(service), path.read_bytes()) == ([(expected[0], QUIZ, expected[1])], expected[2])


def test_save_image_type_beats_the_suffix(service: Service, client: httpx.Client, tmp_path: Path) -> None:
    path = tmp_path / 'diagram.png'
    mermaid.save_image(str(path), quiz, httpx_client=client, base_url=service.url, image_type='svg')
    assert (_received(service), path.read_bytes()) == ([('svg', QUIZ, '')], b'svg image')


def test_graph_image_is_titled_with_the_inferred_name(service: Service, client: httpx.Client) -> None:
    image = quiz.mermaid_image(httpx_client=client, base_url=service.url, start_node=Ask)
    assert (image, service.received[0].code) == (
        b'jpeg image',
        """\
---
title: quiz
---
stateDiagram-v2
  [*] --> Ask
  Ask --> Answer: ask it
  Answer --> Ask
  Answer --> [*]: right""",
    )


def test_graph_save_without_title(service: Service, client: httpx.Client, tmp_path: Path) -> None:
    quiz.mermaid_save(tmp_path / 'q.svg', httpx_client=client, base_url=service.url, title=None)
    assert (_received(service), (tmp_path / 'q.svg').read_bytes()) == ([('svg', QUIZ, '')], b'svg image')


def test_without_a_client_one_is_made_and_closed(service: Service) -> None:
    assert mermaid.request_image(quiz, base_url=service.url + '/', image_type='png') == b'png image'
    assert _received(service) == [('img', QUIZ, 'type=png')]


def test_self_hosted_service_under_a_path() -> None:
    for service in _serve('/tools/mermaid'):
        assert mermaid.request_image(quiz, base_url=service.url, image_type='svg') == b'svg image'
        assert _received(service) == [('svg', QUIZ, '')]


def test_error_status_carries_the_status_and_the_services_message(service: Service, client: httpx.Client) -> None:
    service.answer = (400, 'text/plain', b'Syntax error in graph\n  at line 3')
    with pytest.raises(MermaidServiceError) as exc_info:
        mermaid.request_image(quiz, httpx_client=client, base_url=service.url)
    error = exc_info.value
    assert (str(error), error.status_code, error.service_message, error.response.status_code) == (
        f'400 error generating image:\nSyntax error in graph at line 3\n(the mermaid service at {service.url} '
        'answered 400 Bad Request)',
        400,
        'Syntax error in graph\n  at line 3',
        400,
    )
    assert isinstance(error, httpx.HTTPStatusError | DiagramRenderError | DiagramError | GraphError | RuntimeError)


def test_error_is_an_httpx_status_error_as_in_pydantic_graph(service: Service, client: httpx.Client) -> None:
    service.answer = (500, 'text/plain', b'')
    with pytest.raises(
        httpx.HTTPStatusError,
        match=r'^500 error generating image:\n\n\(the mermaid service at .* answered 500 Internal Server Error\)$',
    ):
        mermaid.request_image(quiz, httpx_client=client, base_url=service.url)


def test_long_error_pages_are_shortened_in_the_message(service: Service, client: httpx.Client) -> None:
    page = '<html>' + 'x' * 2000 + '</html>'
    service.answer = (503, 'text/html', page.encode())
    with pytest.raises(MermaidServiceError) as exc_info:
        mermaid.request_image(quiz, httpx_client=client, base_url=service.url)
    error = exc_info.value
    shown = str(error).split('\n')[1]
    assert (len(shown), shown[-10:], error.service_message) == (500, 'xxxxxxx...', page)


def test_service_refusing_a_long_url_says_the_diagram_is_too_long(service: Service, client: httpx.Client) -> None:
    service.answer = (414, 'text/plain', b'URI Too Long')
    with pytest.raises(DiagramTooLongError) as exc_info:
        mermaid.request_image(quiz, httpx_client=client, base_url=service.url)
    url_length = len(f'{service.url}/img/') + len(base64.b64encode(QUIZ.encode()))
    assert (str(exc_info.value), exc_info.value.status_code, exc_info.value.url_length) == (
        f'The mermaid service at {service.url} refused the request as too long (414 Request-URI Too Long): the '
        f'diagram needs a {url_length}-character URL. Render it offline with `renderer="local"`.',
        414,
        url_length,
    )


def test_too_long_diagram_is_refused_before_sending(service: Service, client: httpx.Client) -> None:
    with pytest.raises(DiagramTooLongError) as exc_info:
        mermaid.request_image(quiz, httpx_client=client, base_url=service.url, max_url_length=100)
    url_length = len(f'{service.url}/img/') + len(base64.b64encode(QUIZ.encode()))
    assert (str(exc_info.value), exc_info.value.status_code, service.received) == (
        f'The diagram is too long for the mermaid service: its request URL would be {url_length} characters, '
        'over the limit of 100. Render it offline with `renderer="local"`, or raise `max_url_length` for a '
        'self-hosted service that accepts longer URLs.',
        None,
        [],
    )
    assert isinstance(exc_info.value, ValueError)


def test_default_limit_lets_a_large_diagram_through(service: Service, client: httpx.Client) -> None:
    big = mermaid.generate_code(quiz, title='x' * 11_000)
    mermaid.request_image(quiz, httpx_client=client, base_url=service.url, title='x' * 11_000)
    assert _received(service) == [('img', big, '')]


def test_unreachable_service_names_its_url() -> None:
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        port = sock.getsockname()[1]
    with pytest.raises(DiagramRenderError, match=rf'^Cannot reach the mermaid service at http://127\.0\.0\.1:{port}: '):
        mermaid.request_image(quiz, base_url=f'http://127.0.0.1:{port}')


def test_auto_renderer_uses_the_service_without_a_local_cli(service: Service, client: httpx.Client) -> None:
    image = mermaid.request_image(
        quiz, httpx_client=client, base_url=service.url, renderer='auto', mmdc='no-such-mmdc-here'
    )
    assert (image, _received(service)) == (b'jpeg image', [('img', QUIZ, '')])


def test_graph_image_without_name_inference_has_no_title(service: Service, client: httpx.Client) -> None:
    unnamed = Graph(nodes=[Ask, Answer])
    unnamed.mermaid_image(infer_name=False, httpx_client=client, base_url=service.url)
    unnamed.mermaid_save('/dev/null', infer_name=False, httpx_client=client, base_url=service.url)
    assert (_received(service), unnamed.name) == ([('img', QUIZ, ''), ('img', QUIZ, '')], None)
