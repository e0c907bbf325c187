"""`edgewise.agent` imports its public names on first use: the table and the typed imports agree, every name
resolves to the object of its home module, and importing one corner of the package does not load the engine."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import edgewise.agent

INIT = Path(edgewise.agent.__file__)


def _typed_imports() -> dict[str, str]:
    # The `if TYPE_CHECKING:` imports of `__init__.py`, as name -> module, which is what type checkers see.
    tree = ast.parse(INIT.read_text())
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == 'TYPE_CHECKING':
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom)
                for alias in statement.names:
                    found[alias.asname or alias.name] = '.' * statement.level + (statement.module or '')
    return found


def test_the_lazy_table_names_what_type_checkers_see() -> None:
    assert _typed_imports() == edgewise.agent._EXPORTS
    assert set(edgewise.agent.__all__) == set(edgewise.agent._EXPORTS)


@pytest.mark.parametrize('name', sorted(edgewise.agent.__all__))
def test_each_public_name_is_its_home_modules_object(name: str) -> None:
    home = importlib.import_module(edgewise.agent._EXPORTS[name], 'edgewise.agent')
    assert getattr(edgewise.agent, name) is getattr(home, name)


def test_submodules_are_reachable_as_attributes_and_unknown_names_fail_clearly() -> None:
    assert edgewise.agent.format_prompt is importlib.import_module('edgewise.agent.format_prompt')
    with pytest.raises(AttributeError, match=r"module 'edgewise\.agent' has no attribute 'NoSuchName'"):
        edgewise.agent.NoSuchName  # noqa: B018
    assert 'Agent' in dir(edgewise.agent)


def test_importing_a_model_module_does_not_load_the_agent_engine() -> None:
    code = (
        'import sys, edgewise.agent.models.openai, edgewise.agent.messages; '
        "print(sorted(m for m in sys.modules if m in ('edgewise.agent.agent', 'edgewise.agent._agent_graph', "
        "'edgewise.agent.toolsets', 'edgewise.graph')))"
    )
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == '[]'


def test_star_import_gives_every_public_name() -> None:
    namespace: dict[str, object] = {}
    exec('from edgewise.agent import *', namespace)
    assert set(edgewise.agent.__all__) <= set(namespace)
