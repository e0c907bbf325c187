"""Without the `dbos` extra, `edgewise.graph` works and `edgewise.graph.dbos` says which extra to install."""

from __future__ import annotations

import subprocess

from ..._without_module import run_without


def run(code: str) -> subprocess.CompletedProcess[str]:
    return run_without('dbos', code)


def test_import_names_the_extra() -> None:
    result = run('import edgewise.graph.dbos')
    assert result.returncode == 1
    assert (
        'ModuleNotFoundError: edgewise.graph.dbos needs the DBOS library: install the `dbos` extra, '
        '`pip install "edgewise-graph[dbos]"`.'
    ) in result.stderr


def test_the_import_error_names_the_missing_module() -> None:
    result = run(
        '\ntry:\n    import edgewise.graph.dbos\n'
        'except ModuleNotFoundError as e:\n    print(e.name, isinstance(e, ImportError))'
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == 'dbos True\n'


def test_graph_imports_without_dbos() -> None:
    result = run("import edgewise.graph; assert 'dbos' not in sys.modules or sys.modules['dbos'] is None; print('ok')")
    assert result.returncode == 0, result.stderr
    assert result.stdout == 'ok\n'
