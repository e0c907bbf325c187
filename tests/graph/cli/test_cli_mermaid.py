"""`edgewise mermaid` driven as a subprocess: code, files, images, run paths and every user error."""

from __future__ import annotations

import json
import signal
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from inline_snapshot import snapshot

if TYPE_CHECKING:
    from tests.graph.cli.conftest import Edgewise

REVIEW = """\
---
title: review_graph
---
stateDiagram-v2
  Draft --> Review
  Review --> Publish: approve
  Review --> Revise: request changes
  note right of Review
    Approve, or send back with a comment.
  end note
  Revise --> Review
  Publish --> [*]: published
"""


def test_prints_the_code_titled_with_the_graphs_variable(edgewise: Edgewise, seeded: Path) -> None:
    assert edgewise('mermaid', 'flows:review_graph', cwd=seeded) == (0, REVIEW, '')


def test_a_python_file_as_the_module(edgewise: Edgewise, seeded: Path) -> None:
    assert edgewise('mermaid', 'flows.py:review_graph', cwd=seeded) == (0, REVIEW, '')


def test_module_found_through_pythonpath(edgewise: Edgewise, seeded: Path, tmp_path: Path) -> None:
    assert edgewise('mermaid', 'flows:review_graph', cwd=seeded, env={'PYTHONPATH': str(seeded)}) == (0, REVIEW, '')


def test_ctrl_c_while_importing_the_graph(edgewise: Edgewise, seeded: Path) -> None:
    process = edgewise.start('mermaid', 'slow_import:graph', cwd=seeded)
    process.read_until('importing')
    process.send_signal(signal.SIGINT)
    result = process.finish()
    assert (result.code, result.out.strip(), result.err) == (130, 'importing', 'edgewise: error: interrupted\n')


def test_diagram_options(edgewise: Edgewise, seeded: Path) -> None:
    result = edgewise(
        'mermaid',
        'flows:review_graph',
        '--start',
        'Draft',
        '--direction',
        'LR',
        '--highlight',
        'Review',
        'Publish',
        '--no-notes',
        '--no-edge-labels',
        '--title',
        'Reviews',
        cwd=seeded,
    )
    assert result == (
        0,
        snapshot("""\
---
title: Reviews
---
stateDiagram-v2
  direction LR
  [*] --> Draft
  Draft --> Review
  Review --> Publish
  Review --> Revise
  Revise --> Review
  Publish --> [*]

classDef highlighted fill:#fdff32
class Review highlighted
class Publish highlighted
"""),
        '',
    )


def test_no_title(edgewise: Edgewise, seeded: Path) -> None:
    result = edgewise('mermaid', 'flows:ticks_graph', '--no-title', cwd=seeded)
    assert result == (0, 'stateDiagram-v2\n  Tick --> Tick\n  Tick --> [*]\n', '')


def test_path_of_a_stored_run(edgewise: Edgewise, seeded: Path) -> None:
    result = edgewise(
        'mermaid', 'flows:review_graph', '--run', 'run-partial', '--store', 'sqlite:///runs.db', cwd=seeded
    )
    assert result.out.partition('\n\n')[2] == snapshot("""\
classDef highlighted fill:#fdff32
class Draft highlighted
class Revise highlighted
classDef stopped fill:#7ec8ff,stroke:#1f6fb2,stroke-width:3px
class Review stopped
""")


def test_path_of_a_failed_run(edgewise: Edgewise, seeded: Path) -> None:
    result = edgewise(
        'mermaid', 'flows:failing_graph', '--run', 'run-failed', '--store', 'sqlite:///runs.db', cwd=seeded
    )
    assert result == (
        0,
        snapshot("""\
---
title: failing_graph
---
stateDiagram-v2
  Explode --> [*]

classDef failed fill:#ff8a80,stroke:#c62828,stroke-width:3px
class Explode failed
"""),
        '',
    )


def test_mmd_output_writes_the_code(edgewise: Edgewise, project: Path) -> None:
    result = edgewise('mermaid', 'flows:review_graph', '-o', 'review.mmd', cwd=project)
    assert (result, (project / 'review.mmd').read_text()) == ((0, '', ''), REVIEW)


def test_image_rendered_by_the_local_cli(edgewise: Edgewise, project: Path) -> None:
    mmdc = project / 'mmdc'
    mmdc.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{Path(__file__).parent.parent / "fake_mmdc.py"}" "$@"\n')
    mmdc.chmod(0o755)
    (project / 'puppeteer.json').write_text('{"args": ["--no-sandbox"]}')
    result = edgewise(
        'mermaid',
        'flows:ticks_graph',
        '-o',
        'ticks.svg',
        '--renderer',
        'local',
        '--mmdc',
        str(mmdc),
        '--theme',
        'dark',
        '--puppeteer-config',
        'puppeteer.json',
        cwd=project,
    )
    image = json.loads((project / 'ticks.svg').read_text())
    assert (result, image) == (
        (0, '', ''),
        {
            'format': 'svg',
            'options': {'quiet': True, 'puppeteerConfigFile': 'puppeteer.json', 'theme': 'dark'},
            'code': '---\ntitle: ticks_graph\n---\nstateDiagram-v2\n  Tick --> Tick\n  Tick --> [*]',
        },
    )


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.server.paths.append(self.path)  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header('Content-Type', 'image/png')
        self.end_headers()
        self.wfile.write(b'PNG bytes')

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def service_url() -> Iterator[tuple[str, list[str]]]:
    server = ThreadingHTTPServer(('127.0.0.1', 0), _Handler)
    paths: list[str] = []
    server.paths = paths  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, kwargs={'poll_interval': 0.01}, daemon=True)
    thread.start()
    yield f'http://127.0.0.1:{server.server_address[1]}', paths
    server.shutdown()
    server.server_close()
    thread.join()


def test_image_rendered_by_a_service(edgewise: Edgewise, project: Path, service_url: tuple[str, list[str]]) -> None:
    url, paths = service_url
    result = edgewise('mermaid', 'flows:ticks_graph', '-o', 'ticks.png', '--service-url', url, cwd=project)
    assert (result, (project / 'ticks.png').read_bytes(), paths) == (
        (0, '', ''),
        b'PNG bytes',
        [
            '/img/LS0tCnRpdGxlOiB0aWNrc19ncmFwaAotLS0Kc3RhdGVEaWFncmFtLXYyCiAgVGljayAtLT4gVGljawogIFRpY2sgLS0+IFsqXQ==?type=png'
        ],
    )


@pytest.mark.parametrize(
    ('args', 'message'),
    [
        (
            ('flows',),
            "'flows' is not MODULE:GRAPH, e.g. `examples.graph.review_workflow:review_graph` or `flows.py:graph`.",
        ),
        (
            ('nowhere.flows:graph',),
            "Cannot import 'nowhere.flows': no module named 'nowhere' (run from the directory that holds it, or add "
            'that directory to PYTHONPATH).',
        ),
        (('missing.py:graph',), "Cannot import 'missing.py': no such file."),
        (('flows:nothing',), "Module 'flows' has no attribute 'nothing'."),
        (('flows:not_a_graph',), 'flows:not_a_graph is an int, not an edgewise `Graph`.'),
        (('broken:graph',), "Importing 'broken' failed: ValueError: this module cannot be imported"),
        (('broken.py:graph',), "Importing 'broken.py' failed: ValueError: this module cannot be imported"),
        (
            ('needs_missing:graph',),
            "Importing 'needs_missing' failed: No module named 'not_an_installed_package'.",
        ),
        (('flows:review_graph.name',), 'flows:review_graph.name is a NoneType, not an edgewise `Graph`.'),
        (
            ('flows:review_graph', '--start', 'Nope'),
            'Start node "Nope" is not in the graph; its nodes are: Draft, Review, Revise, Publish.',
        ),
        (('flows:review_graph', '--run', 'run-done'), '--run and --store go together: --run RUN_ID --store URL.'),
        (
            ('flows:review_graph', '--run', 'run-x', '--store', 'sqlite:///runs.db'),
            "No run 'run-x' in sqlite:///runs.db (`edgewise runs list --store URL` lists them).",
        ),
        (
            ('flows:review_graph', '-o', 'review.txt'),
            "Cannot tell the format of 'review.txt' from its suffix; use .mmd (mermaid code), .png, .jpg, .jpeg, "
            '.webp, .svg, .pdf.',
        ),
        (
            ('flows:review_graph', '-o', 'no/such/dir/review.mmd'),
            "Cannot write 'no/such/dir/review.mmd': No such file or directory.",
        ),
        (
            ('flows:review_graph', '-o', 'review.png', '--renderer', 'local', '--mmdc', './no-mmdc'),
            "The mermaid CLI './no-mmdc' was not found or is not executable. Install it with `npm install -g "
            '@mermaid-js/mermaid-cli` (and a Chromium, see docs/diagrams.md), pass its path as `--mmdc PATH`, or '
            'render with the mermaid service (`--renderer service`).',
        ),
    ],
)
def test_user_errors_are_one_line(edgewise: Edgewise, seeded: Path, args: tuple[str, ...], message: str) -> None:
    assert edgewise('mermaid', *args, cwd=seeded) == (1, '', f'edgewise: error: {message}\n')


def test_mmd_output_is_the_code_an_image_is_rendered_from(edgewise: Edgewise, seeded: Path) -> None:
    mmdc = seeded / 'mmdc'
    mmdc.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{Path(__file__).parent.parent / "fake_mmdc.py"}" "$@"\n')
    mmdc.chmod(0o755)
    common = ('mermaid', 'flows:review_graph', '--run', 'run-partial', '--store', 'sqlite:///runs.db')
    code = edgewise(*common, '--direction', 'LR', '--highlight', 'Publish', '-o', 'run.mmd', cwd=seeded)
    image = edgewise(
        *common,
        '--direction',
        'LR',
        '--highlight',
        'Publish',
        '-o',
        'run.svg',
        '--renderer',
        'local',
        '--mmdc',
        str(mmdc),
        cwd=seeded,
    )

    assert (code.code, image.code) == (0, 0)
    rendered = json.loads((seeded / 'run.svg').read_text())['code']
    assert (seeded / 'run.mmd').read_text() == rendered + '\n'
    assert 'class Review stopped' in rendered


def test_mermaid_errors_name_the_command_s_options(edgewise: Edgewise, seeded: Path) -> None:
    args = ('flows:review_graph', '-o', 'review.png', '--service-url', 'http://127.0.0.1:1')
    assert edgewise('mermaid', *args, cwd=seeded) == (
        1,
        '',
        'edgewise: error: Cannot reach the mermaid service at http://127.0.0.1:1: [Errno 111] Connection refused. '
        'Check `--service-url` and the network, or render offline with `--renderer local`.\n',
    )
