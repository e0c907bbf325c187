"""Without the `dbos` extra, `edgewise.agent` works and `edgewise.agent.durable_exec.dbos` names the extra."""

from __future__ import annotations

import subprocess

from ..._without_module import run_without


def run(code: str) -> subprocess.CompletedProcess[str]:
    return run_without('dbos', code)


def test_import_names_the_extra() -> None:
    result = run(
        '\ntry:\n    import edgewise.agent.durable_exec.dbos\n'
        'except ModuleNotFoundError as e:\n    print(e.name, str(e))'
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        'dbos edgewise.agent.durable_exec.dbos needs the DBOS library: install the `dbos` extra, '
        '`pip install "edgewise-agent[dbos]"`.\n'
    )


def test_agent_imports_without_dbos() -> None:
    result = run("import edgewise.agent; assert sys.modules['dbos'] is None; print('ok')")
    assert result.returncode == 0, result.stderr
    assert result.stdout == 'ok\n'
