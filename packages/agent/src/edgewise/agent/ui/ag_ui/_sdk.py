"""The AG-UI protocol's Python SDK (`ag-ui-protocol`, the `ag-ui` extra), imported once for the package."""

from __future__ import annotations as _annotations

import importlib.metadata
import re

try:
    import ag_ui.core as core
    import ag_ui.encoder as encoder
except ModuleNotFoundError as _error:  # pragma: no cover - exercised in a subprocess by the extra's test
    if _error.name is None or _error.name.split('.')[0] != 'ag_ui':
        raise
    # Named after the distribution, so that tools (and the wheel check) see what is missing.
    raise ModuleNotFoundError(
        'edgewise.agent.ui.ag_ui needs the AG-UI protocol SDK: install the `ag-ui` extra, '
        '`pip install "edgewise-agent[ag-ui]"`.',
        name='ag_ui_protocol',
    ) from _error

from ...exceptions import UserError

__all__ = ('DEFAULT_AG_UI_VERSION', 'core', 'encoder', 'parse_ag_ui_version')

DEFAULT_AG_UI_VERSION: str = importlib.metadata.version('ag-ui-protocol')
"""The version of the installed AG-UI SDK."""

_VERSION = re.compile(r'\d+(\.\d+)*')


def parse_ag_ui_version(version: str) -> tuple[int, ...]:
    """A version string as a tuple of numbers (`'0.1.13'` is `(0, 1, 13)`; a pre-release suffix is dropped).

    Raises:
        UserError: the string does not start with a dotted number.
    """
    found = _VERSION.match(version)
    if found is None:
        raise UserError(f'AG-UI version {version!r}: give a dotted number such as `1.0.0`.')
    return tuple(int(part) for part in found.group(0).split('.'))
