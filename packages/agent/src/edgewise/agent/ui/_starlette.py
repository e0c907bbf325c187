"""Starlette, imported only where an adapter answers HTTP itself (the `ui` and `web` extras)."""

from __future__ import annotations as _annotations

import importlib
import sys
from types import ModuleType

__all__ = ('starlette_module',)


def starlette_module(name: str, what: str) -> ModuleType:
    """Import `starlette.<name>`, or fail naming the extra that brings Starlette and `what` needs it.

    Raises:
        ModuleNotFoundError: Starlette is not installed (`name='starlette'`, so tools see what is missing).
    """
    try:
        return importlib.import_module(f'starlette.{name}')
    except ModuleNotFoundError as error:
        if sys.modules.get('starlette') is not None:  # Starlette is there, a module of it is not: no missing extra
            raise
        raise ModuleNotFoundError(
            f'{what} needs Starlette: install the `ui` extra, `pip install "edgewise-agent[ui]"` '
            '(or `[web]` for `Agent.to_web()`, `[ag-ui]` for the AG-UI adapter).',
            name='starlette',
        ) from error
