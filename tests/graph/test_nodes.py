"""Nodes, `End`, `Edge`, the run context and snapshot ids."""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import FrozenInstanceError, dataclass, field

import pytest

from edgewise.graph import BaseNode, Edge, End, GraphRunContext
from edgewise.graph.nodes import generate_snapshot_id


@dataclass
class Plain(BaseNode[None, None, int]):
    value: int = 0

    async def run(self, ctx: GraphRunContext) -> End[int]:
        return End(self.value)


class Renamed(BaseNode[None, None, None]):
    @classmethod
    def get_node_id(cls) -> str:
        return 'custom-id'

    async def run(self, ctx: GraphRunContext) -> End[None]:
        return End(None)


@dataclass
class Noted(BaseNode[None, None, None]):
    """Checks the order.

    Indented second paragraph.
    """

    docstring_notes = True

    async def run(self, ctx: GraphRunContext) -> End[None]:
        return End(None)


@dataclass
class NotedWithoutDocstring(BaseNode[None, None, None]):
    docstring_notes = True

    async def run(self, ctx: GraphRunContext) -> End[None]:
        return End(None)


class PlainNotedWithoutDocstring(BaseNode[None, None, None]):
    docstring_notes = True

    async def run(self, ctx: GraphRunContext) -> End[None]:
        return End(None)


class DocumentedButNotNoted(BaseNode[None, None, None]):
    """A docstring that is not a note."""

    async def run(self, ctx: GraphRunContext) -> End[None]:
        return End(None)


@dataclass
class WithList(BaseNode[None, None, None]):
    items: list[int] = field(default_factory=list)

    async def run(self, ctx: GraphRunContext) -> End[None]:
        return End(None)


def test_node_id_is_the_class_name() -> None:
    assert Plain.get_node_id() == 'Plain'
    assert Plain().get_node_id() == 'Plain'


def test_node_id_can_be_overridden() -> None:
    assert Renamed.get_node_id() == 'custom-id'


def test_note_is_the_cleaned_docstring_when_docstring_notes_is_set() -> None:
    assert Noted.get_note() == 'Checks the order.\n\nIndented second paragraph.'


def test_no_note_when_docstring_notes_is_off() -> None:
    assert DocumentedButNotNoted.get_note() is None


def test_generated_dataclass_signature_is_not_a_note() -> None:
    assert NotedWithoutDocstring.get_note() is None


def test_no_note_without_a_docstring() -> None:
    assert PlainNotedWithoutDocstring.get_note() is None


def test_a_node_without_run_cannot_be_instantiated() -> None:
    class NoRun(BaseNode[None, None, None]):
        pass

    with pytest.raises(TypeError, match='abstract method'):
        NoRun()  # type: ignore[abstract]


def test_end_holds_its_data() -> None:
    end = End({'answer': 42})
    assert end.data == {'answer': 42}
    assert end == End({'answer': 42})


def test_edge_is_a_frozen_label() -> None:
    edge = Edge(label='yes')
    assert edge.label == 'yes'
    with pytest.raises(FrozenInstanceError):
        edge.label = 'no'  # type: ignore[misc]


def test_run_context_is_keyword_only_state_and_deps() -> None:
    ctx = GraphRunContext(state=[1], deps='deps')
    assert (ctx.state, ctx.deps) == ([1], 'deps')
    with pytest.raises(TypeError):
        GraphRunContext([1], 'deps')  # type: ignore[call-arg]


def test_snapshot_id_is_node_id_and_32_hex_digits() -> None:
    assert re.fullmatch(r'Plain:[0-9a-f]{32}', generate_snapshot_id('Plain'))


def test_snapshot_ids_are_unique() -> None:
    ids = {generate_snapshot_id('A') for _ in range(10_000)}
    assert len(ids) == 10_000


def test_a_forked_child_draws_new_snapshot_ids() -> None:
    # In a fresh single-threaded interpreter: forking the test process itself is unsafe.
    code = (
        'import os\n'
        'from edgewise.graph.nodes import generate_snapshot_id\n'
        'read_end, write_end = os.pipe()\n'
        'pid = os.fork()\n'
        'if pid == 0:\n'
        '    os.write(write_end, generate_snapshot_id("A").encode())\n'
        '    os._exit(0)\n'
        'os.waitpid(pid, 0)\n'
        'child, parent = os.read(read_end, 100).decode(), generate_snapshot_id("A")\n'
        'print(child[:18] == parent[:18], child[:2] == parent[:2])\n'
    )
    done = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True)
    # The 16 hex digits after `A:` are the per-process random prefix.
    assert done.stdout == 'False True\n'


def test_node_snapshot_id_is_generated_once_and_kept(snapshot_ids: None) -> None:
    node = Plain()
    assert node.get_snapshot_id() == 'Plain:1'
    assert node.get_snapshot_id() == 'Plain:1'
    assert Plain().get_snapshot_id() == 'Plain:2'


def test_set_snapshot_id_binds_a_node_to_an_existing_snapshot() -> None:
    node = Plain()
    node.set_snapshot_id('Plain:abc')
    assert node.get_snapshot_id() == 'Plain:abc'


def test_snapshot_id_is_not_a_dataclass_field(snapshot_ids: None) -> None:
    node = Plain(3)
    node.get_snapshot_id()
    assert node == Plain(3)
    assert repr(node) == 'Plain(value=3)'


def test_end_snapshot_ids_start_with_end(snapshot_ids: None) -> None:
    end = End(1)
    assert end.get_snapshot_id() == 'end:1'
    end.set_snapshot_id('end:x')
    assert end.get_snapshot_id() == 'end:x'


def test_node_deep_copy_copies_fields_and_keeps_the_snapshot_id(snapshot_ids: None) -> None:
    node = WithList([1, 2])
    node.get_snapshot_id()
    copied = node.deep_copy()
    assert copied == node
    assert copied.items is not node.items
    assert copied.get_snapshot_id() == 'WithList:1'


def test_end_deep_copy_data_copies_data_and_keeps_the_snapshot_id(snapshot_ids: None) -> None:
    end = End([1, [2]])
    copied = end.deep_copy_data()
    assert copied == end
    assert copied.data is not end.data
    assert copied.data[1] is not end.data[1]
    assert copied.get_snapshot_id() == end.get_snapshot_id() == 'end:1'


def test_end_deep_copy_data_of_none_is_the_same_end() -> None:
    end = End(None)
    assert end.deep_copy_data() is end
