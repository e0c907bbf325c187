"""`Toolset` and `SetToolMetadata`: capabilities that add tools and mark them."""

from __future__ import annotations

from typing import Any

import pytest

from edgewise.agent import Agent, RunContext
from edgewise.agent.capabilities import (
    CAPABILITY_TYPES,
    AbstractCapability,
    CombinedCapability,
    SetToolMetadata,
    Toolset,
)
from edgewise.agent.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.test import TestModel
from edgewise.agent.tools import ToolDefinition
from edgewise.agent.toolsets import AbstractToolset, FunctionToolset

pytestmark = pytest.mark.anyio


def _greeter() -> FunctionToolset[object]:
    toolset: FunctionToolset[object] = FunctionToolset()

    @toolset.tool_plain
    def greet(name: str) -> str:
        """Greet someone."""
        return f'Hello, {name}!'

    return toolset


def _tool_returns(messages: list[ModelMessage]) -> list[tuple[str, Any]]:
    return [(p.tool_name, p.content) for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]


class _Seen:
    """A FunctionModel that records the tool definitions of each request and answers with text."""

    def __init__(self) -> None:
        self.tools: list[list[ToolDefinition]] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.tools.append(list(info.function_tools))
        return ModelResponse(parts=[TextPart('done')])


# -- Toolset ----------------------------------------------------------------------------------------------------


def test_toolset_gives_the_toolset_it_holds_and_is_not_in_specs() -> None:
    toolset = _greeter()
    assert Toolset(toolset).get_toolset() is toolset
    assert Toolset.get_serialization_name() is None
    assert Toolset not in CAPABILITY_TYPES.values()


async def test_a_toolset_capability_adds_its_tools_to_a_run() -> None:
    agent = Agent(TestModel(), capabilities=[Toolset(_greeter())])
    result = await agent.run('hi')
    assert _tool_returns(result.all_messages()) == [('greet', 'Hello, a!')]


async def test_a_run_capability_adds_its_tools_to_that_run_only() -> None:
    seen = _Seen()
    agent = Agent(FunctionModel(seen))
    await agent.run('hi', capabilities=[Toolset(_greeter())])
    await agent.run('hi')
    assert [[t.name for t in tools] for tools in seen.tools] == [['greet'], []]


async def test_a_function_building_the_toolset_is_called_at_each_step() -> None:
    calls: list[int] = []

    def build(ctx: RunContext[object]) -> AbstractToolset[object]:
        calls.append(ctx.run_step)
        return _greeter()

    agent = Agent(TestModel(), capabilities=[Toolset(build)])
    result = await agent.run('hi')
    assert _tool_returns(result.all_messages()) == [('greet', 'Hello, a!')]
    assert calls == [1, 2]


async def test_a_capability_may_give_a_toolset_function_of_its_own() -> None:
    class Greeting(AbstractCapability[object]):
        def get_toolset(self) -> Any:
            return lambda ctx: _greeter()

    agent = Agent(TestModel(), capabilities=[Greeting(), Toolset(FunctionToolset())])
    result = await agent.run('hi')
    assert _tool_returns(result.all_messages()) == [('greet', 'Hello, a!')]


async def test_the_toolsets_of_several_capabilities_join_the_agent_tools() -> None:
    other: FunctionToolset[object] = FunctionToolset()

    @other.tool_plain
    def wave() -> str:
        return 'waves'

    seen = _Seen()
    agent = Agent(FunctionModel(seen), capabilities=[CombinedCapability([Toolset(_greeter()), Toolset(other)])])

    @agent.tool_plain
    def own() -> str:
        return 'own'  # pragma: no cover - listed, not called

    await agent.run('hi')
    assert [t.name for t in seen.tools[0]] == ['own', 'greet', 'wave']


async def test_override_toolsets_replaces_the_capability_toolsets_too() -> None:
    seen = _Seen()
    agent = Agent(FunctionModel(seen), capabilities=[Toolset(_greeter())])
    with agent.override(toolsets=[]):
        await agent.run('hi')
    assert seen.tools == [[]]


async def test_a_tool_name_clash_with_a_capability_toolset_is_an_error() -> None:
    agent = Agent(TestModel(), capabilities=[Toolset(_greeter())])

    @agent.tool_plain
    def greet(name: str) -> str:
        return name  # pragma: no cover - the clash stops the run first

    with pytest.raises(Exception, match='greet'):
        await agent.run('hi')


async def test_entering_the_agent_enters_the_capability_toolsets() -> None:
    entered: list[str] = []

    class Tracked(FunctionToolset[object]):
        async def __aenter__(self) -> Tracked:
            entered.append('enter')
            return self

        async def __aexit__(self, *args: Any) -> None:
            entered.append('exit')

    agent = Agent(TestModel(), capabilities=[Toolset(Tracked())])
    async with agent:
        assert entered == ['enter']
    assert entered == ['enter', 'exit']


# -- SetToolMetadata --------------------------------------------------------------------------------------------


def test_set_tool_metadata_takes_the_metadata_as_keyword_arguments() -> None:
    capability: SetToolMetadata[None] = SetToolMetadata(tools=['a'], code_mode=True, cost=3)
    assert capability.tools == ['a']
    assert capability.metadata == {'code_mode': True, 'cost': 3}
    assert SetToolMetadata().tools == 'all'
    assert SetToolMetadata().metadata == {}
    assert CAPABILITY_TYPES['SetToolMetadata'] is SetToolMetadata


def _tools_agent(seen: _Seen, *capabilities: AbstractCapability[object]) -> Agent[None, str]:
    agent = Agent(FunctionModel(seen), capabilities=list(capabilities))

    @agent.tool_plain(metadata={'kind': 'read', 'cost': 1})
    def lookup() -> str:
        return 'x'  # pragma: no cover - listed, not called

    @agent.tool_plain
    def store() -> str:
        return 'x'  # pragma: no cover - listed, not called

    return agent


async def test_metadata_is_merged_into_every_tool_by_default_the_given_keys_winning() -> None:
    seen = _Seen()
    await _tools_agent(seen, SetToolMetadata(cost=5, flag=True)).run('hi')
    assert {t.name: t.metadata for t in seen.tools[0]} == {
        'lookup': {'kind': 'read', 'cost': 5, 'flag': True},
        'store': {'cost': 5, 'flag': True},
    }


async def test_only_the_selected_tools_get_the_metadata() -> None:
    seen = _Seen()
    by_name = SetToolMetadata[object](tools=['store'], tag='w')
    by_metadata = SetToolMetadata[object](tools={'kind': 'read'}, tag='r')
    await _tools_agent(seen, by_name, by_metadata).run('hi')
    assert {t.name: t.metadata for t in seen.tools[0]} == {
        'lookup': {'kind': 'read', 'cost': 1, 'tag': 'r'},
        'store': {'tag': 'w'},
    }


async def test_a_predicate_selects_tools_and_other_capabilities_see_the_metadata() -> None:
    seen = _Seen()
    marked: list[str] = []

    class Reader(AbstractCapability[object]):
        async def prepare_tools(self, ctx: RunContext[object], tool_defs: list[ToolDefinition]) -> list[ToolDefinition]:
            marked.extend(t.name for t in tool_defs if (t.metadata or {}).get('risky'))
            return tool_defs

    async def is_store(ctx: RunContext[object], tool_def: ToolDefinition) -> bool:
        return tool_def.name == 'store'

    await _tools_agent(seen, SetToolMetadata(tools=is_store, risky=True), Reader()).run('hi')
    assert marked == ['store']


async def test_metadata_from_a_spec() -> None:
    seen = _Seen()
    agent = Agent.from_spec(
        {'model': 'test', 'capabilities': [{'SetToolMetadata': {'tools': ['store'], 'audited': True}}]}
    )
    agent.model = FunctionModel(seen)

    @agent.tool_plain
    def store() -> str:
        return 'x'  # pragma: no cover - listed, not called

    await agent.run('hi')
    assert seen.tools[0][0].metadata == {'audited': True}


async def test_output_tools_get_no_metadata() -> None:
    def call_output(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        assert all(t.metadata is None for t in info.output_tools)
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {'response': 1})])

    agent = Agent(FunctionModel(call_output), output_type=int, capabilities=[SetToolMetadata(x=1)])
    assert (await agent.run('hi')).output == 1


def _one_tool(name: str) -> FunctionToolset[object]:
    toolset: FunctionToolset[object] = FunctionToolset()

    def tool() -> str:
        return name

    toolset.add_function(tool, name=name)
    return toolset


async def test_every_capabilitys_tools_carry_its_id_through_wrappers_and_combinations() -> None:
    """As in pydantic-ai 2.x: `ToolDefinition.capability_id` names the capability a tool comes from, by its id in the
    run (a derived one for a capability without an `id`); a wrapper leaves its members' ids on their tools."""
    from edgewise.agent.capabilities import WrapperCapability

    seen: dict[str, str | None] = {}

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.update({tool.name: tool.capability_id for tool in info.function_tools})
        return ModelResponse([TextPart('listed')])

    inner = CombinedCapability([Toolset(_one_tool('tool_a'), id='a'), Toolset(_one_tool('tool_b'), id='b')])
    agent = Agent(FunctionModel(respond), capabilities=[WrapperCapability(wrapped=inner), Toolset(_one_tool('tool_c'))])

    @agent.tool_plain
    def own() -> str:
        return 'the agent'

    await agent.run('list')
    assert seen == {'own': None, 'tool_a': 'a', 'tool_b': 'b', 'tool_c': 'toolset'}


async def test_a_deferred_tool_of_a_capability_in_effect_is_still_found_by_the_tool_search() -> None:
    toolset: FunctionToolset[object] = FunctionToolset()

    @toolset.tool_plain(defer_loading=True)
    def hidden_weather(city: str) -> str:
        """Report the weather of a city."""
        return f'sunny in {city}'

    offered: list[list[str]] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        offered.append([tool.name for tool in info.function_tools])
        if len(offered) == 1:
            return ModelResponse([ToolCallPart('search_tools', {'queries': ['weather']}, 'search-1')])
        return ModelResponse([TextPart('found')])

    await Agent(FunctionModel(respond), capabilities=[Toolset(toolset, id='weather')]).run('weather?')
    assert 'hidden_weather' not in offered[0]
    assert 'hidden_weather' in offered[1]


async def test_a_capabilitys_toolset_keeps_its_instruction_key_and_its_tools_shown_as_they_are() -> None:
    """Tagging the tools changes nothing else: the toolset's instructions stay keyed `toolset:<id>`, and a tool of a
    capability in effect that a tool return names is neither deferred nor announced as newly available."""
    from edgewise.agent.capabilities import Hooks
    from edgewise.agent.messages import InstructionId, SystemPromptPart, ToolReturn, ToolsetInstructionSource

    kb: FunctionToolset[object] = FunctionToolset(id='kb', instructions='Use the kb tool wisely.')

    @kb.tool_plain
    def lookup(query: str) -> str:
        return 'found'

    keys: list[list[InstructionId | None]] = []
    hooks = Hooks[object]()

    @hooks.on.before_model_request
    async def note(ctx: RunContext[object], request_context: Any) -> Any:
        keys.append([p.id for p in request_context.model_request_parameters.instruction_parts or ()])
        return request_context

    shown: list[dict[str, tuple[bool, str | None]]] = []
    prompts: list[list[str]] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        shown.append({t.name: (t.defer_loading, t.capability_id) for t in info.function_tools})
        prompts.append([p.content for p in messages[-1].parts if isinstance(p, SystemPromptPart)])
        if len(shown) == 1:
            return ModelResponse([ToolCallPart('reveal', {}, 'c1')])
        return ModelResponse([TextPart('done')])

    agent = Agent(FunctionModel(respond), capabilities=[hooks, Toolset(kb)])

    @agent.tool_plain
    def reveal() -> ToolReturn:
        return ToolReturn('ok', tools=['lookup'])

    await agent.run('go')
    assert keys[0] == [InstructionId(ToolsetInstructionSource('kb'))]
    assert shown[1]['lookup'] == (False, 'toolset')
    assert prompts[1] == []
