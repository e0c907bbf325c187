"""Which fork a join waits for, found from the dominators of the graph."""

from __future__ import annotations

import pytest

from edgewise.graph.builder.exceptions import GraphBuildingError
from edgewise.graph.builder.parent_forks import ParentForkFinder


def finder(edges: dict[str, list[str]], forks: set[str]) -> ParentForkFinder[str]:
    nodes = set(edges) | {d for ds in edges.values() for d in ds}
    return ParentForkFinder(nodes=nodes, start_ids={'start'}, fork_ids=forks, edges=edges)


NESTED = {'start': ['outer'], 'outer': ['inner'], 'inner': ['a', 'b'], 'a': ['J'], 'b': ['J'], 'J': ['end']}


def test_the_farthest_dominating_fork_is_taken_unless_the_closest_is_asked_for() -> None:
    f = finder(NESTED, {'outer', 'inner'})
    farthest = f.find_parent_fork('J')
    assert farthest is not None
    assert farthest.fork_id == 'outer'
    assert farthest.intermediate_nodes == {'inner', 'a', 'b'}
    closest = f.find_parent_fork('J', prefer_closest=True)
    assert closest is not None
    assert (closest.fork_id, closest.intermediate_nodes) == ('inner', {'a', 'b'})


def test_a_fork_that_a_cycle_through_the_join_avoids_does_not_qualify() -> None:
    edges = {'start': ['F1'], 'F1': ['F2'], 'F2': ['A'], 'A': ['J'], 'J': ['F2', 'end']}
    parent = finder(edges, {'F1', 'F2'}).find_parent_fork('J')
    assert parent is not None
    assert parent.fork_id == 'F2'
    assert finder({'start': ['J'], 'J': ['J', 'end']}, {'start'}).find_parent_fork('J') is None


def test_a_chosen_parent_fork_is_checked() -> None:
    edges = {'start': ['F'], 'F': ['J'], 'J': ['A', 'B'], 'A': ['J'], 'B': ['end']}
    f = finder(edges, {'F'})
    with pytest.raises(GraphBuildingError, match="a cycle in the graph passing through 'J' that does not include 'F'"):
        f.find_parent_fork('J', parent_fork_id='F')
    chosen = finder(NESTED, {'outer', 'inner'}).find_parent_fork('J', parent_fork_id='inner')
    assert chosen is not None
    assert chosen.fork_id == 'inner'


def test_an_unreachable_join_has_no_parent_fork() -> None:
    edges = {'start': ['end'], 'F': ['A', 'B'], 'A': ['J'], 'B': ['J']}
    assert finder(edges, {'F'}).find_parent_fork('J') is None
    assert finder({'start': ['A'], 'A': ['J']}, set()).find_parent_fork('J') is None
    diamond = {'start': ['A', 'B'], 'A': ['C'], 'B': ['C'], 'F': ['J']}
    assert finder(diamond, {'F'}).find_parent_fork('J') is None
