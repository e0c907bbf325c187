"""Loading the graph a `MODULE:GRAPH` argument names."""

from __future__ import annotations as _annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

from ..builder import Graph as BuilderGraph
from ..graph import Graph
from ._common import CommandError

__all__ = ('load_graph', 'load_object')


def load_graph(target: str, *, agent: bool = False) -> Any:
    """Import `MODULE:GRAPH` (a dotted module, or a `.py` file) and return its graph, named after its variable.

    `MODULE:AGENT` names an agent (any object with a `graph` that is a `Graph` and an `iter_from_persistence`
    method, as `edgewise.agent.Agent` has): with `agent=True` the agent is returned (to resume its runs), else
    its graph. A builder graph of `edgewise.graph.builder` is returned as it is.

    Raises:
        CommandError: the argument is malformed, the module does not import, or the object is not a `Graph`.
    """
    obj = load_object(target, 'MODULE:GRAPH')
    attribute = target.rpartition(':')[2]
    if isinstance(obj, BuilderGraph):
        # A builder graph of `edgewise.graph.builder`: drawn (`mermaid`) and its runs resumed as classic ones are.
        if obj.name is None:
            obj.name = attribute.rpartition('.')[2]
        return obj
    if not isinstance(obj, Graph):
        graph = getattr(obj, 'graph', None)
        if isinstance(graph, Graph) and callable(getattr(obj, 'iter_from_persistence', None)):
            return obj if agent else graph
        kind = type(obj).__name__
        article = 'an' if kind[:1].lower() in 'aeiou' else 'a'
        raise CommandError(f'{target} is {article} {kind}, not an edgewise `Graph`.')
    if obj.name is None:
        obj.name = attribute.rpartition('.')[2]
    return obj


def load_object(target: str, form: str) -> Any:
    """Import `MODULE:NAME` (a dotted module, or a `.py` file; `NAME` may be dotted) and return the object.

    Raises:
        CommandError: the argument is not of the `form` shown (`MODULE:GRAPH`, ...), the module does not import, or
            it has no such attribute.
    """
    module_name, sep, attribute = target.rpartition(':')
    if not sep or not module_name or not attribute:
        example = 'e.g. `examples.graph.review_workflow:review_graph` or `flows.py:graph`'
        raise CommandError(f'{target!r} is not {form}, {example}.')
    obj: Any = _import(module_name)
    for part in attribute.split('.'):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise CommandError(f'Module {module_name!r} has no attribute {attribute!r}.') from None
    return obj


def _import(module_name: str) -> Any:
    # Like `python -m`, modules of the current directory are importable.
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        if module_name.endswith('.py'):
            return _import_file(Path(module_name))
        return importlib.import_module(module_name)
    except CommandError:
        raise
    except ModuleNotFoundError as e:
        if e.name is not None and (module_name == e.name or module_name.startswith(f'{e.name}.')):
            raise CommandError(
                f'Cannot import {module_name!r}: no module named {e.name!r} (run from the directory that holds '
                'it, or add that directory to PYTHONPATH).'
            ) from None
        raise CommandError(f'Importing {module_name!r} failed: {e}.') from None
    except Exception as e:
        raise CommandError(f'Importing {module_name!r} failed: {type(e).__name__}: {e}') from None


def _import_file(path: Path) -> Any:
    if not path.is_file():
        raise CommandError(f'Cannot import {str(path)!r}: no such file.')
    name = path.stem
    loaded = sys.modules.get(name)
    if loaded is not None and Path(getattr(loaded, '__file__', None) or '').resolve() == path.resolve():
        return loaded  # imported already (MODULE:AGENT and --deps MODULE:FACTORY of one file): the same classes
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # Registered before it runs, as an import would: dataclasses and type hints look the module up by name.
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module
