"""Toolsets: function toolsets, combinations, wrappers, per-run and per-step toolsets, and agents using them."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import pytest

from edgewise.agent import (
    AbstractToolset,
    Agent,
    CombinedToolset,
    ExternalToolset,
    FilteredToolset,
    FunctionToolset,
    ModelRetry,
    PrefixedToolset,
    PreparedToolset,
    RenamedToolset,
    RunContext,
    Tool,
    ToolsetTool,
    UserError,
    WrapperToolset,
)
from edgewise.agent.messages import (
    InstructionPart,
    ModelMessage,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.test import TestModel
from edgewise.agent.tools import ToolDefinition
from edgewise.agent.toolsets._dynamic import DynamicToolset
from edgewise.agent.usage import RunUsage

pytestmark = pytest.mark.anyio


def ctx_of(deps: Any = None, retries: int = 1) -> RunContext[Any]:
    return RunContext(deps=deps, model=TestModel(), usage=RunUsage(), max_retries=retries)


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def shout(text: str) -> str:
    return text.upper()


def math_toolset() -> FunctionToolset[Any]:
    return FunctionToolset([add, shout], id='math')


def calling(*calls: tuple[str, dict[str, Any]]) -> tuple[FunctionModel, list[list[str]]]:
    """A model calling the tools once (all at once), then answering with the returns; records the tool names
    it was offered at each request."""
    seen: list[list[str]] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(sorted(t.name for t in info.function_tools))
        if len(messages) == 1 and calls:
            return ModelResponse([ToolCallPart(name, args, f'c{i}') for i, (name, args) in enumerate(calls)])
        returns = [p.content for p in messages[-1].parts if isinstance(p, ToolReturnPart)]
        return ModelResponse([TextPart(repr(returns))])

    return FunctionModel(answer), seen


async def test_a_function_toolset_lists_and_calls_its_tools() -> None:
    toolset = math_toolset()
    tools = await toolset.get_tools(ctx_of())

    assert list(tools) == ['add', 'shout']
    assert tools['add'].tool_def.description == 'Add two numbers.'
    assert tools['add'].max_retries == 1
    args = tools['add'].args_validator.validate_json('{"a": 1, "b": 2}')
    assert await toolset.call_tool('add', args, ctx_of(), tools['add']) == 3
    assert toolset.label == "FunctionToolset 'math'"


async def test_a_static_function_toolset_builds_its_listing_once() -> None:
    toolset = math_toolset()
    first = await toolset.get_tools(ctx_of())

    assert await toolset.get_tools(ctx_of()) is first
    assert await toolset.get_tools(ctx_of(retries=4)) is not first  # another default retry budget

    @toolset.tool_plain
    def third() -> int:
        return 3

    assert list(await toolset.get_tools(ctx_of())) == ['add', 'shout', 'third']


async def test_function_toolset_defaults_apply_to_added_functions() -> None:
    toolset: FunctionToolset[object] = FunctionToolset(max_retries=5, requires_approval=True, metadata={'team': 'a'},
                                                     sequential=True)  # fmt: skip

    @toolset.tool(metadata={'x': 1})
    def with_ctx(ctx: RunContext[object], n: int) -> int:
        return n

    own = Tool(shout, max_retries=2)
    toolset.add_tool(own)
    tools = await toolset.get_tools(ctx_of())

    assert tools['with_ctx'].tool_def.kind == 'unapproved'
    assert tools['with_ctx'].tool_def.sequential
    assert tools['with_ctx'].tool_def.metadata == {'team': 'a', 'x': 1}
    assert tools['with_ctx'].max_retries == 5
    assert tools['shout'].max_retries == 2
    with pytest.raises(UserError, match="Tool name conflicts with existing tool: 'shout'"):
        toolset.add_function(shout)


async def test_a_prepare_function_renaming_onto_another_tool_is_a_user_error() -> None:
    async def to_add(ctx: RunContext[object], tool_def: ToolDefinition) -> ToolDefinition:
        return dataclasses.replace(tool_def, name='add')

    toolset: FunctionToolset[object] = FunctionToolset([add])
    toolset.add_function(shout, prepare=to_add)

    with pytest.raises(UserError, match=r"Renaming tool 'shout' to 'add' conflicts with existing tool\."):
        await toolset.get_tools(ctx_of())


async def test_a_prepare_function_hiding_a_tool_rebuilds_the_listing_each_step() -> None:
    shown = [True, False]

    def maybe(ctx: RunContext[object], tool_def: ToolDefinition) -> ToolDefinition | None:
        return tool_def if shown.pop(0) else None

    toolset: FunctionToolset[object] = FunctionToolset([Tool(add, prepare=maybe)])

    assert list(await toolset.get_tools(ctx_of())) == ['add']
    assert list(await toolset.get_tools(ctx_of())) == []


async def test_agent_toolsets_join_the_agents_own_tools() -> None:
    model, seen = calling(('math_add', {'a': 1, 'b': 2}), ('own', {}))
    agent = Agent(model, toolsets=[math_toolset().prefixed('math')])

    @agent.tool_plain
    def own() -> str:
        return 'mine'

    result = await agent.run('go')

    assert result.output == "[3, 'mine']"
    assert seen[0] == ['math_add', 'math_shout', 'own']


async def test_run_toolsets_add_to_the_agents_for_one_run() -> None:
    model, seen = calling(('shout', {'text': 'hi'}))
    agent = Agent(model)

    result = await agent.run('go', toolsets=[FunctionToolset([shout])])
    assert result.output == "['HI']"
    assert seen[0] == ['shout']

    model2, seen2 = calling()
    await agent.run('go', model=model2)
    assert seen2[0] == []


async def test_a_name_clash_between_toolsets_names_both() -> None:
    agent = Agent(TestModel(), toolsets=[FunctionToolset([add], id='first'), FunctionToolset([add], id='second')])

    with pytest.raises(UserError) as exc_info:
        await agent.run('go')
    assert str(exc_info.value) == (
        "FunctionToolset 'second' defines a tool whose name conflicts with existing tool from FunctionToolset "
        "'first': 'add'. Rename the tool or wrap the toolset in a `PrefixedToolset` to avoid name conflicts."
    )


async def test_a_name_clash_with_a_prefixed_toolset_suggests_another_prefix() -> None:
    combined = CombinedToolset([FunctionToolset([Tool(add, name='m_add')]), FunctionToolset([add]).prefixed('m')])

    with pytest.raises(UserError, match=r'PrefixedToolset\(FunctionToolset\) defines .* Change the `prefix`'):
        await combined.get_tools(ctx_of())


async def test_a_name_clash_with_the_agents_own_tool_names_the_agents_toolset() -> None:
    agent = Agent(TestModel(), tools=[add], toolsets=[FunctionToolset([add], id='extra')])

    with pytest.raises(UserError, match="FunctionToolset 'extra' defines a tool whose name conflicts with existing "
                                        "tool from the agent: 'add'"):  # fmt: skip
        await agent.run('go')


async def test_renamed_and_filtered_toolsets_change_the_listing_and_call_by_the_own_name() -> None:
    seen_names: list[str | None] = []

    def add_ctx(ctx: RunContext[object], a: int, b: int) -> int:
        seen_names.append(ctx.tool_name)
        return a + b

    base: FunctionToolset[object] = FunctionToolset([Tool(add_ctx, name='add'), shout])
    toolset = base.renamed({'plus': 'add'}).filtered(lambda ctx, tool_def: tool_def.name != 'shout')
    assert isinstance(toolset, FilteredToolset)
    assert isinstance(toolset.wrapped, RenamedToolset)
    model, seen = calling(('plus', {'a': 2, 'b': 3}))

    result = await Agent(model, toolsets=[toolset]).run('go')

    assert seen[0] == ['plus']
    assert result.output == '[5]'
    assert seen_names == ['add']


async def test_an_async_filter_is_awaited() -> None:
    async def only_add(ctx: RunContext[object], tool_def: ToolDefinition) -> bool:
        return tool_def.name == 'add'

    tools = await math_toolset().filtered(only_add).get_tools(ctx_of())
    assert list(tools) == ['add']


async def test_a_prepared_toolset_may_change_or_drop_definitions_but_not_add_any() -> None:
    def describe(ctx: RunContext[object], defs: list[ToolDefinition]) -> list[ToolDefinition]:
        return [dataclasses.replace(d, description='changed') for d in defs if d.name == 'add']

    async def invent(ctx: RunContext[object], defs: list[ToolDefinition]) -> list[ToolDefinition]:
        return [ToolDefinition(name='new')]

    tools = await math_toolset().prepared(describe).get_tools(ctx_of())
    assert {n: t.tool_def.description for n, t in tools.items()} == {'add': 'changed'}
    assert isinstance(math_toolset().prepared(describe), PreparedToolset)
    assert await math_toolset().prepared(lambda ctx, defs: []).get_tools(ctx_of()) == {}
    # `None` is a mistake (pydantic-ai 2.x), a `UserError` that is also a `TypeError`.
    with pytest.raises(TypeError, match=r"^Prepare function '<lambda>' returned `None`; return `\[\]`"):
        await math_toolset().prepared(lambda ctx, defs: None).get_tools(ctx_of())
    with pytest.raises(UserError, match='Prepare function cannot add or rename tools'):
        await math_toolset().prepared(invent).get_tools(ctx_of())


async def test_prefixed_toolsets_call_the_tool_by_its_own_name() -> None:
    toolset = math_toolset().prefixed('m')
    assert isinstance(toolset, PrefixedToolset)
    tools = await toolset.get_tools(ctx_of())

    assert list(tools) == ['m_add', 'm_shout']
    assert await toolset.call_tool('m_shout', {'text': 'a'}, ctx_of(), tools['m_shout']) == 'A'


class Connection(WrapperToolset[Any]):
    """A wrapper recording when it is entered and left, like a toolset holding a connection."""

    def __init__(self, wrapped: AbstractToolset[Any], log: list[str]) -> None:
        super().__init__(wrapped)
        self.log = log

    async def __aenter__(self) -> Connection:
        self.log.append('enter')
        return await super().__aenter__()

    async def __aexit__(self, *args: Any) -> bool | None:
        self.log.append('exit')
        return await super().__aexit__(*args)


async def test_each_run_enters_and_leaves_the_toolsets() -> None:
    log: list[str] = []
    agent = Agent(TestModel(), toolsets=[Connection(math_toolset(), log)])

    await agent.run('one')
    await agent.run('two')

    assert log == ['enter', 'exit', 'enter', 'exit']


async def test_async_with_agent_enters_the_toolsets_once_for_every_run_inside() -> None:
    log: list[str] = []
    connection = Connection(math_toolset(), log)
    agent = Agent(TestModel(), toolsets=[connection])

    async with agent, agent:
        assert log == ['enter']
        await agent.run('one')
        await agent.run('two')
    assert log == ['enter', 'enter', 'exit', 'enter', 'exit', 'exit']


async def test_a_toolset_failing_to_enter_leaves_those_already_entered() -> None:
    log: list[str] = []

    class Broken(FunctionToolset[Any]):
        async def __aenter__(self) -> Broken:
            raise OSError('cannot connect')

    combined = CombinedToolset([Connection(math_toolset(), log), Broken()])

    with pytest.raises(OSError, match='cannot connect'):
        async with combined:
            pass  # pragma: no cover
    assert log == ['enter', 'exit']


async def test_a_per_step_toolset_function_is_evaluated_at_each_step() -> None:
    steps: list[int] = []
    log: list[str] = []

    model, seen = calling(('add', {'a': 1, 'b': 1}))
    agent = Agent(model)

    @agent.toolset
    def per_step(ctx: RunContext[object]) -> AbstractToolset[object] | None:
        steps.append(ctx.run_step)
        if ctx.run_step == 1:
            return Connection(FunctionToolset([add]), log)
        return None

    result = await agent.run('go')

    assert steps == [1, 2]
    assert seen == [['add'], []]
    assert result.output == '[2]'
    assert log == ['enter', 'exit']


async def test_a_per_run_toolset_function_is_evaluated_once_and_may_be_async() -> None:
    calls: list[str] = []
    model, seen = calling(('shout', {'text': 'x'}))
    agent = Agent(model, deps_type=str)

    @agent.toolset(per_run_step=False)
    async def per_run(ctx: RunContext[str]) -> AbstractToolset[str]:
        calls.append(ctx.deps)
        return FunctionToolset([shout])

    result = await agent.run('go', deps='d')

    assert calls == ['d']
    assert seen == [['shout'], ['shout']]
    assert result.output == "['X']"


async def test_a_toolset_function_given_to_the_constructor_is_built_per_step() -> None:
    model, seen = calling()
    agent = Agent(model, toolsets=[lambda ctx: FunctionToolset([add])])

    await agent.run('go')
    assert seen == [['add']]


async def test_override_replaces_the_toolsets_of_runs_inside_the_block() -> None:
    model, seen = calling()
    agent = Agent(model, toolsets=[math_toolset()])

    with agent.override(toolsets=[FunctionToolset([Tool(add, name='other')])]):
        await agent.run('go')
    await agent.run('go')

    assert seen == [['other'], ['add', 'shout']]


async def test_an_external_toolset_ends_the_run_with_the_call_for_the_caller() -> None:
    from edgewise.agent import DeferredToolRequests

    external = ExternalToolset([ToolDefinition(name='pick_file', description='Let the user pick a file.')], id='ui')
    output: Any = [str, DeferredToolRequests]
    agent = Agent(TestModel(), toolsets=[external], output_type=output)
    tools = await external.get_tools(ctx_of())

    result = await agent.run('go')

    assert isinstance(result.output, DeferredToolRequests)
    assert [c.tool_name for c in result.output.calls] == ['pick_file']
    assert tools['pick_file'].tool_def.kind == 'external'
    assert external.tool_defs[0].kind == 'function'
    with pytest.raises(UserError, match="External tool 'pick_file' cannot be called directly"):
        await external.call_tool('pick_file', {}, ctx_of(), tools['pick_file'])


def test_visitors_reach_the_leaf_toolsets() -> None:
    first, second = math_toolset(), FunctionToolset([add])
    tree = CombinedToolset([first.prefixed('a'), second.renamed({'plus': 'add'})])
    leaves: list[AbstractToolset[Any]] = []

    tree.apply(leaves.append)
    replaced = tree.visit_and_replace(lambda leaf: leaf.prefixed('z') if leaf is second else leaf)

    assert leaves == [first, second]
    found: list[AbstractToolset[Any]] = []
    replaced.apply(found.append)
    assert found == [first, second]
    assert isinstance(replaced, CombinedToolset)
    renamed = replaced.toolsets[1]
    assert isinstance(renamed, RenamedToolset)
    assert isinstance(renamed.wrapped, PrefixedToolset)


async def test_a_custom_toolset_only_lists_and_calls() -> None:
    class Echo(AbstractToolset[Any]):
        @property
        def id(self) -> str | None:
            return None

        async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
            tool = Tool(shout)
            return {'echo': ToolsetTool(toolset=self, tool_def=dataclasses.replace(tool.tool_def, name='echo'),
                                        max_retries=1, args_validator=tool.function_schema.validator)}  # fmt: skip

        async def call_tool(self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any],
                            tool: ToolsetTool[Any]) -> Any:  # fmt: skip
            return f'echo {tool_args["text"]}'

        async def get_instructions(self, ctx: RunContext[Any]) -> str | list[str] | None:
            return 'Use echo.'

    model, _ = calling(('echo', {'text': 'hi'}))
    result = await Agent(model, toolsets=[Echo()]).run('go')

    assert result.output == "['echo hi']"
    assert Echo().label == 'Echo'
    combined = CombinedToolset([Echo(), math_toolset(), Echo().prefixed('p')])
    assert await combined.get_instructions(ctx_of()) == ['Use echo.', 'Use echo.']
    assert combined.label == "CombinedToolset(Echo, FunctionToolset 'math', PrefixedToolset(Echo))"


async def test_toolsets_run_on_both_backends_with_concurrent_listing(anyio_backend: str) -> None:
    many: Sequence[AbstractToolset[Any]] = [FunctionToolset([Tool(add, name=f'add{i}')]) for i in range(5)]
    tools = await CombinedToolset(many).get_tools(ctx_of())
    assert list(tools) == [f'add{i}' for i in range(5)]
    assert await CombinedToolset([]).get_tools(ctx_of()) == {}


async def test_toolset_instructions_follow_the_agents_in_each_request() -> None:
    toolset: FunctionToolset[str] = FunctionToolset([add], instructions=['Add with add.', '  '])

    @toolset.instructions
    async def about_deps(ctx: RunContext[str]) -> str:
        return f'Deps: {ctx.deps}'

    @toolset.instructions
    def nothing() -> None:
        return None

    agent = Agent(TestModel(call_tools=[]), instructions='Be brief.', toolsets=[toolset], deps_type=str)
    result = await agent.run('go', deps='d')

    assert result.all_messages()[0].instructions == 'Be brief.\n\nAdd with add.\n\nDeps: d'  # type: ignore[union-attr]
    assert await FunctionToolset(instructions='Only this.').get_instructions(ctx_of()) == [
        InstructionPart('Only this.')
    ]
    assert await FunctionToolset().get_instructions(ctx_of()) is None


async def test_a_per_step_toolset_returned_again_is_kept_entered() -> None:
    log: list[str] = []
    kept = Connection(FunctionToolset([add]), log)
    model, seen = calling(('add', {'a': 1, 'b': 2}))
    agent = Agent(model, toolsets=[DynamicToolset(lambda ctx: kept, id='dyn')])

    result = await agent.run('go')

    assert result.output == '[3]'
    assert seen == [['add'], ['add']]
    assert log == ['enter', 'exit']


async def test_dynamic_toolsets_visit_what_they_built() -> None:
    inner = FunctionToolset([add])
    dynamic: DynamicToolset[Any] = DynamicToolset(lambda ctx: inner, per_run_step=False, id='d')
    leaves: list[AbstractToolset[Any]] = []
    dynamic.apply(leaves.append)
    per_run = await dynamic.for_run(ctx_of())
    per_run.apply(leaves.append)

    assert leaves == [dynamic, inner]
    assert dynamic.id == 'd'
    assert await per_run.for_run_step(ctx_of()) is per_run
    async with per_run:
        assert list(await per_run.get_tools(ctx_of())) == ['add']


async def test_combined_toolsets_are_new_for_each_run_and_rebuilt_for_a_step_only_when_a_member_changes() -> None:
    fixed = CombinedToolset([math_toolset()])
    assert await fixed.for_run(ctx_of()) is not fixed
    assert await fixed.for_run_step(ctx_of()) is fixed
    assert fixed.id is None
    await fixed.__aexit__(None, None, None)  # leaving a toolset never entered does nothing

    changing = CombinedToolset([math_toolset(), DynamicToolset(lambda ctx: None)])
    per_run = await changing.for_run(ctx_of())
    assert per_run is not changing
    assert isinstance(per_run, CombinedToolset)
    assert per_run.toolsets[0] is changing.toolsets[0]


async def test_a_combination_lists_the_same_tools_again_as_the_same_listing_until_a_member_lists_others() -> None:
    toolset = math_toolset()
    combined = CombinedToolset([toolset])
    first = await (await combined.for_run(ctx_of())).get_tools(ctx_of())
    # Another run's copy shares what the combination listed: the same function tools give the same listing.
    again = await (await combined.for_run(ctx_of())).get_tools(ctx_of())
    assert again is first
    assert again['add'].tool_def.toolset_id == 'math'

    toolset.add_function(lambda text: text, name='echo')
    changed = await (await combined.for_run(ctx_of())).get_tools(ctx_of())
    assert list(changed) == ['add', 'shout', 'echo']
    assert list(first) == ['add', 'shout']

    # A member that is not a function toolset may fill in the dict it listed before: it is listed anew each time.
    class Growing(AbstractToolset[Any]):
        def __init__(self) -> None:
            self.tools: dict[str, ToolsetTool[Any]] = {}

        @property
        def id(self) -> str | None:
            return 'growing'

        async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
            return self.tools

        async def call_tool(self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: Any) -> Any:
            return None  # pragma: no cover - never called

    growing = Growing()
    mixed = CombinedToolset([math_toolset(), growing])
    assert list(await mixed.get_tools(ctx_of())) == ['add', 'shout']
    growing.tools['echo'] = dataclasses.replace(first['add'].source_tool, toolset=growing)  # type: ignore[attr-defined]
    assert list(await mixed.get_tools(ctx_of())) == ['add', 'shout', 'echo']


async def test_subclasses_of_a_combination_and_of_the_tool_search_are_copied_through_their_init() -> None:
    from edgewise.agent.toolsets._tool_search import ToolSearchToolset

    made: list[str] = []

    @dataclasses.dataclass
    class Counted(CombinedToolset[Any]):
        def __post_init__(self) -> None:
            made.append('combined')

    @dataclasses.dataclass
    class Searching(ToolSearchToolset[Any]):
        def __post_init__(self) -> None:
            made.append('search')

    toolset = Searching(Counted([math_toolset(), DynamicToolset(lambda ctx: FunctionToolset([shout]))]))
    made.clear()
    per_run = await toolset.for_run(ctx_of())
    assert isinstance(per_run, Searching)
    assert isinstance(per_run.wrapped, Counted)
    assert made == ['combined', 'search']
    assert list(await per_run.get_tools(ctx_of())) == ['add', 'shout']


async def test_an_agent_run_sees_a_tool_added_after_its_earlier_runs() -> None:
    agent = Agent(TestModel(call_tools=[]))

    @agent.tool_plain
    def first() -> str:
        return 'a'  # pragma: no cover - not called

    seen: list[list[str]] = []

    @agent.output_validator
    def record(ctx: RunContext[None], output: str) -> str:
        seen.append(sorted(ctx.tools))
        return output

    await agent.run('x')
    await agent.run('x')

    @agent.tool_plain
    def second() -> str:
        return 'b'  # pragma: no cover - not called

    await agent.run('x')
    assert seen == [['first'], ['first'], ['first', 'second']]


async def test_tools_of_a_toolset_check_their_arguments_with_their_validator_function() -> None:
    async def positive(ctx: RunContext[object], a: int, b: int) -> None:
        if a < 0:
            raise ModelRetry('a must be positive')

    toolset: FunctionToolset[object] = FunctionToolset()
    toolset.add_function(add, args_validator=positive)
    model, _ = calling(('add', {'a': -1, 'b': 2}))

    result = await Agent(model, toolsets=[toolset.renamed({})]).run('go')

    retry = result.all_messages()[2].parts[0]
    assert isinstance(retry, RetryPromptPart)
    assert retry.content == 'a must be positive'


def test_toolset_reprs_and_ids() -> None:
    assert repr(math_toolset()) == "FunctionToolset(tools=['add', 'shout'], id='math')"
    assert WrapperToolset(math_toolset()).id is None
    assert ExternalToolset([], id='ui').id == 'ui'


async def test_a_failing_member_listing_stops_the_others_and_raises_as_itself() -> None:
    import anyio

    finished: list[str] = []

    class Failing(WrapperToolset[Any]):
        async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
            raise RuntimeError('boom')

    class Slow(WrapperToolset[Any]):
        async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
            await anyio.sleep_forever()
            finished.append('slow')  # pragma: no cover
            return {}  # pragma: no cover

    with pytest.raises(RuntimeError, match='boom'):
        await CombinedToolset([Slow(math_toolset()), Failing(math_toolset())]).get_tools(ctx_of())
    assert finished == []


async def test_visiting_a_dynamic_toolset_replaces_what_it_built() -> None:
    inner = FunctionToolset([add])
    dynamic: DynamicToolset[Any] = DynamicToolset(lambda ctx: inner)
    await dynamic.for_run_step(ctx_of())
    unbuilt: DynamicToolset[Any] = DynamicToolset(lambda ctx: inner)

    replaced = CombinedToolset([dynamic, unbuilt]).visit_and_replace(lambda leaf: leaf.prefixed('p'))

    expected: DynamicToolset[Any] = DynamicToolset(dynamic.toolset_func)
    expected._toolset = PrefixedToolset(inner, 'p')
    assert replaced == CombinedToolset([expected, PrefixedToolset(unbuilt, 'p')])
    assert dynamic != expected
    assert (dynamic == 'x') is False
