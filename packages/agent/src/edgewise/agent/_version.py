"""The installed version of `edgewise-agent`, read when `edgewise.agent.__version__` is first asked for."""

from importlib.metadata import version

__all__ = ('__version__',)

__version__: str = version('edgewise-agent')
"""The version of `edgewise-agent`, as installed."""
