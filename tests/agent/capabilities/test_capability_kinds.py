"""Capabilities made per run (`for_run`, `DynamicCapability`, functions in `capabilities=[...]`), standing for another
(`WrapperCapability`), or bundling instructions and tools (`Capability`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from edgewise.agent import Agent, RunContext
from edgewise.agent.capabilities import (
    AbstractCapability,
    Capability,
    CapabilityOrdering,
    CombinedCapability,
    DynamicCapability,
    WrapperCapability,
)
from edgewise.agent.capabilities._dynamic import ResolvedDynamicCapability
from edgewise.agent.exceptions import UserError
from edgewise.agent.messages import ModelMessage, ModelRequest, ModelResponse, TextPart
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.test import TestModel
from edgewise.agent.tools import ToolDefinition
from edgewise.agent.toolsets import CombinedToolset, FunctionToolset
from edgewise.agent.toolsets._capability_owned import tool_defs_from_pre_definition_load_returns

pytestmark = pytest.mark.anyio


@dataclass
class Says(AbstractCapability[Any]):
    """Adds an instruction and records the runs it started."""

    text: str
    runs: list[str] = field(default_factory=list)

    def get_instructions(self) -> str:
        return self.text

    async def before_run(self, ctx: RunContext[Any]) -> None:
        self.runs.append(self.text)


def _instructions(messages: list[ModelMessage]) -> str | None:
    first = messages[0]
    assert isinstance(first, ModelRequest)
    return first.instructions


def _tools_model(seen: list[list[str]]) -> FunctionModel:
    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(sorted(t.name for t in info.function_tools))
        return ModelResponse(parts=[TextPart('ok')])

    return FunctionModel(model)


# -- made per run --------------------------------------------------------------------------------------------------


async def test_a_function_in_capabilities_is_made_per_run_from_the_run_context() -> None:
    made: list[Says] = []

    def per_deps(ctx: RunContext[str]) -> Says | None:
        if ctx.deps == 'quiet':
            return None
        made.append(Says(f'deps is {ctx.deps}'))
        return made[-1]

    agent = Agent(TestModel(), deps_type=str, capabilities=[per_deps])
    assert _instructions((await agent.run('hi', deps='x')).all_messages()) == 'deps is x'
    assert _instructions((await agent.run('hi', deps='quiet')).all_messages()) is None
    assert [s.runs for s in made] == [['deps is x']]  # its hooks ran in its run


async def test_an_async_function_given_to_a_run() -> None:
    async def make(ctx: RunContext[object]) -> Says:
        return Says('from the run')

    agent = Agent(TestModel(), capabilities=[Says('from the agent')])
    result = await agent.run('hi', capabilities=[make])
    assert _instructions(result.all_messages()) == 'from the agent\nfrom the run'


async def test_functions_are_wrapped_in_dynamic_capabilities() -> None:
    def make(ctx: RunContext[object]) -> None:
        return None

    agent = Agent(TestModel(), capabilities=[make])
    (wrapped,) = agent.root_capability.capabilities
    assert wrapped == DynamicCapability(make)
    assert DynamicCapability.get_serialization_name() is None


async def test_for_run_gives_each_run_its_own_state() -> None:
    @dataclass
    class Counter(AbstractCapability[Any]):
        count: int = 0

        async def for_run(self, ctx: RunContext[Any]) -> AbstractCapability[Any]:
            return Counter()

        async def before_model_request(self, ctx: RunContext[Any], request_context: Any) -> Any:
            self.count += 1
            counts.append(self.count)
            return request_context

    counts: list[int] = []
    shared = Counter()
    agent = Agent(TestModel(), capabilities=[shared])
    await agent.run('one')
    await agent.run('two')
    assert counts == [1, 1]
    assert shared.count == 0


async def test_the_toolset_of_a_capability_made_per_run_reaches_the_model() -> None:
    tools = FunctionToolset[object]()

    @tools.tool_plain
    def lookup() -> str:
        return 'found'

    seen: list[list[str]] = []
    agent = Agent(_tools_model(seen), capabilities=[lambda ctx: Capability(toolsets=[tools])])
    await agent.run('hi')
    assert seen == [['lookup']]


async def test_combined_for_run_keeps_itself_when_nothing_changes() -> None:
    combined = CombinedCapability([Says('a'), Says('b')])
    ctx = RunContext(deps=None, model=TestModel(), usage=None)  # type: ignore[arg-type]
    assert await combined.for_run(ctx) is combined
    dynamic = CombinedCapability([Says('a'), DynamicCapability(lambda ctx: Says('made'))])
    made = await dynamic.for_run(ctx)
    assert isinstance(made, CombinedCapability)
    assert [c.get_instructions() for c in made.capabilities] == ['a', 'made']


def test_apply_visits_each_part() -> None:
    first, second = Says('a'), Says('b')
    visited: list[AbstractCapability[Any]] = []
    CombinedCapability([first, CombinedCapability([second])]).apply(visited.append)
    assert visited == [first, second]


# -- standing for another -------------------------------------------------------------------------------------------


async def test_wrapper_hands_everything_to_the_wrapped_capability() -> None:
    inner = Says('inner')
    result = await Agent(TestModel(), capabilities=[WrapperCapability(inner)]).run('hi')
    assert _instructions(result.all_messages()) == 'inner'
    assert inner.runs == ['inner']


async def test_wrapper_subclass_changes_one_hook() -> None:
    @dataclass
    class Louder(WrapperCapability[Any]):
        def get_instructions(self) -> str:
            return str(self.wrapped.get_instructions()).upper()

    inner = Says('quiet')
    result = await Agent(TestModel(), capabilities=[Louder(inner)]).run('hi')
    assert _instructions(result.all_messages()) == 'QUIET'
    assert inner.runs == ['quiet']  # the other hooks still reach it


def test_wrapper_implements_the_hooks_of_the_wrapped_capability_only() -> None:
    wrapper = WrapperCapability(Says('x'))
    assert wrapper.overrides('before_run')
    assert not wrapper.overrides('wrap_node_run')
    assert not wrapper.has_wrap_run_event_stream
    assert WrapperCapability.get_serialization_name() is None


async def test_wrapper_for_run_wraps_what_the_wrapped_capability_makes() -> None:
    wrapper = WrapperCapability(DynamicCapability(lambda ctx: Says('made')))
    ctx = RunContext(deps=None, model=TestModel(), usage=None)  # type: ignore[arg-type]
    made = await wrapper.for_run(ctx)
    assert isinstance(made, WrapperCapability)
    assert isinstance(made.wrapped, ResolvedDynamicCapability)  # the made capability stands in the run wrapped
    assert made.wrapped.wrapped == Says('made')
    plain = WrapperCapability(Says('same'))
    assert await plain.for_run(ctx) is plain


def test_wrapper_apply_visits_the_parts_of_a_combined_capability() -> None:
    first, second = Says('a'), Says('b')
    visited: list[AbstractCapability[Any]] = []
    single = WrapperCapability(first)
    single.apply(visited.append)
    assert visited == [single]
    visited.clear()
    several = WrapperCapability(CombinedCapability([first, second]))
    several.apply(visited.append)
    assert visited == [several, first, second]


# -- bundling instructions and tools ------------------------------------------------------------------------------


async def test_capability_gives_its_instructions_and_tools() -> None:
    def forecast(day: str) -> str:
        return f'sun on {day}'

    weather = Capability[str](instructions='Be brief.', tools=[forecast])

    @weather.instructions
    def city(ctx: RunContext[str]) -> str:
        return f'City: {ctx.deps}'

    @weather.tool(name='humidity')
    def humid(ctx: RunContext[str]) -> int:
        return 40

    @weather.tool_plain
    def wind() -> str:
        return 'calm'

    result = await Agent(TestModel(), deps_type=str, capabilities=[weather]).run('hi', deps='Oslo')
    assert result.output == '{"forecast":"sun on a","humidity":40,"wind":"calm"}'
    assert _instructions(result.all_messages()) == 'Be brief.\n\nCity: Oslo'


async def test_capability_tools_added_after_the_agent_was_made_reach_it() -> None:
    late = Capability[None]()
    seen: list[list[str]] = []
    agent = Agent(_tools_model(seen), capabilities=[late])

    @late.tool_plain
    def added_later() -> str:
        return 'x'

    await agent.run('hi')
    assert seen == [['added_later']]


async def test_capability_toolsets_and_toolset_functions() -> None:
    first = FunctionToolset[object]()

    @first.tool_plain
    def one() -> int:
        return 1

    second = FunctionToolset[object]()

    @second.tool_plain
    def two() -> int:
        return 2

    seen: list[list[str]] = []
    agent = Agent(_tools_model(seen), capabilities=[Capability(toolsets=[first, lambda ctx: second])])
    await agent.run('hi')
    assert seen == [['one', 'two']]
    with agent.override(toolsets=[]):  # an override of the toolsets leaves the capabilities' out
        await agent.run('hi')
    assert seen[-1] == []


def test_capability_description_and_fields() -> None:
    def describe() -> str:
        return 'dynamic'

    static = Capability[None](description='Weather tools', id='weather')
    assert static.get_description() == 'Weather tools'
    assert static.description == 'Weather tools'
    assert static.id == 'weather'
    dynamic = Capability[None](description=describe)
    assert dynamic.get_description() is describe
    assert dynamic.description is None
    assert Capability.get_serialization_name() is None
    assert Capability[None]().get_instructions() is None


def test_capability_keeps_defer_loading_and_id() -> None:
    capability = Capability[None](defer_loading=True, id='x', description='X tools.')
    assert (capability.id, capability.description, capability.defer_loading) == ('x', 'X tools.', True)


# -- what capabilities give ---------------------------------------------------------------------------------------


async def test_a_toolset_function_from_get_toolset_reaches_the_model() -> None:
    tools = FunctionToolset[object]()

    @tools.tool_plain
    def found() -> str:
        return 'x'

    @dataclass
    class GivesFunction(AbstractCapability[object]):
        def get_toolset(self) -> Any:
            return lambda ctx: tools

    seen: list[list[str]] = []
    await Agent(_tools_model(seen), capabilities=[GivesFunction()]).run('hi')
    await Agent(_tools_model(seen), capabilities=[CombinedCapability([GivesFunction(), Says('a')])]).run('hi')
    assert seen == [['found'], ['found']]


def test_combined_model_settings_merge_later_winning() -> None:
    @dataclass
    class Settings(AbstractCapability[object]):
        settings: Any = None

        def get_model_settings(self) -> Any:
            return self.settings

    static = CombinedCapability([Settings({'temperature': 0.1, 'max_tokens': 5}), Settings({'temperature': 0.5})])
    assert static.get_model_settings() == {'temperature': 0.5, 'max_tokens': 5}
    assert CombinedCapability([Settings()]).get_model_settings() is None
    mixed = CombinedCapability([Settings({'max_tokens': 5}), Settings(lambda ctx: {'temperature': ctx.run_step / 10})])
    resolve = mixed.get_model_settings()
    assert callable(resolve)
    ctx = RunContext(deps=None, model=TestModel(), usage=None, run_step=3)  # type: ignore[arg-type]
    assert resolve(ctx) == {'max_tokens': 5, 'temperature': 0.3}


async def test_combined_model_settings_reach_the_model() -> None:
    @dataclass
    class Settings(AbstractCapability[object]):
        settings: Any = None

        def get_model_settings(self) -> Any:
            return self.settings

    sent: list[Any] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        sent.append(info.model_settings)
        return ModelResponse(parts=[TextPart('ok')])

    combined = CombinedCapability([Settings({'max_tokens': 7}), Settings({'temperature': 0.2})])
    await Agent(FunctionModel(model), capabilities=[combined]).run('hi')
    assert sent == [{'max_tokens': 7, 'temperature': 0.2}]


def test_get_description_reads_a_description_attribute() -> None:
    @dataclass
    class Described(AbstractCapability[object]):
        description: str = 'does things'

    assert Described().get_description() == 'does things'
    assert Says('x').get_description() is None


# -- made per run by a function: what stands in the run -------------------------------------------------------------


@dataclass
class Outermost(Says):
    def get_ordering(self) -> CapabilityOrdering:
        return CapabilityOrdering(position='outermost')


async def test_the_made_capability_keeps_its_place_among_the_others() -> None:
    combined = CombinedCapability([Says('a'), DynamicCapability(lambda ctx: Outermost('first'))])
    ctx = RunContext(deps=None, model=TestModel(), usage=None)  # type: ignore[arg-type]
    made = await combined.for_run(ctx)
    assert isinstance(made, CombinedCapability)
    resolved = made.capabilities[0]
    assert isinstance(resolved, ResolvedDynamicCapability)
    assert resolved.wrapped == Outermost('first')
    assert resolved.get_toolset() is combined.capabilities[1].get_toolset()


async def test_the_function_is_called_once_per_run_and_its_tools_listed_through_one_toolset() -> None:
    tools: FunctionToolset[bool] = FunctionToolset()

    @tools.tool_plain
    def lookup() -> str:
        return 'found'

    calls: list[bool] = []

    def make(ctx: RunContext[bool]) -> AbstractCapability[bool] | None:
        calls.append(ctx.deps)
        return Capability(toolsets=[tools]) if ctx.deps else None

    dynamic: DynamicCapability[bool] = DynamicCapability(make, id='maybe-tools')
    toolset = dynamic.get_toolset()
    assert toolset.id == 'maybe-tools'
    assert dynamic.get_toolset() is toolset
    seen: list[list[str]] = []
    agent: Agent[bool, str] = Agent(_tools_model(seen), deps_type=bool, capabilities=[dynamic])
    await agent.run('hi', deps=True)
    await agent.run('hi', deps=False)
    assert seen == [['lookup'], []]
    assert calls == [True, False]
    # a context without the run's capabilities (made elsewhere) calls the function again
    outside = RunContext(deps=True, model=TestModel(), usage=None)  # type: ignore[arg-type]
    assert await toolset.toolset_func(outside) is not None  # type: ignore[misc]


def test_defer_loading_on_a_dynamic_capability_is_refused() -> None:
    with pytest.raises(UserError, match='set it on the capability the factory returns'):
        DynamicCapability(lambda ctx: None, defer_loading=True, id='x')


def test_tools_revealed_by_loads_of_a_history_without_tool_lists() -> None:
    ctx = RunContext(deps=None, model=TestModel(), usage=None)  # type: ignore[arg-type]
    ctx.capabilities = {'refunds': Capability(id='refunds', defer_loading=True), 'eager': Capability(id='eager')}
    ctx.loaded_capability_ids = {'refunds', 'eager'}
    defs = [
        ToolDefinition(name='refund', capability_id='refunds'),
        ToolDefinition(name='plain'),
        ToolDefinition(name='eager_tool', capability_id='eager'),
        ToolDefinition(name='gone', capability_id='removed'),
    ]
    assert tool_defs_from_pre_definition_load_returns(ctx, defs) == {'refund': defs[0]}
    ctx.loaded_capability_ids = set()
    assert tool_defs_from_pre_definition_load_returns(ctx, defs) == {}


# -- rebuilding a container whose subclass has an `__init__` of its own ---------------------------------------------


@dataclass
class Numbered(AbstractCapability[Any]):
    """A leaf made again per run (its number one up) and bound to an agent (`bound` set)."""

    n: int = 0
    bound: bool = False

    def for_agent(self, agent: Any) -> AbstractCapability[Any]:
        return Numbered(n=self.n, bound=True, id=self.id)

    async def for_run(self, ctx: RunContext[Any]) -> AbstractCapability[Any]:
        return Numbered(n=self.n + 1, bound=self.bound, id=self.id)

    def get_instructions(self) -> str:
        return f'leaf {self.n} bound={self.bound}'


class Bundle(CombinedCapability[Any]):
    """A combined capability with a constructor of its own that takes no `capabilities`."""

    def __init__(self, *, size: int) -> None:
        self.post_inits = 0
        super().__init__(capabilities=[Numbered(n=size)])

    def __post_init__(self) -> None:
        self.post_inits += 1
        super().__post_init__()


class Shell(WrapperCapability[Any]):
    """A wrapper with a constructor of its own that takes no `wrapped`."""

    def __init__(self, *, size: int, id: str | None = None) -> None:
        self.post_inits = 0
        super().__init__(wrapped=Numbered(n=size), id=id)
        self.size = size

    def __post_init__(self) -> None:
        self.post_inits += 1
        super().__post_init__()


def _plain_ctx() -> RunContext[object]:
    return RunContext(deps=None, model=TestModel(), usage=None)  # type: ignore[arg-type]


async def test_combined_subclass_with_its_own_init_is_copied_per_run() -> None:
    bundle = Bundle(size=5)
    made = await bundle.for_run(_plain_ctx())
    assert isinstance(made, Bundle)
    assert made is not bundle
    assert made.post_inits == 1  # copied, not constructed again
    assert made.capabilities == [Numbered(n=6)]
    assert made.get_instructions() == ['leaf 6 bound=False']
    assert bundle.capabilities == [Numbered(n=5)]


def test_combined_subclass_with_its_own_init_is_copied_for_the_agent() -> None:
    bundle = Bundle(size=1)
    bound = bundle.for_agent(Agent(TestModel()))
    assert isinstance(bound, Bundle)
    assert bound is not bundle
    assert bound.capabilities == [Numbered(n=1, bound=True)]
    assert bundle.capabilities == [Numbered(n=1)]


async def test_wrapper_subclass_with_its_own_init_is_copied_for_the_agent_and_per_run() -> None:
    agent = Agent(TestModel(), capabilities=[Shell(size=5)])
    result = await agent.run('hi')
    assert _instructions(result.all_messages()) == 'leaf 6 bound=True'
    [shell] = [c for c in agent.root_capability.capabilities if isinstance(c, Shell)]
    assert (shell.post_inits, shell.size, shell.wrapped) == (1, 5, Numbered(n=5, bound=True))


async def test_a_copied_wrapper_takes_the_id_of_what_it_now_wraps() -> None:
    @dataclass
    class NamedPerRun(AbstractCapability[Any]):
        async def for_run(self, ctx: RunContext[Any]) -> AbstractCapability[Any]:
            return NamedPerRun(id='named-per-run', description='made per run')

    wrapper = WrapperCapability(NamedPerRun())
    made = await wrapper.for_run(_plain_ctx())
    assert (made.id, made.description) == ('named-per-run', 'made per run')
    assert (wrapper.id, wrapper.description) == (None, None)


async def test_a_copied_wrapper_keeps_an_id_of_its_own() -> None:
    shell = Shell(size=1, id='shell')
    made = await shell.for_run(_plain_ctx())
    assert isinstance(made, Shell)
    assert (made.id, made.wrapped) == ('shell', Numbered(n=2))


def _add_one(x: int) -> int:
    return x + 1


def test_the_function_toolset_of_a_capability_carries_its_id() -> None:
    named = Capability[None](id='billing', tools=[_add_one]).get_toolset()
    assert isinstance(named, FunctionToolset)
    assert (named.id, list(named.tools)) == ('billing', ['_add_one'])
    empty = Capability[None](id='billing').get_toolset()
    assert isinstance(empty, FunctionToolset)
    assert empty.id == 'billing'
    anonymous = Capability[None](tools=[_add_one]).get_toolset()
    assert isinstance(anonymous, FunctionToolset)
    assert anonymous.id is None


def test_a_toolset_given_to_a_capability_keeps_its_own_id() -> None:
    given = FunctionToolset[object](id='given')
    combined = Capability[None](id='billing', tools=[_add_one], toolsets=[given]).get_toolset()
    assert isinstance(combined, CombinedToolset)
    functions, kept = combined.toolsets
    assert isinstance(functions, FunctionToolset)
    assert (functions.id, kept) == ('billing', given)


def test_a_wrapper_with_an_id_of_its_own_is_deferred_only_if_it_says_so() -> None:
    hidden = Capability[None](id='github', description='GitHub tools.', defer_loading=True)
    inherits = WrapperCapability(hidden)
    assert (inherits.id, inherits.description, inherits.defer_loading) == ('github', 'GitHub tools.', True)
    own = WrapperCapability(hidden, id='github_wrapped')
    assert (own.id, own.description, own.defer_loading) == ('github_wrapped', 'GitHub tools.', False)
    own_deferred = WrapperCapability(hidden, id='github_wrapped', defer_loading=True)
    assert own_deferred.defer_loading is True


async def test_a_wrapper_with_an_id_of_its_own_gives_its_tools_without_loading() -> None:
    tools = FunctionToolset[object]()

    @tools.tool_plain
    def lookup() -> str:
        return 'found'

    hidden = Capability[None](id='hidden', toolsets=[tools], defer_loading=True)
    seen: list[list[str]] = []
    await Agent(_tools_model(seen), capabilities=[WrapperCapability(hidden, id='shown')]).run('hi')
    assert seen == [['lookup']]


async def test_for_run_sees_the_run_metadata_already_resolved() -> None:
    seen: list[Any] = []

    class Looks(AbstractCapability[Any]):
        async def for_run(self, ctx: RunContext[Any]) -> AbstractCapability[Any]:
            seen.append((ctx.conversation_id, ctx.metadata))
            return self

    def metadata(ctx: RunContext[Any]) -> dict[str, Any]:
        return {'conversation': ctx.conversation_id}

    await Agent(TestModel(), capabilities=[Looks()]).run('hi', conversation_id='c-1', metadata=metadata)
    assert seen == [('c-1', {'conversation': 'c-1'})]


def test_a_plain_subclass_keeps_the_fields_set_in_its_class_body() -> None:
    class Docs(AbstractCapability[object]):
        id = 'docs'
        description = 'Documentation tools.'
        defer_loading = True

    kept = Docs()
    assert (kept.id, kept.description, kept.defer_loading) == ('docs', 'Documentation tools.', True)
    given = Docs(id='other', description='Other.')
    assert (given.id, given.description, given.defer_loading) == ('other', 'Other.', True)

    class Bare(AbstractCapability[object]):
        pass

    assert vars(Bare(id='bare', defer_loading=True)) == {'id': 'bare', 'description': None, 'defer_loading': True}
    assert vars(Bare()) == {'id': None, 'description': None, 'defer_loading': False}
