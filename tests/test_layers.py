"""Imports point one way: no import cycle inside `edgewise.graph` or `edgewise.agent`, no way up between them.

The checker reads the source with `ast` and imports nothing. Every import statement counts, wherever it
is: at the top, under `if TYPE_CHECKING:`, inside a function (a cycle dodged with a lazy import is still a
cycle). An import is an edge to the module whose code it needs: `from .a import b` is an edge to `a.b`
when `b` is a submodule and to `a` otherwise; `import p.a.b` is an edge to `p.a.b`. Parent packages that
Python runs on the way to a submodule are not counted, or every `__init__.py` that re-exports its
submodules would be in a cycle with each of them.

The same holds one level up, between the rooms of a package (each folder, and each module of its root): no
loop between rooms, and each room on its floor (`AGENT_FLOORS`, `GRAPH_FLOORS`) imports only from its floor
or the ones below. docs/architecture.md draws the same floors; a test checks that it names only modules that
exist and every room there is.
"""

from __future__ import annotations

import ast
import itertools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).parent.parent
GRAPH_SRC = ROOT / 'packages/graph/src/edgewise/graph'
AGENT_SRC = ROOT / 'packages/agent/src/edgewise/agent'
ARCHITECTURE = ROOT / 'docs/architecture.md'

# The floors of each package, bottom first: a room (a folder, or a module of the package root; `''` is the
# package's `__init__`) imports only rooms of its own floor or of the floors below.
AGENT_FLOORS: tuple[tuple[str, frozenset[str]], ...] = (
    (
        'vocabulary',
        frozenset(
            {
                '_messages',
                'exceptions',
                '_errors',
                '_message_flow',
                '_tools',
                'function_signature',
                'messages',
                'output',
                'settings',
                'usage',
                'native_tools',
                'builtin_tools',
                'format_prompt',
                'framing',
                'concurrency',
                'conversation',
                '_spec',
                '_enqueue',
                '_parts_manager',
                'realtime',
                'external_events',
                '_threads',
                '_instrument',
                '_warnings',
                '_cost',
                'prices',
                '_utils',
                '_version',
            }
        ),
    ),
    (
        'engines',
        frozenset(
            {
                'retries',
                'profiles',
                'providers',
                'models',
                '_run_context',
                '_function_schema',
                '_functions',
                'tools',
                '_output',
                'toolsets',
                'mcp',
                'common_tools',
                'ext',
                'embeddings',
                'images',
                'workspaces',
                'template',
            }
        ),
    ),
    ('run', frozenset({'_run'})),
    ('capabilities', frozenset({'capabilities', 'tool_manager'})),
    ('loop', frozenset({'_loop'})),
    ('streaming', frozenset({'_streaming', '_sync_stream'})),
    (
        'agent',
        frozenset(
            {
                'agent',
                'result',
                'durable_exec',
                'stored_runs',
                'ui',
                '',
                '_agent_graph',
                'run',
                'direct',
                'conversation_store',
            }
        ),
    ),
)
GRAPH_FLOORS: tuple[tuple[str, frozenset[str]], ...] = (
    (
        'vocabulary',
        frozenset(
            {
                '_dataclass_code',
                '_status',
                '_copy',
                '_diagram_style',
                '_edges',
                '_instrument',
                'exceptions',
                'nodes',
                'events',
            }
        ),
    ),
    ('engine', frozenset({'persistence', 'fork', '_runs', '_step_runner', '_stream', 'mermaid', 'graph', 'builder'})),
    ('scale-out', frozenset({'dbos'})),
    ('front', frozenset({'cli', 'web', ''})),
)

# The rooms whose words the others use: they never import an engine, the run or the loop.
AGENT_VOCABULARY = AGENT_FLOORS[0][1]


@dataclass(frozen=True)
class Import:
    """One import statement's target.

    Attributes:
        target: the dotted name of the module imported (or, for a name imported from a module that is
            not itself a submodule, that module's name followed by the name).
        module: the module of `target` that is known to be part of the package, or None when the target
            lies outside it.
        line: the line of the import statement.
    """

    target: str
    module: str | None
    line: int


def package_modules(src: Path, package: str) -> dict[str, Path]:
    """Every module of a package directory, by dotted name (a subpackage by the name of its `__init__`)."""
    modules = {}
    for path in sorted(src.rglob('*.py')):
        parts = [package, *path.relative_to(src).with_suffix('').parts]
        if parts[-1] == '__init__':
            parts.pop()
        modules['.'.join(parts)] = path
    return modules


def _known(name: str, modules: Iterable[str]) -> str | None:
    """The longest prefix of a dotted name that is one of `modules`."""
    known = set(modules)
    parts = name.split('.')
    for end in range(len(parts), 0, -1):
        prefix = '.'.join(parts[:end])
        if prefix in known:
            return prefix
    return None


def module_imports(module: str, path: Path, modules: Mapping[str, Path]) -> list[Import]:
    """Every import of one module, with relative imports resolved against its package."""
    tree = ast.parse(path.read_text(), str(path))
    package = module if path.name == '__init__.py' else module.rpartition('.')[0]
    imports = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imports += [Import(alias.name, _known(alias.name, modules), node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split('.')
                base_parts = base_parts[: len(base_parts) - (node.level - 1)]
                base = '.'.join([*base_parts, node.module] if node.module else base_parts)
            else:
                base = node.module or ''
            for alias in node.names:
                # `from p import name`: the submodule `p.name` when there is one, else the module `p`.
                target = f'{base}.{alias.name}'
                module_name = target if target in modules else _known(base, modules)
                imports.append(Import(target, module_name, node.lineno))
    return imports


def import_graph(src: Path, package: str) -> dict[str, dict[str, int]]:
    """The package's import graph: for each module, the modules of the package it imports (with a line)."""
    modules = package_modules(src, package)
    graph: dict[str, dict[str, int]] = {}
    for module, path in modules.items():
        edges = graph.setdefault(module, {})
        for imp in module_imports(module, path, modules):
            if imp.module is not None and imp.module != module:
                edges.setdefault(imp.module, imp.line)
    return graph


def _strongly_connected(graph: Mapping[str, Mapping[str, int]]) -> list[list[str]]:
    """The strongly connected components of a graph (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = len(index)
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(graph[succ]))))
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    components.append(sorted(component))
    return components


def _shortest_cycle(graph: Mapping[str, Mapping[str, int]], start: str, members: set[str]) -> list[str]:
    """The shortest path from `start` back to itself inside one strongly connected component."""
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for succ in sorted(graph[node]):
                if succ not in members:
                    continue
                if succ == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [*reversed(path), start]
                if succ not in previous:
                    previous[succ] = node
                    following.append(succ)
        frontier = following
    raise AssertionError(f'{start} is in no cycle')  # pragma: no cover - members come from a component


def import_cycles(graph: Mapping[str, Mapping[str, int]]) -> list[str]:
    """The import cycles, one per line with the line of each import: for each knot of modules that import
    each other, shortest cycles until every module of the knot is named in one."""
    cycles = []
    for component in _strongly_connected(graph):
        if len(component) < 2:
            continue
        members = set(component)
        named: set[str] = set()
        for start in component:
            if start in named:
                continue
            path = _shortest_cycle(graph, start, members)
            named.update(path)
            steps = ' -> '.join(f'{a} (line {graph[a][b]})' for a, b in itertools.pairwise(path))
            cycles.append(f'{steps} -> {path[-1]}')
    return cycles


def _write(root: Path, files: Mapping[str, str]) -> Path:
    for name, text in files.items():
        path = root / 'pkg' / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root / 'pkg'


def test_a_cycle_through_a_type_checking_import_is_a_cycle(tmp_path: Path) -> None:
    src = _write(
        tmp_path,
        {
            '__init__.py': '',
            'a.py': 'from .b import B\n',
            'b.py': 'from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import A\n',
        },
    )
    assert import_cycles(import_graph(src, 'pkg')) == ['pkg.a (line 1) -> pkg.b (line 3) -> pkg.a']


def test_a_cycle_through_an_import_inside_a_function_is_a_cycle(tmp_path: Path) -> None:
    src = _write(
        tmp_path,
        {
            '__init__.py': '',
            'a.py': 'import pkg.b\n',
            'b.py': 'def f():\n    from pkg.sub.c import C\n',
            'sub/__init__.py': '',
            'sub/c.py': 'from .. import a\n',
        },
    )
    assert import_cycles(import_graph(src, 'pkg')) == [
        'pkg.a (line 1) -> pkg.b (line 2) -> pkg.sub.c (line 1) -> pkg.a'
    ]


def test_from_package_import_submodule_is_an_edge_to_the_submodule(tmp_path: Path) -> None:
    src = _write(
        tmp_path,
        {
            '__init__.py': 'from .a import A\n',
            'a.py': 'A = 1\n',
            'b.py': 'from . import c\n',
            'c.py': '\n\nfrom . import b, a\n',
            'd.py': 'from . import A\n',
        },
    )
    graph = import_graph(src, 'pkg')
    assert graph == {
        'pkg': {'pkg.a': 1},
        'pkg.a': {},
        'pkg.b': {'pkg.c': 1},
        'pkg.c': {'pkg.b': 3, 'pkg.a': 3},
        'pkg.d': {'pkg': 1},
    }
    assert import_cycles(graph) == ['pkg.b (line 1) -> pkg.c (line 3) -> pkg.b']


def test_a_cycle_names_every_module_of_its_knot(tmp_path: Path) -> None:
    src = _write(
        tmp_path,
        {
            '__init__.py': '',
            'a.py': 'from . import b\nfrom . import c\n',
            'b.py': 'from . import a\n',
            'c.py': 'from .b import x\n',
        },
    )
    assert import_cycles(import_graph(src, 'pkg')) == [
        'pkg.a (line 1) -> pkg.b (line 1) -> pkg.a',
        'pkg.c (line 1) -> pkg.b (line 1) -> pkg.a (line 2) -> pkg.c',
    ]


def test_imports_that_point_one_way_are_no_cycle(tmp_path: Path) -> None:
    src = _write(
        tmp_path,
        {
            '__init__.py': 'from .top import T\nfrom . import low\n',
            'low.py': 'import json\nfrom typing import TYPE_CHECKING\n',
            'mid.py': 'from .low import L\nfrom . import low as low_module\n',
            'top.py': 'import pkg.mid\nfrom pkg import low\n\ndef f():\n    from .mid import M\n',
        },
    )
    graph = import_graph(src, 'pkg')
    assert graph == {
        'pkg': {'pkg.top': 1, 'pkg.low': 2},
        'pkg.low': {},
        'pkg.mid': {'pkg.low': 1},
        'pkg.top': {'pkg.mid': 1, 'pkg.low': 2},
    }
    assert import_cycles(graph) == []


def _imports_of(src: Path, package: str) -> list[tuple[str, Import]]:
    modules = package_modules(src, package)
    return [(module, imp) for module, path in modules.items() for imp in module_imports(module, path, modules)]


def _private(dotted: str, below: str) -> bool:
    return any(part.startswith('_') for part in dotted.removeprefix(below).split('.'))


def test_edgewise_graph_has_no_import_cycle() -> None:
    assert import_cycles(import_graph(GRAPH_SRC, 'edgewise.graph')) == []


def test_edgewise_agent_has_no_import_cycle() -> None:
    assert import_cycles(import_graph(AGENT_SRC, 'edgewise.agent')) == []


def test_edgewise_graph_never_imports_edgewise_agent() -> None:
    upward = [
        f'{module} (line {imp.line}) imports {imp.target}'
        for module, imp in _imports_of(GRAPH_SRC, 'edgewise.graph')
        if imp.target == 'edgewise.agent' or imp.target.startswith('edgewise.agent.')
    ]
    assert upward == []


def test_edgewise_agent_imports_only_public_modules_of_edgewise_graph() -> None:
    graph_modules = package_modules(GRAPH_SRC, 'edgewise.graph')
    private = []
    for module, imp in _imports_of(AGENT_SRC, 'edgewise.agent'):
        into_graph = imp.target == 'edgewise.graph' or imp.target.startswith('edgewise.graph.')
        # The module it reaches, and the name taken from it: a private name is no public API either.
        if into_graph and (_private(imp.target, 'edgewise.graph') or _known(imp.target, graph_modules) is None):
            private.append(f'{module} (line {imp.line}) imports {imp.target}')
    assert private == []


def test_the_layering_checks_see_imports_across_the_packages(tmp_path: Path) -> None:
    src = _write(tmp_path, {'__init__.py': '', 'a.py': 'from edgewise.graph.persistence import _sql, file\n'})
    assert [(m, imp.target, imp.module) for m, imp in _imports_of(src, 'pkg')] == [
        ('pkg.a', 'edgewise.graph.persistence._sql', None),
        ('pkg.a', 'edgewise.graph.persistence.file', None),
    ]
    assert _private('edgewise.graph.persistence._sql', 'edgewise.graph')
    assert not _private('edgewise.graph.persistence.file', 'edgewise.graph')


def room_of(module: str, package: str) -> str:
    """The room of a module: its folder under the package root, or the root module itself (`''`: the root's
    `__init__`)."""
    return module.removeprefix(package).lstrip('.').split('.')[0]


def room_graph(graph: Mapping[str, Mapping[str, int]], package: str) -> dict[str, dict[str, str]]:
    """The rooms' import graph: for each room, the rooms it imports, each with one import that makes the edge."""
    rooms: dict[str, dict[str, str]] = {}
    for module, edges in graph.items():
        room = rooms.setdefault(room_of(module, package), {})
        for target, line in sorted(edges.items()):
            other = room_of(target, package)
            if other != room_of(module, package):
                room.setdefault(other, f'{module} (line {line}) imports {target}')
    return rooms


def room_cycles(rooms: Mapping[str, Mapping[str, str]]) -> list[str]:
    """The loops between rooms, each with the import behind every step."""
    graph = {room: dict.fromkeys(edges, 0) for room, edges in rooms.items()}
    for edges in rooms.values():
        for other in edges:
            graph.setdefault(other, {})
    cycles = []
    for component in _strongly_connected(graph):
        if len(component) > 1:
            path = _shortest_cycle(graph, component[0], set(component))
            cycles.append('; '.join(rooms[a][b] for a, b in itertools.pairwise(path)))
    return cycles


def floor_violations(
    rooms: Mapping[str, Mapping[str, str]], floors: tuple[tuple[str, frozenset[str]], ...]
) -> list[str]:
    """Every room missing from the floors, and every import from a room to one on a higher floor."""
    level = {room: i for i, (_, members) in enumerate(floors) for room in members}
    problems = [
        f'room {room!r} is on no floor: add it to the floors (and docs/architecture.md)'
        for room in sorted(rooms)
        if room not in level
    ]
    problems += [f'room {room!r} is on no floor but listed: remove it' for room in sorted(level) if room not in rooms]
    for room, edges in sorted(rooms.items()):
        for other, why in sorted(edges.items()):
            if room in level and other in level and level[other] > level[room]:
                problems.append(
                    f'{floors[level[room]][0]} room {room!r} imports {floors[level[other]][0]} room {other!r}: {why}'
                )
    return problems


def test_rooms_in_a_loop_are_named_with_the_imports_that_close_it(tmp_path: Path) -> None:
    src = _write(
        tmp_path,
        {
            '__init__.py': '',
            'top.py': 'from ._low import a\n',
            '_low/__init__.py': '',
            '_low/a.py': 'from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .._mid import b\n',
            '_mid/__init__.py': '',
            '_mid/b.py': 'def f():\n    from .._low import c\n',
            '_low/c.py': '',
        },
    )
    rooms = room_graph(import_graph(src, 'pkg'), 'pkg')
    assert import_cycles(import_graph(src, 'pkg')) == []
    assert room_cycles(rooms) == ['pkg._low.a (line 3) imports pkg._mid.b; pkg._mid.b (line 2) imports pkg._low.c']
    floors = (('low', frozenset({'_low', '_mid'})), ('high', frozenset({'top', ''})), ('gone', frozenset({'old'})))
    assert floor_violations(rooms, floors) == ["room 'old' is on no floor but listed: remove it"]
    assert floor_violations(rooms, (('low', frozenset({'_low', 'top'})), ('high', frozenset({'_mid'})))) == [
        "room '' is on no floor: add it to the floors (and docs/architecture.md)",
        "low room '_low' imports high room '_mid': pkg._low.a (line 3) imports pkg._mid.b",
    ]


def test_edgewise_agent_has_no_loop_between_rooms() -> None:
    assert room_cycles(room_graph(import_graph(AGENT_SRC, 'edgewise.agent'), 'edgewise.agent')) == []


def test_edgewise_graph_has_no_loop_between_rooms() -> None:
    assert room_cycles(room_graph(import_graph(GRAPH_SRC, 'edgewise.graph'), 'edgewise.graph')) == []


def test_every_room_of_edgewise_agent_imports_only_its_floor_or_below() -> None:
    rooms = room_graph(import_graph(AGENT_SRC, 'edgewise.agent'), 'edgewise.agent')
    assert floor_violations(rooms, AGENT_FLOORS) == []


def test_every_room_of_edgewise_graph_imports_only_its_floor_or_below() -> None:
    rooms = room_graph(import_graph(GRAPH_SRC, 'edgewise.graph'), 'edgewise.graph')
    assert floor_violations(rooms, GRAPH_FLOORS) == []


def test_the_agent_vocabulary_imports_no_engine() -> None:
    """Messages, tool and output types, settings, usage and errors: the words every other room uses. They import
    only each other (not models, toolsets, the run or the loop), so any room can use them."""
    rooms = room_graph(import_graph(AGENT_SRC, 'edgewise.agent'), 'edgewise.agent')
    upward = [why for room in AGENT_VOCABULARY for other, why in rooms[room].items() if other not in AGENT_VOCABULARY]
    assert upward == []


_DOTTED = re.compile(r'`(edgewise\.(?:graph|agent)(?:\.[A-Za-z_]\w*)*)`')


def _defined_names(body: list[ast.stmt]) -> dict[str, ast.stmt]:
    """The names a module or class body defines (classes, functions, assignments, imports), with their node."""
    names: dict[str, ast.stmt] = {}
    for node in body:
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            names[node.name] = node
        elif isinstance(node, ast.Assign):
            names.update((target.id, node) for target in node.targets if isinstance(target, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = node
        elif isinstance(node, ast.ImportFrom | ast.Import):
            names.update(((alias.asname or alias.name).split('.')[0], node) for alias in node.names)
        elif isinstance(node, ast.If):  # `if TYPE_CHECKING:` imports
            names.update(_defined_names(node.body))
    return names


def unknown_names(text: str, modules: Mapping[str, Path]) -> list[str]:
    """The dotted names in backticks (`edgewise.agent.x.y`) of a text that name no module of `modules`, nor a
    name a module defines (a class, function, assignment or import), nor a name defined in such a class."""
    unknown = []
    for name in sorted(set(_DOTTED.findall(text))):
        module = _known(name, modules)
        rest = name.removeprefix(module or '').lstrip('.').split('.') if module else []
        if module is None:
            unknown.append(name)
            continue
        scope = ast.parse(modules[module].read_text()).body
        for part in rest[:2] if rest != [''] else []:
            found = _defined_names(scope).get(part)
            if found is None:
                unknown.append(name)
                break
            scope = found.body if isinstance(found, ast.ClassDef) else []
    return unknown


def test_the_name_check_finds_modules_names_and_class_members(tmp_path: Path) -> None:
    src = _write(
        tmp_path,
        {
            '__init__.py': 'from .a import A as A\n',
            'a.py': 'class A:\n    def run(self): ...\nX: int = 1\n',
        },
    )
    modules = {name.replace('pkg', 'edgewise.agent', 1): path for name, path in package_modules(src, 'pkg').items()}
    text = '`edgewise.agent.a`, `edgewise.agent.a.A.run`, `edgewise.agent.A`, `edgewise.agent.a.X`, `edgewise.agent.b`'
    text += ', `edgewise.agent.a.A.walk`, `edgewise.agent.a.B`'
    assert unknown_names(text, modules) == ['edgewise.agent.a.A.walk', 'edgewise.agent.a.B', 'edgewise.agent.b']


def test_the_architecture_page_names_only_what_exists() -> None:
    modules = {**package_modules(AGENT_SRC, 'edgewise.agent'), **package_modules(GRAPH_SRC, 'edgewise.graph')}
    assert unknown_names(ARCHITECTURE.read_text(), modules) == []


def test_the_architecture_page_names_every_folder() -> None:
    text = ARCHITECTURE.read_text()
    folders = [
        f'edgewise.{package}.{path.parent.name}'
        for package, src in (('agent', AGENT_SRC), ('graph', GRAPH_SRC))
        for path in sorted(src.glob('*/__init__.py'))
    ]
    assert [folder for folder in folders if f'`{folder}`' not in text] == []


def test_the_agent_root_holds_public_modules_a_few_utilities_and_folders() -> None:
    """A newcomer opening the package sees its concerns: a private module that is no utility of every floor (or a
    path pydantic-ai gives, kept for ported code: `_run_context`, `_enqueue`, `_spec`, `_function_schema`) goes in
    the folder of its concern.

    pydantic-ai 2.x's tests and users import from more of its private paths; these hold real code of their own
    topic (`_warnings`: the warning classes; `_cost`: pricing with genai-prices; `_utils`: `Some`, and where sync
    functions run, from `_threads`; `_version`: the package's `__version__`, read from its metadata on first use) or
    are thin re-exports of code
    living in its folder (`_agent_graph`: the nodes of `_loop` and the state of `_run`; the public `run`: the
    run's classes), hence the higher count."""
    private = sorted(path.stem for path in AGENT_SRC.glob('_*.py') if path.name != '__init__.py')
    assert private == [
        '_agent_graph',
        '_cost',
        '_enqueue',
        '_function_schema',
        '_instrument',
        '_parts_manager',
        '_run_context',
        '_spec',
        '_sync_stream',
        '_threads',
        '_utils',
        '_version',
        '_warnings',
    ]
    # 28: `_parts_manager`, pydantic-ai's private path of the streamed parts manager (a re-export of
    # `_message_flow.streamed_parts`), which ported models and tests import; `_sync_stream`, pydantic-ai 2.x's
    # path of `SyncStreamBridge` (a re-export of `_streaming.sync_bridge`), which its streaming tests import;
    # and the compatibility paths above. pydantic-ai's public root modules add to it: `direct`, `function_signature`,
    # and 2.68's `external_events`, `conversation`, `conversation_store`, `framing`, `prices` and `template`;
    # and `_version`.
    assert len(list(AGENT_SRC.glob('*.py'))) <= 36
