"""The compiled code of the methods `dataclasses` writes for Edgewise's own dataclasses, kept between processes.

`@dataclass` writes the source of each class's `__init__`, `__repr__`, `__eq__`... and compiles it when the class is
made: for Edgewise's few hundred dataclasses, that compilation is about a third of the time `from edgewise.agent
import Agent` takes. The source depends only on the class's definition, so its code object can be kept as Python
keeps a module's: marshalled in the `__pycache__` folder (or under `sys.pycache_prefix`), written only where
bytecode is written (`sys.dont_write_bytecode`), and used only by the interpreter version that wrote it.

How: while this is installed, the `dataclasses` module's calls of `exec` go through `_exec`, which looks the source
up by its exact text (and compiles it as `exec` would, on a miss) for the classes of `edgewise.*` modules; any
other call is passed on unchanged. The same source gives the same code, so a class made with the kept code is the
class `dataclasses` would make without it. What was compiled anew is written when the process exits.
"""

# No `from __future__ import annotations` here: `exec` compiles a source with the `__future__` flags of the module
# that calls it, and the sources passed on unchanged must be compiled as in `dataclasses`, which has none (with the
# flag, the annotations of a program's dataclass `__init__` would become strings).

import atexit
import builtins
import contextlib
import dataclasses
import importlib.util
import marshal
import os
import sys
import tempfile
from pathlib import Path
from types import CodeType
from typing import Any

_OWN_MODULES = 'edgewise.'
"""The modules whose dataclasses' code is kept: Edgewise's own (a program's classes are left alone)."""

_MAX_KEPT = 8192
"""The most entries a cache file keeps; beyond that it keeps only what the writing process used (sources of
earlier versions of the classes would otherwise pile up)."""

_exec = builtins.exec


class _CodeCache:
    """The kept code objects by source text: those read from `path` and those compiled in this process."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.codes: dict[str, CodeType] = {}
        self.used: set[str] = set()
        self.compiled = 0
        """How many sources this process compiled (not found in the file)."""
        self.loaded = 0
        """How many entries the file held when it was read."""

    def read(self) -> None:
        """Take the entries of the file, if it is there and was written by this interpreter version; a file that
        cannot be read (damaged, or of another version) is ignored, and written anew at exit."""
        if self.path is None:
            return
        try:
            data = self.path.read_bytes()
        except OSError:
            return
        magic = importlib.util.MAGIC_NUMBER
        if not data.startswith(magic):
            return
        try:
            codes = marshal.loads(data[len(magic) :])
        except Exception:  # a damaged file: marshal raises EOFError, ValueError, SystemError...
            return
        if isinstance(codes, dict):
            self.codes = {s: c for s, c in codes.items() if isinstance(s, str) and isinstance(c, CodeType)}
            self.loaded = len(self.codes)

    def code(self, source: str) -> CodeType:
        """The code of `source`, compiled as `exec(source, ...)` in `dataclasses` compiles it (no `__future__`
        flags: `dataclasses` has none) when not kept yet."""
        code = self.codes.get(source)
        if code is None:
            code = self.codes[source] = compile(source, '<string>', 'exec', dont_inherit=True)
            self.compiled += 1
        self.used.add(source)
        return code

    def write(self) -> None:
        """Write the entries if this process compiled some and bytecode is written; an error writing leaves the
        old file (or none), as a failed `.pyc` write does."""
        if self.path is None or not self.compiled or sys.dont_write_bytecode:
            return
        codes = self.codes
        if len(codes) > _MAX_KEPT:
            codes = {s: c for s, c in codes.items() if s in self.used}
        temporary: str | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # A file of this writer's own (made exclusively), renamed over the cache: a reader sees the old file or
            # the whole new one, and two writers never share a file.
            fd, temporary = tempfile.mkstemp(prefix=f'{self.path.name}.', suffix='.tmp', dir=self.path.parent)
            with os.fdopen(fd, 'wb') as file:
                file.write(importlib.util.MAGIC_NUMBER + marshal.dumps(codes))
            os.replace(temporary, self.path)
        except OSError:
            if temporary is not None:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)
            return
        self.compiled = 0


def cache_path() -> Path | None:
    """Where the cache lives: the `__pycache__` folder of this package (under `sys.pycache_prefix` if set), named
    for this interpreter; `None` where the interpreter keeps no bytecode (no cache tag)."""
    tag = sys.implementation.cache_tag
    if tag is None:  # pragma: no cover - interpreters without bytecode caching
        return None
    beside = importlib.util.cache_from_source(__file__)  # this module's own `.pyc` path
    return Path(beside).with_name(f'edgewise-dataclass-code.{tag}.marshal')


_cache: _CodeCache | None = None


def _cached_exec(source: Any, globals: Any = None, locals: Any = None, /, **kwargs: Any) -> None:
    """`exec` for `dataclasses`: the source of an Edgewise dataclass's methods run from its kept code."""
    if globals is None:  # (as the builtin: the caller's namespaces, not this function's)
        caller = sys._getframe(1)
        globals = caller.f_globals
        if locals is None:
            locals = caller.f_locals
    cache = _cache
    if (
        cache is not None
        and type(source) is str
        and not kwargs
        and type(globals) is dict
        and str(globals.get('__name__', '')).startswith(_OWN_MODULES)
    ):
        source = cache.code(source)
    _exec(source, globals, locals, **kwargs)


def install() -> None:
    """Have `dataclasses` use the kept code for Edgewise's dataclasses from now on (once per process)."""
    global _cache
    if _cache is not None:
        return
    cache = _CodeCache(cache_path())
    cache.read()
    _cache = cache
    dataclasses.exec = _cached_exec  # type: ignore[attr-defined]  # (shadows the builtin for `dataclasses` alone)
    atexit.register(cache.write)


def current() -> _CodeCache | None:
    """The installed cache (for tests and diagnostics)."""
    return _cache


install()  # on import: `edgewise.graph` imports this module before any module that makes a dataclass
