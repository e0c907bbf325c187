"""Plain-text tables and one-line summaries of stored values."""

from __future__ import annotations as _annotations

from collections.abc import Sequence
from typing import Any

__all__ = ('table', 'summary')


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Left-aligned columns two spaces apart, the header first; no trailing spaces."""
    widths = [len(header) for header in headers]
    for row in rows:
        for i, cell in enumerate(row):
            if len(cell) > widths[i]:
                widths[i] = len(cell)
    last = len(headers) - 1
    lines = []
    for row in (headers, *rows):
        cells = [cell if i == last else cell.ljust(widths[i]) for i, cell in enumerate(row)]
        lines.append('  '.join(cells).rstrip())
    return '\n'.join(lines)


def summary(value: Any, limit: int = 100) -> str:
    """A one-line, Python-like rendering of stored JSON data, cut at `limit` characters."""
    text = _render(value)
    return text if len(text) <= limit else f'{text[: limit - 3]}...'


def _render(value: Any) -> str:
    if isinstance(value, dict):
        return ', '.join(f'{key}={_inner(item)}' for key, item in value.items())
    return _inner(value)


def _inner(value: Any) -> str:
    if isinstance(value, dict):
        return '{' + ', '.join(f'{key!r}: {_inner(item)}' for key, item in value.items()) + '}'
    if isinstance(value, list):
        return '[' + ', '.join(_inner(item) for item in value) + ']'
    return repr(value)
