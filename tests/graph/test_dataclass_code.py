"""`_dataclass_code`: Edgewise's dataclasses made from kept code are the classes `dataclasses` makes, and the cache
file is read, written and refused as a `.pyc` is."""

from __future__ import annotations

import dataclasses
import importlib.util
import marshal
import os
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest

from edgewise.graph import _dataclass_code
from edgewise.graph._dataclass_code import _CodeCache

_PROBE = textwrap.dedent(
    """
    from dataclasses import InitVar, KW_ONLY, dataclass, field

    @dataclass(order=True, frozen=True)
    class Point:
        x: int
        y: int = 0
        tags: list[str] = field(default_factory=list, compare=False)

    @dataclass(slots=True)
    class Holder:
        name: str
        seed: InitVar[int] = 1
        _: KW_ONLY
        size: float = 1.5

        def __post_init__(self, seed: int) -> None:
            self.size *= seed
    """
)

_METHODS = ('__init__', '__repr__', '__eq__', '__lt__', '__hash__', '__setattr__', '__delattr__')


def _made_in(module_name: str) -> types.ModuleType:
    module = types.ModuleType(module_name)
    sys.modules[module_name] = module  # (dataclasses looks the class's module up there)
    try:
        exec(compile(_PROBE, f'<{module_name}>', 'exec', dont_inherit=True), module.__dict__)
    finally:
        del sys.modules[module_name]
    return module


@pytest.fixture
def cache() -> _CodeCache:
    installed = _dataclass_code.current()
    assert installed is not None  # installed with `edgewise.graph`
    assert dataclasses.exec is _dataclass_code._cached_exec  # type: ignore[attr-defined]
    return installed


def _made_without_the_cache(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    with monkeypatch.context() as patched:
        patched.delattr(dataclasses, 'exec')
        return _made_in('dataclass_probe_reference')


@pytest.mark.parametrize('module_name', ['edgewise._dataclass_probe', 'dataclass_probe_program'])
def test_a_dataclass_made_with_the_cache_installed_is_the_class_dataclasses_makes(
    cache: _CodeCache, monkeypatch: pytest.MonkeyPatch, module_name: str
) -> None:
    """An Edgewise class (its code kept) and a program's (passed on to `exec`) alike."""
    own = _made_in(module_name)
    plain = _made_without_the_cache(monkeypatch)
    for name in ('Point', 'Holder'):
        ours, theirs = getattr(own, name), getattr(plain, name)
        for method in _METHODS:
            if not isinstance(vars(theirs).get(method), types.FunctionType):  # absent, or `__hash__ = None`
                assert vars(ours).get(method, 'absent') == vars(theirs).get(method, 'absent')
                continue
            mine, reference = vars(ours)[method].__code__, vars(theirs)[method].__code__
            assert mine.co_code == reference.co_code
            assert mine.co_flags == reference.co_flags  # no `__future__` flag taken from the cache's module
            assert mine.co_varnames == reference.co_varnames
            annotations = [{k: repr(v) for k, v in vars(c)[method].__annotations__.items()} for c in (ours, theirs)]
            assert annotations[0] == annotations[1]  # (by repr: an `InitVar` has no `__eq__`)
    assert own.Point.__init__.__annotations__ == {'x': int, 'y': int, 'tags': list[str], 'return': None}
    assert own.Point(1, 2, ['a']) == own.Point(1, 2, ['b']) < own.Point(2)
    assert repr(own.Point(1)) == 'Point(x=1, y=0, tags=[])'
    with pytest.raises(dataclasses.FrozenInstanceError):
        own.Point(1).x = 2
    assert own.Holder('h', 3).size == 4.5
    assert own.Holder.__slots__ == plain.Holder.__slots__


def test_the_same_class_made_again_compiles_nothing(cache: _CodeCache) -> None:
    _made_in('edgewise._dataclass_probe_first')
    compiled = cache.compiled
    _made_in('edgewise._dataclass_probe_again')
    assert cache.compiled == compiled


def test_a_program_s_dataclasses_are_left_to_dataclasses(cache: _CodeCache) -> None:
    kept = dict(cache.codes)
    _made_in('dataclass_probe_program')
    assert cache.codes == kept


_DAMAGED_CODE = bytes(
    byte if at != 13 else 0xFF
    for at, byte in enumerate(marshal.dumps({'x = 1\n': compile('x = 1\n', '<string>', 'exec', dont_inherit=True)}))
)


def _cache_at(path: Path) -> _CodeCache:
    cache = _CodeCache(path)
    cache.read()
    return cache


def test_the_file_round_trips(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, 'dont_write_bytecode', False)
    path = tmp_path / 'pycache' / 'code.marshal'
    first = _cache_at(path)
    assert first.loaded == 0
    code = first.code('def f():\n return 1\n')
    first.write()
    assert path.read_bytes().startswith(importlib.util.MAGIC_NUMBER)
    assert first.compiled == 0  # written: an exit does not write it again
    second = _cache_at(path)
    assert second.loaded == 1
    assert second.code('def f():\n return 1\n').co_code == code.co_code
    assert second.compiled == 0
    assert [p.name for p in path.parent.iterdir()] == ['code.marshal']  # no temporary file left


@pytest.mark.parametrize(
    'content',
    [
        b'',
        b'garbage',
        b'\x00\x00\x00\x00' + marshal.dumps({'x': 1}),
        importlib.util.MAGIC_NUMBER + b'\xff\x00',
        importlib.util.MAGIC_NUMBER + _DAMAGED_CODE,  # `marshal.loads` raises `SystemError` on this one
    ],
    ids=['empty', 'garbage', 'another-interpreter', 'truncated', 'damaged-code'],
)
def test_an_unreadable_file_is_ignored_and_written_anew(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: bytes
) -> None:
    monkeypatch.setattr(sys, 'dont_write_bytecode', False)
    path = tmp_path / 'code.marshal'
    path.write_bytes(content)
    cache = _cache_at(path)
    assert (cache.loaded, cache.codes) == (0, {})
    cache.code('x = 1\n')
    cache.write()
    assert _cache_at(path).loaded == 1


def test_entries_of_other_types_are_dropped(tmp_path: Path) -> None:
    path = tmp_path / 'code.marshal'
    good = compile('y = 2\n', '<string>', 'exec', dont_inherit=True)
    path.write_bytes(importlib.util.MAGIC_NUMBER + marshal.dumps({'y = 2\n': good, 'z': 3, 4: good}))
    assert list(_cache_at(path).codes) == ['y = 2\n']


def test_nothing_is_written_where_bytecode_is_not(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, 'dont_write_bytecode', True)
    path = tmp_path / 'code.marshal'
    cache = _cache_at(path)
    cache.code('x = 1\n')
    cache.write()
    assert not path.exists()


def test_a_failed_write_leaves_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, 'dont_write_bytecode', False)
    blocker = tmp_path / 'not-a-folder'
    blocker.write_text('')
    cache = _cache_at(blocker / 'code.marshal')
    cache.code('x = 1\n')
    cache.write()  # no error: the cache is only a speed-up
    assert list(tmp_path.iterdir()) == [blocker]


def test_a_full_file_keeps_only_what_the_writer_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, 'dont_write_bytecode', False)
    monkeypatch.setattr(_dataclass_code, '_MAX_KEPT', 3)
    path = tmp_path / 'code.marshal'
    old = _CodeCache(path)
    for n in range(3):
        old.code(f'old = {n}\n')
    old.write()
    assert _cache_at(path).loaded == 3
    new = _cache_at(path)
    new.code('new = 1\n')  # a fourth entry: over the cap, the sources this process did not use are dropped
    new.write()
    assert list(_cache_at(path).codes) == ['new = 1\n']


def _import_in_process(prefix: Path, *, write: bool) -> tuple[int, int, bool]:
    env = {k: v for k, v in os.environ.items() if k != 'PYTHONDONTWRITEBYTECODE'}
    env['PYTHONPYCACHEPREFIX'] = str(prefix)
    if not write:
        env['PYTHONDONTWRITEBYTECODE'] = '1'
    script = (
        'import edgewise.graph\n'
        'from edgewise.graph import _dataclass_code\n'
        'c = _dataclass_code.current()\n'
        'print(c.loaded, c.compiled, c.path.is_relative_to(__import__("sys").pycache_prefix))\n'
    )
    out = subprocess.run([sys.executable, '-c', script], env=env, check=True, capture_output=True, text=True)
    loaded, compiled, under_prefix = out.stdout.split()
    return int(loaded), int(compiled), under_prefix == 'True'


def test_a_second_process_compiles_none_of_edgewise_s_dataclasses(tmp_path: Path) -> None:
    loaded, compiled, under_prefix = _import_in_process(tmp_path, write=True)
    assert (loaded, under_prefix) == (0, True)
    assert compiled > 20  # the graph package's dataclasses
    assert _import_in_process(tmp_path, write=True) == (compiled, 0, True)


def test_a_process_that_writes_no_bytecode_writes_no_cache(tmp_path: Path) -> None:
    first = _import_in_process(tmp_path, write=False)
    assert first[0] == 0
    assert _import_in_process(tmp_path, write=False) == first


def test_a_call_without_namespaces_runs_in_the_caller_s_as_the_builtin_does() -> None:
    probe = 'the caller'
    _dataclass_code._cached_exec("assert probe == 'the caller' and __name__ == 'tests.graph.test_dataclass_code'")
    assert probe == 'the caller'


def test_a_damaged_cache_file_does_not_stop_the_import(tmp_path: Path) -> None:
    """The file at the cache's path is damaged: `edgewise.graph` still imports, and the exit writes it anew."""
    env = {k: v for k, v in os.environ.items() if k != 'PYTHONDONTWRITEBYTECODE'}
    env['PYTHONPYCACHEPREFIX'] = str(tmp_path)
    where = 'from edgewise.graph import _dataclass_code; print(_dataclass_code.cache_path())'
    out = subprocess.run([sys.executable, '-c', where], env=env, check=True, capture_output=True, text=True)
    path = Path(out.stdout.strip())
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(importlib.util.MAGIC_NUMBER + _DAMAGED_CODE)
    assert _import_in_process(tmp_path, write=True)[0] == 0  # read nothing from it, and wrote it anew
    assert _import_in_process(tmp_path, write=True)[1] == 0
