"""The AG-UI protocol's Python SDK (`ag-ui-protocol`, the `ag-ui` extra), imported once for the package."""

from __future__ import annotations as _annotations

import importlib.metadata

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

__all__ = ('DEFAULT_AG_UI_VERSION', 'core', 'encoder')

DEFAULT_AG_UI_VERSION: str = importlib.metadata.version('ag-ui-protocol')
"""The version of the installed AG-UI SDK."""
