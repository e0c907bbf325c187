"""`edgewise.agent` imports its public names on first use: the table and the typed imports agree, every name
resolves to the object of its home module, and importing one corner of the package does not load the engine."""

from __future__ import annotations

import ast
import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

import edgewise.agent
import edgewise.agent.capabilities
import edgewise.agent.toolsets

INIT = Path(edgewise.agent.__file__)
OWN_VALUES = ('BANNER_ENABLED',)
"""The public names the package defines itself rather than imports: settings users assign to."""


def _fresh_python(code: str) -> str:
    """What `python -c code` prints in a fresh process, run as a program runs: without the coverage measurement that
    `make test` starts in child processes (coverage imports `json`, `traceback`, ... of its own)."""
    env = {k: v for k, v in os.environ.items() if k not in ('COVERAGE_PROCESS_CONFIG', 'COVERAGE_PROCESS_START')}
    return subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True, env=env).stdout


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
    assert set(edgewise.agent.__all__) == set(edgewise.agent._EXPORTS) | set(OWN_VALUES)
    assert all(name in vars(edgewise.agent) for name in OWN_VALUES)


@pytest.mark.parametrize('name', sorted(set(edgewise.agent.__all__) - set(OWN_VALUES)))
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
        "print(sorted(m for m in sys.modules if m in ('edgewise.agent.agent', 'edgewise.agent._loop.nodes', "
        "'edgewise.agent.toolsets', 'edgewise.graph')))"
    )
    out = _fresh_python(code)
    assert out.strip() == '[]'


def test_star_import_gives_every_public_name() -> None:
    namespace: dict[str, object] = {}
    exec('from edgewise.agent import *', namespace)
    assert set(edgewise.agent.__all__) <= set(namespace)


def _capabilities_typed_imports() -> dict[str, str]:
    # The names `capabilities/__init__.py` imports for type checkers only, as name -> module.
    from edgewise.agent import capabilities

    tree = ast.parse(Path(capabilities.__file__).read_text())
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == 'TYPE_CHECKING':
            for statement in node.body:
                if isinstance(statement, ast.ImportFrom):
                    for alias in statement.names:
                        found[alias.name] = (statement.module or '').lstrip('.')
    return found


def test_the_capabilities_lazy_table_names_what_type_checkers_see() -> None:
    from edgewise.agent import capabilities

    assert _capabilities_typed_imports() == capabilities._LAZY
    assert set(capabilities._LAZY) <= set(capabilities.__all__)


@pytest.mark.parametrize('name', ['CAPABILITY_TYPES', *sorted(edgewise.agent.capabilities._LAZY)])
def test_lazy_capabilities_resolve_on_first_use(name: str) -> None:
    # In a fresh process: the name is not loaded by importing the agent, and resolves when asked for.
    code = (
        'import sys; from edgewise.agent import Agent, capabilities; '
        'loaded = [m for m in capabilities._LAZY.values() if f"{capabilities.__name__}.{m}" in sys.modules]; '
        f'value = capabilities.{name}; '
        "print(loaded, getattr(value, '__module__', type(value).__name__))"
    )
    out = _fresh_python(code).split()
    assert out[0] == '[]'
    from edgewise.agent import capabilities

    value = getattr(capabilities, name)
    if name == 'CAPABILITY_TYPES':
        assert out[-1] == 'dict'
    elif callable(value):
        assert out[-1] == f'edgewise.agent.capabilities.{capabilities._LAZY[name]}'
    else:  # a type alias (`ModelIdResolver`, `HistoryProcessorFunc`): its home module's object
        home = importlib.import_module(f'edgewise.agent.capabilities.{capabilities._LAZY[name]}')
        assert value is getattr(home, name)


def test_capability_types_name_every_serializable_capability() -> None:
    from edgewise.agent import capabilities

    types = capabilities.CAPABILITY_TYPES
    assert types['WebSearch'] is capabilities.WebSearch
    assert types['MCP'] is capabilities.MCP
    assert types['ToolSearch'] is capabilities.ToolSearch
    assert all(cls.get_serialization_name() == name for name, cls in types.items())
    assert {'WebSearch', 'XSearch', 'Thinking', 'PrefixTools'} <= set(dir(capabilities))
    with pytest.raises(AttributeError, match=r"has no attribute 'NoSuchCapability'"):
        capabilities.NoSuchCapability  # noqa: B018


def test_importing_the_agent_does_not_build_the_output_envelope_validator() -> None:
    code = (
        'from edgewise.agent import Agent; from edgewise.agent._output import envelope as e; '
        'print(e._envelope_adapter.cache_info().currsize)'
    )
    out = _fresh_python(code)
    assert out.strip() == '0'


def _toolsets_typed_imports() -> dict[str, str]:
    from edgewise.agent import toolsets

    tree = ast.parse(Path(toolsets.__file__).read_text())
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == 'TYPE_CHECKING':
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom)
                for alias in statement.names:
                    found[alias.name] = (statement.module or '').lstrip('.')
    return found


def test_the_toolsets_lazy_table_names_what_type_checkers_see() -> None:
    from edgewise.agent import toolsets

    assert _toolsets_typed_imports() == toolsets._LAZY
    assert set(toolsets._LAZY) <= set(toolsets.__all__)
    assert set(toolsets._LAZY) <= set(dir(toolsets))
    with pytest.raises(AttributeError, match=r"module 'edgewise\.agent\.toolsets' has no attribute 'NoSuchToolset'"):
        toolsets.NoSuchToolset  # noqa: B018


@pytest.mark.parametrize('name', sorted(edgewise.agent.toolsets._LAZY))
def test_lazy_toolsets_resolve_on_first_use(name: str) -> None:
    # In a fresh process: the wrapper's module is not loaded by importing the agent, and the name resolves to it.
    code = (
        'import sys; from edgewise.agent import Agent, toolsets; '
        f'module = "edgewise.agent.toolsets.{edgewise.agent.toolsets._LAZY[name]}"; '
        f'loaded = module in sys.modules; value = toolsets.{name}; '
        'print(loaded, value is getattr(sys.modules[module], value.__name__))'
    )
    out = _fresh_python(code)
    assert out.split() == ['False', 'True']


def test_importing_the_agent_builds_no_schema_and_loads_no_stored_run_code() -> None:
    # The first pydantic schema built loads pydantic's plugins (through importlib.metadata's scan of the installed
    # distributions); the durable stores and the resume code load with the first run that needs them.
    code = (
        'import sys; from edgewise.agent import Agent; '
        "print(sorted(m for m in ('pydantic.plugin._loader', 'edgewise.graph.persistence.store', "
        "'edgewise.agent.agent._resume', 'edgewise.agent.stored_runs') if m in sys.modules))"
    )
    out = _fresh_python(code)
    assert out.strip() == '[]'


def test_wrapper_methods_import_their_wrapper_on_first_use() -> None:
    # In a fresh process, where no wrapper module is loaded yet: each method of `AbstractToolset` still wraps.
    code = (
        'from edgewise.agent.toolsets import FunctionToolset; t = FunctionToolset(); print(*(type(w).__name__ for w '
        'in (t.filtered(lambda c, d: True), t.prefixed("p"), t.prepared(lambda c, d: d), t.renamed({}), '
        't.approval_required(), t.defer_loading(), t.include_return_schemas(), t.with_metadata(a=1))))'
    )
    out = _fresh_python(code)
    assert out.split() == [
        'FilteredToolset',
        'PrefixedToolset',
        'PreparedToolset',
        'RenamedToolset',
        'ApprovalRequiredToolset',
        'DeferredLoadingToolset',
        'IncludeReturnSchemasToolset',
        'SetMetadataToolset',
    ]


def test_importing_agent_does_not_load_what_only_some_runs_use() -> None:
    # Agent specs, the test model, the workspace backends, graph diagrams, the prompt-cache health judge (traced runs
    # only), the sync streaming bridge and the thread machinery (`anyio.from_thread`, `concurrent.futures`, with
    # `logging`) are loaded by the programs that use them.
    modules = (
        'anyio.from_thread',
        'anyio.to_thread',
        'concurrent.futures',
        'logging',
        'edgewise.agent.agent._from_spec',
        'edgewise.graph.mermaid',
        'edgewise.agent.models._cache_health',
        'edgewise.agent._streaming.run_result_sync',
        'edgewise.agent.models.test',
        'edgewise.agent.workspaces.local',
        'edgewise.agent.workspaces.authority',
        'edgewise.agent.workspaces.readonly',
        # Nor: anyio's locks and low-level API (the first run loads them), stdlib modules only some calls need, the
        # graph's events (streamed runs) and fan-out, the messages' trace shapes (traced runs), history sanitizing
        # (untrusted clients), the journal of durable operations, the content-filter error, history processors,
        # the model-choice capabilities and the providers' profiles (their models load them).
        'anyio._core._synchronization',
        'anyio.lowlevel',
        'heapq',
        'html',
        'json',
        'mimetypes',
        'shlex',
        'traceback',
        'unicodedata',
        'edgewise.graph.events',
        'edgewise.graph.fork',
        'edgewise.agent._messages.otel',
        'edgewise.agent._messages.sanitize',
        'edgewise.agent._run.operation_journal',
        'edgewise.agent.capabilities.content_filter',
        'edgewise.agent.capabilities.process_history',
        'edgewise.agent.capabilities.resolve_model_id',
        'edgewise.agent.capabilities.select_model',
        'edgewise.agent.profiles.anthropic',
        'edgewise.agent.profiles.google',
        'edgewise.agent.profiles.openai',
    )
    code = f'import sys; from edgewise.agent import Agent; print(sorted(m for m in sys.modules if m in {modules!r}))'
    out = _fresh_python(code)
    assert out.strip() == '[]'


def test_the_workspace_package_loads_its_backends_on_first_use() -> None:
    import edgewise.agent.workspaces as workspaces
    from edgewise.agent.workspaces.authority import AuthorityWorkspace
    from edgewise.agent.workspaces.local import LocalWorkspaceBackend
    from edgewise.agent.workspaces.readonly import ReadOnlyWorkspace

    assert workspaces.LocalWorkspaceBackend is LocalWorkspaceBackend
    assert workspaces.AuthorityWorkspace is AuthorityWorkspace
    assert workspaces.ReadOnlyWorkspace is ReadOnlyWorkspace
    assert set(workspaces.__all__) <= set(dir(workspaces))
    with pytest.raises(AttributeError, match=r"has no attribute 'Nothing'"):
        workspaces.Nothing  # noqa: B018


def test_importing_the_agent_compiles_no_special_token_or_lookalike_pattern() -> None:
    # The patterns are compiled by the first call that needs them, and the calls still find what they look for.
    code = (
        'from edgewise.agent import Agent; from edgewise.agent.models import _special_tokens as s; '
        'from edgewise.agent._messages import lookalike as l, framing as f; '
        'from edgewise.agent._output import schema as o; from edgewise.agent.models import _canonical_system as c; '
        'caches = (s._token_start, s._joiner_in_token, s._escaped_joiner_in_token, '
        'l._tag_pattern, l._entity_patterns, f._builtin_openers, o._fence_re, o._tool_name_unsafe, '
        'c._google_cloud_host); '
        'print(*(c.cache_info().currsize for c in caches)); '
        'print(s.restore_special_tokens(s.break_special_tokens("<|im_start|>")) == "<|im_start|>", '
        'l.lookalike_tags("&lt;system>") == ["system"], f.neutralize_tags("<system>") == "&lt;system>")'
    )
    out = _fresh_python(code).split()
    assert out == ['0'] * 9 + ['True'] * 3


def test_sanitize_messages_resolves_on_first_use() -> None:
    import edgewise.agent.messages as messages
    from edgewise.agent._messages.sanitize import sanitize_messages

    assert messages.sanitize_messages is sanitize_messages
    assert {'sanitize_messages', 'ModelMessagesTypeAdapter'} <= set(dir(messages))
    assert set(messages.__all__) <= set(dir(messages))
    with pytest.raises(AttributeError, match=r"module 'edgewise\.agent\.messages' has no attribute 'Nothing'"):
        messages.Nothing  # noqa: B018
