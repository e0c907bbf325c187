"""Rendering diagram images offline with the mermaid CLI, `mmdc` (npm `@mermaid-js/mermaid-cli`)."""

from __future__ import annotations as _annotations

import itertools
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from ..exceptions import LocalRendererError

if TYPE_CHECKING:
    from ._config import ImageType, MermaidConfig

__all__ = ('can_render', 'render')

# Starting Chromium and rendering takes a second or two; a minute means it hangs.
_TIMEOUT_SECONDS = 120.0
_FORMATS = ('png', 'svg', 'pdf')


def can_render(config: MermaidConfig, image_type: ImageType | None) -> bool:
    """Whether the CLI is installed and can produce the image `config` asks for."""
    return _executable(config) is not None and _unsupported(config, image_type) is None


def render(code: str, config: MermaidConfig, image_type: ImageType | None) -> bytes:
    """Render `code` with the CLI and return the image (PNG unless `image_type` says otherwise)."""
    executable = _executable(config)
    if executable is None:
        name = config.get('mmdc', 'mmdc')
        raise LocalRendererError(
            f'The mermaid CLI {str(name)!r} was not found or is not executable. Install it with '
            '`npm install -g @mermaid-js/mermaid-cli` (and a Chromium, see docs/diagrams.md), pass its path '
            "as `mmdc=...`, or render with the mermaid service (`renderer='service'`)."
        )
    problem = _unsupported(config, image_type)
    if problem is not None:
        raise LocalRendererError(problem)
    image_format = image_type or 'png'
    with tempfile.TemporaryDirectory(prefix='edgewise-mermaid-') as tmp:
        source = Path(tmp, 'diagram.mmd')
        output = Path(tmp, f'diagram.{image_format}')
        source.write_text(code, encoding='utf-8')
        command = [executable, '--input', str(source), '--output', str(output), '--outputFormat', image_format]
        command += ['--quiet', *_options(config)]
        try:
            completed = subprocess.run(
                command,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                errors='replace',
                timeout=_TIMEOUT_SECONDS,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise LocalRendererError(
                f'The mermaid CLI {executable} did not finish within {_TIMEOUT_SECONDS:g} seconds; check that its '
                'Chromium starts (a puppeteer configuration with `--no-sandbox` is needed as root).'
            ) from None
        except OSError as e:
            raise LocalRendererError(f'Cannot run the mermaid CLI {executable}: {e}.') from e
        if completed.returncode != 0:
            raise LocalRendererError(
                f'The mermaid CLI {executable} failed with exit status {completed.returncode}:\n'
                f'{_tail(completed.stderr or completed.stdout)}'
            )
        try:
            return output.read_bytes()
        except FileNotFoundError:
            raise LocalRendererError(
                f'The mermaid CLI {executable} exited successfully but wrote no image; its output:\n'
                f'{_tail(completed.stderr or completed.stdout)}'
            ) from None


def _executable(config: MermaidConfig) -> str | None:
    return shutil.which(str(config.get('mmdc', 'mmdc')))


def _unsupported(config: MermaidConfig, image_type: ImageType | None) -> str | None:
    """Why the CLI cannot produce what `config` asks for, or `None` if it can."""
    if image_type is not None and image_type not in _FORMATS:
        return (
            f'The mermaid CLI renders png, svg and pdf images, not {image_type}; ask for one of those, '
            "or render with the mermaid service (`renderer='service'`)."
        )
    options = [name for name in ('pdf_paper', 'pdf_landscape') if config.get(name)]
    if options:
        return (
            f'The mermaid CLI does not support {" and ".join(f"`{o}`" for o in options)}; use `pdf_fit`, '
            "or render with the mermaid service (`renderer='service'`)."
        )
    return None


def _options(config: MermaidConfig) -> list[str]:
    """The CLI's options for the image options of `config` (the service's conventions, translated)."""
    options: list[str] = []
    if puppeteer_config := config.get('puppeteer_config'):
        options += ['--puppeteerConfigFile', str(puppeteer_config)]
    if theme := config.get('theme'):
        options += ['--theme', theme]
    if background_color := config.get('background_color'):
        # The service takes a hex code without '#' or '!name'; the CLI takes CSS colours.
        if background_color.startswith('!'):
            options += ['--backgroundColor', background_color[1:]]
        else:
            options += ['--backgroundColor', f'#{background_color}']
    if width := config.get('width'):
        options += ['--width', str(width)]
    if height := config.get('height'):
        options += ['--height', str(height)]
    if scale := config.get('scale'):
        options += ['--scale', str(scale)]
    if config.get('pdf_fit'):
        options.append('--pdfFit')
    return options


def _tail(output: str) -> str:
    """The CLI's error message without the JavaScript stack trace that follows it."""
    lines = [line.rstrip() for line in output.strip().splitlines() if line.strip()]
    message = list(itertools.takewhile(lambda line: not _STACK_LINE.match(line.strip()), lines)) or lines[-5:]
    text = '\n'.join(message) if message else '(no output)'
    return text if len(text) <= 1500 else f'{text[:1497]}...'


# `    at f (file:///x.js:1:2)` and `Parser.parseError (https://x/y.mjs:188:21)`
_STACK_LINE = re.compile(r'at |\S+ \(\S+:\d+:\d+\)$')
