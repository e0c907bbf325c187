"""Typed tool parts (pydantic-ai 2.68): `ToolCallPart` and `ToolReturnPart` generic over their arguments and content,
subclasses registered for a `ToolKind` with the `kind` class argument, the tool's parts coming back as those (in a
run, when a message is built, when a history loads), the errors of misuse, and plain parts left exactly as they were.
"""

from __future__ import annotations

import warnings
from typing import Any, ClassVar

import pytest
from typing_extensions import TypedDict

from edgewise.agent import Agent, Tool, ToolKind, UserError
from edgewise.agent.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    NativeToolCallPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.test import TestModel
from edgewise.agent.tools import ToolDefinition
from edgewise.agent.toolsets import FunctionToolset

pytestmark = pytest.mark.anyio


class LookupArgs(TypedDict):
    sku: str


class LookupResult(TypedDict):
    in_stock: bool


lookup = ToolKind('stock', 'lookup', args=LookupArgs, content=LookupResult)


class LookupCallPart(ToolCallPart[LookupArgs], kind=lookup):
    pass


class LookupReturnPart(ToolReturnPart[LookupResult], kind=lookup):
    pass


def _agent() -> Agent[None, str]:
    agent = Agent(TestModel())

    @agent.tool_plain(tool_kind=lookup)
    def check_stock(args: LookupArgs) -> LookupResult:
        return {'in_stock': args['sku'].startswith('A')}

    return agent


async def test_the_parts_of_a_tool_of_the_kind_come_typed_and_round_trip() -> None:
    result = await _agent().run('hi')
    call, returned = result.all_messages()[1].parts[0], result.all_messages()[2].parts[0]
    assert type(call) is LookupCallPart
    assert type(returned) is LookupReturnPart
    assert call.typed_args == {'sku': 'a'}
    assert returned.typed_content == {'in_stock': False}
    assert (call.tool_name, call.tool_kind, returned.tool_kind) == (
        'check_stock',
        'stock.lookup',
        'stock.lookup',
    )
    assert repr(call) == (
        "LookupCallPart(tool_name='check_stock', args={'sku': 'a'}, tool_call_id='pyd_ai_tool_call_id__check_stock', "
        "tool_kind='stock.lookup')"
    )

    data = result.all_messages_json()
    assert b'"part_kind":"tool-call"' in data
    assert b'"tool_kind":"stock.lookup"' in data
    loaded = ModelMessagesTypeAdapter.validate_json(data)
    assert loaded == result.all_messages()
    assert type(loaded[1].parts[0]) is LookupCallPart
    assert type(loaded[2].parts[0]) is LookupReturnPart
    assert ModelMessagesTypeAdapter.dump_json(loaded) == data  # serialized as plain parts are


def test_a_message_built_with_a_plain_part_of_the_kind_holds_the_typed_part() -> None:
    parts: list[Any] = [ToolCallPart('renamed_lookup', '{"sku": "A1"}', 'c1', tool_kind='stock.lookup')]
    response = ModelResponse(parts)
    assert type(response.parts[0]) is LookupCallPart
    assert parts[0] is response.parts[0]  # the list given is the message's
    assert response.parts[0].args == '{"sku": "A1"}'  # kept as the model sent it
    assert response.parts[0].typed_args == {'sku': 'A1'}

    request = ModelRequest((ToolReturnPart('renamed_lookup', '{"in_stock": true}', 'c1', tool_kind='stock.lookup'),))
    typed = request.parts[0]
    assert type(typed) is LookupReturnPart
    assert typed.content == '{"in_stock": true}'  # the content as sent; `typed_content` parses it
    assert typed.typed_content == {'in_stock': True}


def test_parts_that_do_not_fit_the_kind_stay_plain_and_keep_it() -> None:
    wrong_args = ModelResponse([ToolCallPart('lookup', {'sku': 3}, 'c1', tool_kind='stock.lookup')]).parts[0]
    assert type(wrong_args) is ToolCallPart
    assert wrong_args.tool_kind == 'stock.lookup'

    streaming = ToolCallPart.narrow_type(ToolCallPart('lookup', '{"sku": "A', 'c2'), tool_kind='stock.lookup')
    assert type(streaming) is LookupCallPart  # JSON text is left to `typed_args`, `None` until it fits
    assert streaming.typed_args is None

    failed = ToolReturnPart('lookup', 'boom', 'c1', tool_kind='stock.lookup', outcome='failed')
    assert type(ModelRequest([failed]).parts[0]) is ToolReturnPart
    assert failed.typed_content is None
    other = ToolReturnPart.narrow_type(ToolReturnPart('lookup', {'count': 1}, 'c1'), tool_kind='stock.lookup')
    assert type(other) is ToolReturnPart
    assert other.tool_kind == 'stock.lookup'


def test_plain_parts_keep_their_repr_equality_and_json() -> None:
    call = ToolCallPart('f', {'a': 1}, 'c1')
    assert repr(call) == "ToolCallPart(tool_name='f', args={'a': 1}, tool_call_id='c1')"
    assert call == ToolCallPart('f', {'a': 1}, 'c1')
    assert call.typed_args == {'a': 1}
    assert ToolCallPart('f', '[1]', 'c1').typed_args is None  # not a JSON object
    returned = ToolReturnPart('f', 'x', 'c1', timestamp=ModelResponse([]).timestamp)
    assert returned.typed_content == 'x'
    generic = ToolCallPart[LookupArgs]('f', {'sku': 'A'}, 'c1')
    assert type(generic) is ToolCallPart  # parameterizing the base makes no typed part
    assert generic == ToolCallPart('f', {'sku': 'A'}, 'c1')
    messages: list[ModelMessage] = [ModelResponse([call, TextPart('t')])]
    assert ModelMessagesTypeAdapter.validate_json(ModelMessagesTypeAdapter.dump_json(messages)) == messages
    # A typed part is not equal to the plain part it came from.
    assert LookupCallPart('f', {'sku': 'A'}, 'c1') != ToolCallPart('f', {'sku': 'A'}, 'c1', tool_kind='stock.lookup')


def test_misused_typed_parts_are_refused_with_pydantic_ais_messages() -> None:
    kind = ToolKind('inventory_checks', 'misuse', args=LookupArgs, content=LookupResult)
    with pytest.raises(
        UserError,
        match=r'Typed tool part .*Mismatched parameterizes ToolCallPart with LookupResult, but its kind '
        r"'inventory_checks.misuse' declares `args=LookupArgs`\.",
    ):

        class Mismatched(ToolCallPart[LookupResult], kind=kind):
            pass

    with pytest.raises(UserError, match=r'Typed tool part .*Extended adds the field\(s\) note to ToolReturnPart\.'):

        class Extended(ToolReturnPart[LookupResult], kind=kind):
            note: str = ''

    class First(ToolCallPart[LookupArgs], kind=kind):
        pass

    with pytest.raises(
        UserError, match=r"Tool kind 'inventory_checks.misuse' already has a typed ToolCallPart subclass: "
    ):

        class Second(ToolCallPart[LookupArgs], kind=kind):
            pass

    with pytest.raises(UserError, match='must be a `ToolKind`, got str'):

        class ByName(ToolCallPart, kind='inventory_checks.misuse'):
            pass

    with pytest.warns(DeprecationWarning, match='sets `tool_kind` in its class body, which no longer makes it a typed'):

        class Pinned(ToolCallPart):
            tool_kind = 'inventory_checks.misuse'

    class Intermediate(ToolCallPart[LookupArgs]):  # no kind: an ordinary subclass, registered for nothing
        pass

    assert Intermediate._kind is None
    assert First.__name__ == 'First'
    assert not hasattr(Pinned, '_kind') or Pinned._kind is None


def test_a_kind_without_shapes_takes_bare_parts_and_a_redefined_class_replaces_itself() -> None:
    bare = ToolKind('inventory_checks', 'bare')

    class BareCall(ToolCallPart, kind=bare):
        @property
        def sku(self) -> str | None:
            return (self.typed_args or {}).get('sku')

    part = ModelResponse([ToolCallPart('x', {'sku': 'S'}, 'c1', tool_kind='inventory_checks.bare')]).parts[0]
    assert isinstance(part, BareCall)
    assert part.sku == 'S'

    with warnings.catch_warnings():
        warnings.simplefilter('error')

        class BareCall(ToolCallPart, kind=bare):  # type: ignore[no-redef]  # the same class, defined again
            pass

    assert type(ToolCallPart.narrow_type(ToolCallPart('x', {}, 'c'), tool_kind='inventory_checks.bare')) is BareCall


async def test_a_tool_of_an_undefined_kind_is_refused_when_a_run_collects_its_tools() -> None:
    toolset = FunctionToolset[None]()

    @toolset.tool_plain(tool_kind='nowhere.defined')
    def mystery() -> str:
        return 'x'  # pragma: no cover - never called

    with pytest.raises(
        UserError,
        match=r"Tool 'mystery' declares `tool_kind='nowhere.defined'`, which is not a defined `ToolKind`. Import the",
    ):
        await Agent(TestModel(), toolsets=[toolset]).run('hi')


async def test_tool_kind_is_taken_by_tool_and_shown_on_its_definition() -> None:
    def check(sku: str) -> LookupResult:
        return {'in_stock': True}

    tool = Tool(check, tool_kind=lookup)
    assert tool.tool_kind == 'stock.lookup'
    assert tool.tool_def.tool_kind == 'stock.lookup'
    seen: list[ToolDefinition] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.extend(info.function_tools)
        if len(messages) == 1:
            return ModelResponse([ToolCallPart('check', {'sku': 'B'}, 'c1')])
        return ModelResponse([TextPart('ok')])

    result = await Agent(FunctionModel(model), tools=[tool]).run('hi')
    assert [type(p).__name__ for m in result.all_messages() for p in m.parts] == [
        'UserPromptPart',
        'LookupCallPart',
        'LookupReturnPart',
        'TextPart',
    ]
    assert seen[0].tool_kind == 'stock.lookup'


def test_typed_content_of_kinds_with_and_without_a_content_shape() -> None:
    args_only = ToolKind('inventory_checks', 'args_only', args=LookupArgs)

    class ArgsOnlyReturn(ToolReturnPart, kind=args_only):
        shown: ClassVar[str] = 'a class variable is not a field'

    returned = ModelRequest([ToolReturnPart('x', 'anything', 'c1', tool_kind='inventory_checks.args_only')]).parts[0]
    assert isinstance(returned, ArgsOnlyReturn)
    assert returned.typed_content == 'anything'
    assert LookupReturnPart('x', 'not json', 'c1').typed_content is None
    assert LookupReturnPart('x', '{"in_stock": "maybe"}', 'c1').typed_content is None
    untouched = (TextPart('t'),)
    assert ModelResponse(untouched).parts is untouched
    native = NativeToolCallPart('x', {'sku': 'A'}, 'n1', tool_kind='stock.lookup')
    search = ToolCallPart('search_tools', {'queries': ['a']}, 's1', tool_kind='tool-search')
    response = ModelResponse([native, search])
    assert response.parts[0] is native  # no typed native parts of users' kinds
    assert response.parts[1] is search  # the agent's own kinds: typed when a history loads, not when a message is built


class _Describing:
    def describe(self) -> str:
        return 'described'


def test_a_typed_part_may_mix_in_plain_classes() -> None:
    mixed = ToolKind('inventory_checks', 'mixed', args=LookupArgs)

    class MixedCall(_Describing, ToolCallPart[LookupArgs], kind=mixed):
        pass

    part = ToolCallPart.narrow_type(ToolCallPart('x', {'sku': 'A'}, 'c1'), tool_kind='inventory_checks.mixed')
    assert isinstance(part, MixedCall)
    assert part.describe() == 'described'


def test_class_variables_annotated_at_runtime_are_not_fields() -> None:
    raw_kind = ToolKind('inventory_checks', 'raw')
    namespace: dict[str, Any] = {'__annotations__': {'limit': ClassVar[int]}, 'limit': 3, '__module__': __name__}
    raw = type('RawCall', (ToolCallPart,), namespace, kind=raw_kind)
    assert raw('x', None, 'c1').tool_kind == 'inventory_checks.raw'
    assert raw.__dict__['limit'] == 3
