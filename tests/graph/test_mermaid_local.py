"""Offline rendering with the mermaid CLI, driven through a stand-in `mmdc` (fake_mmdc.py) run as a real subprocess.

The stand-in checks its arguments as mmdc does and writes, as JSON, the format, options and diagram it was given.
The real CLI with Chromium was checked by hand (docs/diagrams.md says how to install it).
"""

from __future__ import annotations

import json
import socket
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from edgewise.graph import BaseNode, End, Graph, GraphRunContext, mermaid
from edgewise.graph.exceptions import DiagramRenderError, LocalRendererError
from edgewise.graph.mermaid import _local as _mermaid_local


@dataclass
class Fetch(BaseNode[None, None, int]):
    async def run(self, ctx: GraphRunContext) -> Parse:
        return Parse()


@dataclass
class Parse(BaseNode[None, None, int]):
    async def run(self, ctx: GraphRunContext) -> Fetch | End[int]:
        return End(1)


pipeline = Graph(nodes=[Fetch, Parse])
CODE = mermaid.generate_code(pipeline)


@pytest.fixture
def mmdc(tmp_path: Path) -> str:
    """An executable `mmdc` in its own directory, running the stand-in."""
    bin_dir = tmp_path / 'bin'
    bin_dir.mkdir()
    script = Path(__file__).with_name('fake_mmdc.py')
    executable = bin_dir / 'mmdc'
    executable.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{script}" "$@"\n')
    executable.chmod(0o755)
    return str(executable)


def _image(data: bytes) -> dict[str, Any]:
    return dict(json.loads(data))


def test_local_renderer_makes_a_png_by_default(mmdc: str) -> None:
    image = mermaid.request_image(pipeline, renderer='local', mmdc=mmdc)
    assert _image(image) == {'format': 'png', 'options': {'quiet': True}, 'code': CODE}


def test_image_options_become_cli_options(mmdc: str, tmp_path: Path) -> None:
    puppeteer = tmp_path / 'puppeteer.json'
    puppeteer.write_text('{"executablePath": "/usr/bin/chromium", "args": ["--no-sandbox"]}')
    image = mermaid.request_image(
        pipeline,
        renderer='local',
        mmdc=mmdc,
        puppeteer_config=puppeteer,
        image_type='svg',
        theme='dark',
        background_color='FF0000',
        width=800,
        height=600,
        scale=2,
    )
    assert _image(image) == {
        'format': 'svg',
        'options': {
            'quiet': True,
            'puppeteerConfigFile': 'puppeteer.json',
            'theme': 'dark',
            'backgroundColor': '#FF0000',
            'width': 800,
            'height': 600,
            'scale': 2.0,
        },
        'code': CODE,
    }


def test_named_background_colour_and_pdf_fit(mmdc: str) -> None:
    image = mermaid.request_image(
        pipeline, renderer='local', mmdc=mmdc, image_type='pdf', pdf_fit=True, background_color='!white'
    )
    assert _image(image) == {
        'format': 'pdf',
        'options': {'quiet': True, 'backgroundColor': 'white', 'pdfFit': True},
        'code': CODE,
    }


@pytest.mark.parametrize('suffix', ['svg', 'png', 'pdf'])
def test_graph_save_renders_locally_in_the_suffixs_format(mmdc: str, tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f'pipeline.{suffix}'
    pipeline.mermaid_save(path, renderer='local', mmdc=mmdc, start_node=Fetch)
    assert _image(path.read_bytes()) == {
        'format': suffix,
        'options': {'quiet': True},
        'code': """\
---
title: pipeline
---
stateDiagram-v2
  [*] --> Fetch
  Fetch --> Parse
  Parse --> Fetch
  Parse --> [*]""",
    }


def test_cli_is_found_on_path_by_default(mmdc: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('PATH', str(Path(mmdc).parent))
    image = mermaid.request_image(pipeline, renderer='local', image_type='svg')
    assert _image(image)['format'] == 'svg'


def test_auto_prefers_the_local_cli(mmdc: str) -> None:
    image = mermaid.request_image(pipeline, renderer='auto', mmdc=mmdc, base_url='http://127.0.0.1:9')
    assert _image(image)['format'] == 'png'


def test_auto_uses_the_service_for_formats_the_cli_lacks(mmdc: str) -> None:
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        port = sock.getsockname()[1]
    with pytest.raises(DiagramRenderError, match=rf'^Cannot reach the mermaid service at http://127\.0\.0\.1:{port}'):
        mermaid.request_image(
            pipeline, renderer='auto', mmdc=mmdc, image_type='webp', base_url=f'http://127.0.0.1:{port}'
        )


def test_missing_cli_says_how_to_install_it() -> None:
    with pytest.raises(LocalRendererError) as exc_info:
        mermaid.request_image(pipeline, renderer='local', mmdc='/nonexistent/mmdc')
    assert str(exc_info.value) == (
        "The mermaid CLI '/nonexistent/mmdc' was not found or is not executable. Install it with "
        '`npm install -g @mermaid-js/mermaid-cli` (and a Chromium, see docs/diagrams.md), pass its path as '
        "`mmdc=...`, or render with the mermaid service (`renderer='service'`)."
    )


@pytest.mark.parametrize('suffix', ['jpg', 'webp'])
def test_formats_the_cli_cannot_make_are_refused(mmdc: str, tmp_path: Path, suffix: str) -> None:
    image_type = {'jpg': 'jpeg', 'webp': 'webp'}[suffix]
    with pytest.raises(LocalRendererError) as exc_info:
        mermaid.save_image(tmp_path / f'x.{suffix}', pipeline, renderer='local', mmdc=mmdc)
    assert str(exc_info.value) == (
        f'The mermaid CLI renders png, svg and pdf images, not {image_type}; ask for one of those, '
        "or render with the mermaid service (`renderer='service'`)."
    )
    assert not (tmp_path / f'x.{suffix}').exists()


def test_pdf_paper_options_are_refused(mmdc: str) -> None:
    with pytest.raises(LocalRendererError) as exc_info:
        mermaid.request_image(
            pipeline, renderer='local', mmdc=mmdc, image_type='pdf', pdf_paper='a4', pdf_landscape=True
        )
    assert str(exc_info.value) == (
        'The mermaid CLI does not support `pdf_paper` and `pdf_landscape`; use `pdf_fit`, or render with the '
        "mermaid service (`renderer='service'`)."
    )


def test_cli_failure_reports_its_error_without_the_stack_trace(mmdc: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('FAKE_MMDC_MODE', 'fail')
    with pytest.raises(LocalRendererError) as exc_info:
        mermaid.request_image(pipeline, renderer='local', mmdc=mmdc)
    assert str(exc_info.value) == (
        f'The mermaid CLI {mmdc} failed with exit status 1:\nError: Parse error on line 2:\n...A --> --> B\n------^'
    )


def test_cli_rejecting_its_arguments_is_reported(mmdc: str) -> None:
    with pytest.raises(
        LocalRendererError, match=r"(?s)failed with exit status 2:\nusage: mmdc .*invalid choice: 'rainbow'"
    ):
        mermaid.request_image(pipeline, renderer='local', mmdc=mmdc, theme='rainbow')  # type: ignore[arg-type]


def test_cli_writing_no_image_is_reported(mmdc: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('FAKE_MMDC_MODE', 'no-output')
    with pytest.raises(LocalRendererError) as exc_info:
        mermaid.request_image(pipeline, renderer='local', mmdc=mmdc)
    assert str(exc_info.value) == (
        f'The mermaid CLI {mmdc} exited successfully but wrote no image; its output:\nrendered nothing'
    )


def test_cli_that_cannot_start_is_reported(tmp_path: Path) -> None:
    broken = tmp_path / 'mmdc'
    broken.write_text('#!/nonexistent/interpreter\n')
    broken.chmod(0o755)
    with pytest.raises(LocalRendererError, match=rf'^Cannot run the mermaid CLI {broken}: .*No such file'):
        mermaid.request_image(pipeline, renderer='local', mmdc=broken)


def test_cli_that_hangs_is_stopped(mmdc: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('FAKE_MMDC_MODE', 'hang')
    monkeypatch.setattr(_mermaid_local, '_TIMEOUT_SECONDS', 0.5)
    with pytest.raises(LocalRendererError) as exc_info:
        mermaid.request_image(pipeline, renderer='local', mmdc=mmdc)
    assert str(exc_info.value) == (
        f'The mermaid CLI {mmdc} did not finish within 0.5 seconds; check that its Chromium starts (a puppeteer '
        'configuration with `--no-sandbox` is needed as root).'
    )
