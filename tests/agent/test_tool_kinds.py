"""`ToolKind` (pydantic-ai 2.68): what a tool is whatever it is called, its id, and the process-wide registry that
`parse_tool_kind` checks ids against."""

from __future__ import annotations

import pytest
from typing_extensions import TypedDict

from edgewise.agent import UserError
from edgewise.agent.messages import ToolKind, ToolKindLike, ToolPartKind, parse_tool_kind


class _Args(TypedDict):
    sku: str


class _Result(TypedDict):
    count: int


def test_a_kind_has_a_namespaced_id_and_its_shapes() -> None:
    kind = ToolKind('edgewise_tests.kinds', 'count', args=_Args, content=_Result)
    assert (kind.namespace, kind.name, kind.id) == ('edgewise_tests.kinds', 'count', 'edgewise_tests.kinds.count')
    assert (kind.args, kind.content) == (_Args, _Result)
    assert repr(kind) == "ToolKind('edgewise_tests.kinds', 'count', args=_Args, content=_Result)"
    assert repr(ToolKind('edgewise_tests.kinds', 'bare')) == "ToolKind('edgewise_tests.kinds', 'bare')"


def test_a_defined_kind_is_known_to_parse_tool_kind() -> None:
    kind = ToolKind('edgewise_tests.kinds', 'parsed')
    assert parse_tool_kind(kind.id) == 'edgewise_tests.kinds.parsed'
    assert parse_tool_kind('edgewise_tests.kinds.never_defined') is None


def test_the_agent_s_own_kinds_have_no_namespace() -> None:
    assert parse_tool_kind('tool-search') == 'tool-search'
    assert parse_tool_kind('capability-load') == 'capability-load'


def test_defining_an_id_again_needs_the_same_shapes() -> None:
    first = ToolKind('edgewise_tests.kinds', 'twice', args=_Args)
    again = ToolKind('edgewise_tests.kinds', 'twice', args=_Args)
    assert again.id == first.id
    with pytest.raises(UserError, match=r"'edgewise_tests\.kinds\.twice' is already defined"):
        ToolKind('edgewise_tests.kinds', 'twice', args=_Result)


def test_a_class_defined_again_in_the_same_place_counts_as_the_same_shape() -> None:
    def make() -> type:
        class Shape(TypedDict):
            x: int

        return Shape

    ToolKind('edgewise_tests.kinds', 'redefined', args=make())
    ToolKind('edgewise_tests.kinds', 'redefined', args=make())


@pytest.mark.parametrize('namespace', ['', 'a..b', '.a', 'a.'])
def test_a_kind_needs_a_namespace_without_empty_segments(namespace: str) -> None:
    with pytest.raises(UserError, match='needs a namespace'):
        ToolKind(namespace, 'name')


def test_a_kind_needs_a_name() -> None:
    with pytest.raises(UserError, match='needs a non-empty name'):
        ToolKind('edgewise_tests.kinds', '')


def test_the_aliases_type_a_kind_as_given_and_as_stored() -> None:
    def stored(kind: ToolKindLike) -> ToolPartKind:
        return kind.id if isinstance(kind, ToolKind) else kind

    kind = ToolKind('edgewise_tests.kinds', 'aliased')
    assert stored(kind) == stored('edgewise_tests.kinds.aliased') == 'edgewise_tests.kinds.aliased'


def test_tools_tool_kind_is_a_deprecated_name_of_the_definition_kind_literal() -> None:
    from edgewise.agent import PydanticAIDeprecationWarning, tools

    with pytest.warns(PydanticAIDeprecationWarning, match='use `edgewise.agent.tools.ToolDefinitionKind` instead'):
        literal = tools.ToolKind
    assert literal is tools.ToolDefinitionKind
    assert tools.ToolDefinition(name='t').kind == 'function'
