"""Without the `mcp` extra, `edgewise.agent` works and `edgewise.agent.mcp` says which extra to install."""

from __future__ import annotations

import subprocess

from ..._without_module import run_without


def run(code: str) -> subprocess.CompletedProcess[str]:
    return run_without('mcp', code)


def test_import_names_the_extra() -> None:
    result = run('import edgewise.agent.mcp')
    assert result.returncode == 1
    assert (
        'ModuleNotFoundError: edgewise.agent.mcp needs the MCP Python SDK: install the `mcp` extra, '
        '`pip install "edgewise-agent[mcp]"`.'
    ) in result.stderr


def test_the_import_error_names_the_missing_module() -> None:
    result = run(
        '\ntry:\n    import edgewise.agent.mcp\n'
        'except ModuleNotFoundError as e:\n    print(e.name, isinstance(e, ImportError))'
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == 'mcp True\n'


def test_agent_imports_without_mcp() -> None:
    result = run("import edgewise.agent, edgewise.agent.toolsets; assert sys.modules['mcp'] is None; print('ok')")
    assert result.returncode == 0, result.stderr
    assert result.stdout == 'ok\n'
