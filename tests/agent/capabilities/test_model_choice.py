"""Capabilities choosing the run's model: `get_model` (a model, an id, or a selector asked before each request
step), `resolve_model_id`, `SelectModel`, `ResolveModelId`, and how they rank against the run's and the agent's
model."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from edgewise.agent import Agent, ModelResolutionContext, ModelSelectionContext, RunContext
from edgewise.agent.capabilities import (
    AbstractCapability,
    CombinedCapability,
    ResolveModelId,
    SelectModel,
    WrapperCapability,
)
from edgewise.agent.exceptions import UserError
from edgewise.agent.messages import ModelMessage, ModelResponse, SystemPromptPart, TextPart, ToolCallPart
from edgewise.agent.models import Model, ModelRequestContext
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.toolsets import FunctionToolset

pytestmark = pytest.mark.anyio

SUSPENDED: Any = 'suspended'  # pydantic-ai 2.x's state of a response a provider-side job goes on with


def says(text: str, **kwargs: Any) -> FunctionModel:
    """A model answering `text`."""
    return FunctionModel(lambda messages, info: ModelResponse(parts=[TextPart(text)]), **kwargs)


def calls_then_says(text: str) -> FunctionModel:
    """A model calling `advance` first, then answering `text`."""

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart('advance', {})])
        return ModelResponse(parts=[TextPart(text)])

    return FunctionModel(answer)


class Entered(FunctionModel):
    """A model counting the times its context is entered and left."""

    def __init__(self, text: str) -> None:
        super().__init__(lambda messages, info: ModelResponse(parts=[TextPart(text)]))
        self.entered = self.left = 0

    async def __aenter__(self) -> Entered:
        self.entered += 1
        return self

    async def __aexit__(self, *args: Any) -> None:
        self.left += 1


@dataclass
class Picks(AbstractCapability[Any]):
    """Picks `model` (a model, an id or a selector)."""

    model: Any = None

    def get_model(self) -> Any:
        return self.model


def with_advance(agent: Agent[Any, str]) -> Agent[Any, str]:
    @agent.tool_plain
    def advance() -> str:
        return 'advanced'

    return agent


# -- what wins ------------------------------------------------------------------------------------------------------


async def test_a_capability_gives_a_model_to_an_agent_without_one() -> None:
    assert (await Agent(None, capabilities=[Picks(says('picked'))]).run('hi')).output == 'picked'


async def test_the_capabilities_pick_wins_over_the_agents_model() -> None:
    agent = Agent(says('agent'), capabilities=[Picks(says('first')), Picks(None), Picks(says('last'))])
    assert (await agent.run('hi')).output == 'last'


async def test_a_model_given_to_the_run_or_the_override_wins_over_the_capabilities() -> None:
    selector_calls: list[int] = []

    def select(ctx: ModelSelectionContext[object]) -> Model:
        selector_calls.append(ctx.run_step)
        return says('picked')

    agent = Agent(None, capabilities=[SelectModel(select)])
    assert (await agent.run('hi', model=says('run'))).output == 'run'
    with agent.override(model=says('override')):
        assert (await agent.run('hi')).output == 'override'
    assert selector_calls == []


async def test_no_model_anywhere_is_an_error() -> None:
    with pytest.raises(UserError, match='`model` must either be set on the agent or included when calling it'):
        await Agent(None, capabilities=[Picks(None)]).run('hi')


async def test_a_wrapper_and_a_combined_capability_hand_over_the_pick() -> None:
    assert (await Agent(None, capabilities=[WrapperCapability(Picks(says('wrapped')))]).run('hi')).output == 'wrapped'
    combined = CombinedCapability([Picks(says('a')), Picks(says('b'))])
    assert combined.get_model() is not None
    assert (await Agent(None, capabilities=[combined]).run('hi')).output == 'b'


# -- selectors ------------------------------------------------------------------------------------------------------


async def test_a_selector_picks_the_model_of_each_step_with_its_settings() -> None:
    seen: list[tuple[int, int, Any, int]] = []
    first = FunctionModel(lambda messages, info: ModelResponse(parts=[ToolCallPart('advance', {})]))

    def finish(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart(f'max_tokens={(info.model_settings or {}).get("max_tokens")}')])

    second = FunctionModel(finish, settings={'max_tokens': 7})

    def select(ctx: ModelSelectionContext[int]) -> Model:
        seen.append((ctx.run_step, len(ctx.messages), ctx.deps, ctx.usage.requests))
        ctx.messages.clear()  # a copy: the run's history stays
        return first if ctx.run_step == 1 else second

    agent = with_advance(Agent(None, deps_type=int, capabilities=[SelectModel(select)]))
    assert SelectModel.get_serialization_name() is None
    result = await agent.run('hi', deps=42)
    assert result.output == 'max_tokens=7'
    assert seen == [(1, 0, 42, 0), (2, 2, 42, 1)]
    assert len(result.all_messages()) == 4


async def test_an_async_selector_sees_the_previous_steps_model() -> None:
    previous: list[Model | None] = []
    model = calls_then_says('done')

    async def select(ctx: ModelSelectionContext[object]) -> Model:
        previous.append(ctx.model)
        return model

    agent = with_advance(Agent(None, capabilities=[SelectModel(select)]))
    assert (await agent.run('hi')).output == 'done'
    assert previous == [None, model]


async def test_a_selector_may_give_a_model_id_resolved_once_per_run() -> None:
    target = calls_then_says('resolved')
    resolutions: list[str] = []

    def resolve(ctx: ModelResolutionContext[str], model_id: str) -> Model | None:
        assert ctx.deps == 'tenant'
        resolutions.append(model_id)
        return target if model_id == 'alias' else None

    agent = with_advance(
        Agent(None, deps_type=str, capabilities=[SelectModel(lambda ctx: 'alias'), ResolveModelId(resolve)])
    )
    assert (await agent.run('hi', deps='tenant')).output == 'resolved'
    assert resolutions == ['alias']


async def test_a_selector_cannot_resume_a_suspended_response() -> None:
    agent = Agent(None, capabilities=[SelectModel(lambda ctx: says('x'))])
    with pytest.raises(UserError, match='cannot be reconstructed unambiguously'):
        await agent.run(message_history=[ModelResponse(parts=[], state=SUSPENDED)])


async def test_a_streamed_run_uses_the_selected_model() -> None:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> Any:
        yield 'streamed'

    agent = Agent(None, capabilities=[SelectModel(lambda ctx: FunctionModel(stream_function=stream))])
    async with agent.run_stream('hi') as result:
        assert await result.get_output() == 'streamed'


# -- model ids ------------------------------------------------------------------------------------------------------


async def test_the_first_resolver_returning_a_model_wins() -> None:
    calls: list[str] = []

    def skip(ctx: ModelResolutionContext[None], model_id: str) -> None:
        calls.append('skip')

    async def take(ctx: ModelResolutionContext[None], model_id: str) -> Model:
        calls.append('take')
        return says(f'resolved {model_id}')

    agent = Agent('alias', capabilities=[ResolveModelId(skip), ResolveModelId(take), ResolveModelId(take)])
    assert (await agent.run('hi')).output == 'resolved alias'
    assert calls == ['skip', 'take']
    assert ResolveModelId.get_serialization_name() is None


async def test_a_deferred_resolver_is_not_asked() -> None:
    def never(ctx: ModelResolutionContext[None], model_id: str) -> Model:
        raise AssertionError('a deferred capability does not resolve')

    capability = CombinedCapability(
        [ResolveModelId(never, defer_loading=True, id='later'), ResolveModelId(lambda ctx, model_id: says('now'))]
    )
    assert capability.has_resolve_model_id
    assert (await Agent('alias', capabilities=[capability]).run('hi')).output == 'now'


async def test_an_id_no_resolver_knows_goes_to_infer_model() -> None:
    agent = Agent('test', capabilities=[ResolveModelId(lambda ctx, model_id: None)])
    assert (await agent.run('hi')).output == 'success (no tool calls)'


async def test_a_wrapper_subclass_resolving_ids_is_asked() -> None:
    @dataclass
    class Resolving(WrapperCapability[Any]):
        async def resolve_model_id(self, ctx: ModelResolutionContext[Any], *, model_id: str) -> Model | None:
            return says('by wrapper') if model_id == 'custom' else None

    capability = Resolving(wrapped=AbstractCapability())
    assert capability.has_resolve_model_id
    assert not WrapperCapability(wrapped=AbstractCapability()).has_resolve_model_id
    agent = Agent('test', capabilities=[capability])
    with agent.override(model='custom'):
        assert (await agent.run('hi')).output == 'by wrapper'


# -- capabilities made per run --------------------------------------------------------------------------------------


@dataclass
class Replaced(AbstractCapability[Any]):
    """Picks `model`, and stands in the run as `replacement`."""

    model: Any = None
    replacement: AbstractCapability[Any] = field(default_factory=AbstractCapability)

    def get_model(self) -> Any:
        return self.model

    async def for_run(self, ctx: RunContext[Any]) -> AbstractCapability[Any]:
        return self.replacement


async def test_the_pick_of_the_capabilities_made_for_the_run_decides() -> None:
    static = Replaced(says('bootstrap'), Picks(says('replacement')))
    assert (await Agent(None, capabilities=[static]).run('hi')).output == 'replacement'
    steps: list[int] = []

    def select(ctx: ModelSelectionContext[object]) -> Model:
        steps.append(ctx.run_step)
        return says('selected')

    selecting = Replaced(says('bootstrap'), Picks(select))
    assert (await Agent(None, capabilities=[selecting]).run('hi')).output == 'selected'
    assert steps == [1]


async def test_removing_the_only_model_in_for_run_is_an_error() -> None:
    with pytest.raises(UserError, match='removed the bootstrap model'):
        await Agent(None, capabilities=[Replaced(says('bootstrap'))]).run('hi')
    assert (await Agent(says('agent'), capabilities=[Replaced(says('bootstrap'))]).run('hi')).output == 'agent'


async def test_a_selector_made_for_the_run_cannot_resume_a_suspended_response() -> None:
    capability = Replaced(says('bootstrap'), Picks(lambda ctx: says('x')))
    with pytest.raises(UserError, match='cannot be reconstructed unambiguously'):
        await Agent(None, capabilities=[capability]).run(message_history=[ModelResponse(parts=[], state=SUSPENDED)])


# -- model contexts -------------------------------------------------------------------------------------------------


async def test_a_run_enters_each_model_the_capabilities_pick_once() -> None:
    first, second = Entered('first'), Entered('done')
    first.function = lambda messages, info: ModelResponse(parts=[ToolCallPart('advance', {})])
    agent = with_advance(Agent(None, capabilities=[SelectModel(lambda ctx: first if ctx.run_step == 1 else second)]))
    assert (await agent.run('hi')).output == 'done'
    assert (first.entered, first.left, second.entered, second.left) == (1, 1, 1, 1)


async def test_the_agent_context_enters_a_static_pick_which_runs_reuse() -> None:
    model = Entered('picked')
    agent = Agent(None, capabilities=[Picks(model)])
    async with agent:
        assert (model.entered, model.left) == (1, 0)
        assert (await agent.run('hi')).output == 'picked'
        assert (model.entered, model.left) == (1, 0)
    assert model.left == 1


async def test_the_agent_context_leaves_selectors_to_the_runs() -> None:
    calls: list[int] = []

    def select(ctx: ModelSelectionContext[object]) -> Model:
        calls.append(ctx.run_step)
        return says('selected')

    agent = Agent(None, capabilities=[SelectModel(select)])
    async with agent:
        assert calls == []
        assert (await agent.run('hi')).output == 'selected'
    assert calls == [1]


async def test_the_agent_context_infers_a_static_id_once(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[Entered] = []

    def infer(model_id: str) -> Model:
        made.append(Entered(model_id))
        return made[-1]

    monkeypatch.setattr('edgewise.agent.models.infer_model', infer)
    agent: Agent[None, str] = Agent(None, capabilities=[Picks('custom-model')])
    async with agent:
        assert (await agent.run('hi')).output == 'custom-model'
    assert len(made) == 1
    assert (made[0].entered, made[0].left) == (1, 1)


# -- outside runs ---------------------------------------------------------------------------------------------------


async def test_system_prompt_parts_use_the_selected_model() -> None:
    selected = says('x')
    agent: Agent[str, str] = Agent(None, deps_type=str, capabilities=[SelectModel(lambda ctx: selected)])

    @agent.system_prompt
    def prompt(ctx: RunContext[str]) -> str:
        assert ctx.model is selected
        return f'for {ctx.deps}'

    parts = await agent.system_prompt_parts(deps='tenant')
    assert [(type(p), p.content) for p in parts] == [(SystemPromptPart, 'for tenant')]
    with pytest.raises(UserError, match='supplied by a capability'):
        await Agent(None).system_prompt_parts()


def test_mcp_sampling_refuses_a_pick_that_needs_the_runs_deps() -> None:
    Agent(None, capabilities=[Picks(says('static'))]).set_mcp_sampling_model()
    with pytest.raises(UserError, match='requires run dependencies'):
        Agent(says('agent'), capabilities=[SelectModel(lambda ctx: says('x'))]).set_mcp_sampling_model()
    with pytest.raises(UserError, match='requires run dependencies'):
        Agent('alias', capabilities=[ResolveModelId(lambda ctx, model_id: None)]).set_mcp_sampling_model()
    with pytest.raises(UserError, match='No sampling model'):
        Agent(None).set_mcp_sampling_model()


# -- what request hooks see -----------------------------------------------------------------------------------------


@dataclass
class SeesRequests(AbstractCapability[Any]):
    """Records each request's model id and streaming flag; swaps in `swap` when given."""

    seen: list[tuple[str | None, bool]] = field(default_factory=list)
    swap: Model | None = None

    async def before_model_request(self, ctx: RunContext[Any], request_context: ModelRequestContext) -> Any:
        self.seen.append((request_context.model_id, request_context.streaming))
        if self.swap is not None:
            request_context.model = self.swap
        return request_context


async def test_request_hooks_see_the_model_id_and_whether_the_run_streams() -> None:
    hook = SeesRequests()
    agent = Agent('test', capabilities=[hook])
    await agent.run('hi')
    async with agent.run_stream('hi') as result:
        await result.get_output()
    await Agent(says('x'), capabilities=[hook]).run('hi')
    assert hook.seen == [('test', False), ('test', True), (None, False)]


async def test_the_model_id_is_the_pick_of_each_step() -> None:
    hook = SeesRequests()
    target = calls_then_says('done')

    def select(ctx: ModelSelectionContext[object]) -> str:
        return f'alias-{ctx.run_step}'

    capabilities = [SelectModel(select), ResolveModelId(lambda ctx, model_id: target), hook]
    assert (await with_advance(Agent(None, capabilities=capabilities)).run('hi')).output == 'done'
    assert hook.seen == [('alias-1', False), ('alias-2', False)]


async def test_a_model_swapped_in_by_a_request_hook_serves_that_request_only() -> None:
    models_seen: list[Model] = []
    own = says('own')
    agent = Agent(own, capabilities=[SeesRequests(swap=says('swapped'))])

    @agent.instructions
    def note(ctx: RunContext[object]) -> str:
        models_seen.append(ctx.model)
        return 'be brief'

    assert (await agent.run('hi')).output == 'swapped'
    assert models_seen == [own]


# -- bound to the agent ---------------------------------------------------------------------------------------------


@dataclass
class KnowsItsAgent(AbstractCapability[Any]):
    """Bound to an agent (`for_agent`), gives an instruction naming it."""

    agent_name: str | None = None

    def for_agent(self, agent: Any) -> KnowsItsAgent:
        return KnowsItsAgent(agent_name=agent.name)

    def get_instructions(self) -> str:
        return f'Bound to {self.agent_name}.'


def instructions_of(result: Any) -> list[str | None]:
    return [m.instructions for m in result.all_messages() if hasattr(m, 'instructions')]


async def test_capabilities_are_bound_to_the_agent_and_per_run() -> None:
    given = KnowsItsAgent()
    agent = Agent(says('x'), name='runner', capabilities=[WrapperCapability(CombinedCapability([given]))])
    assert given.agent_name is None  # a copy is bound, not the capability given
    assert instructions_of(await agent.run('hi')) == ['Bound to runner.']
    plain = Agent(says('x'), name='plain')
    assert instructions_of(await plain.run('hi', capabilities=[given])) == ['Bound to plain.']
    assert instructions_of(await plain.run('hi', capabilities=[lambda ctx: given])) == ['Bound to plain.']
    unbound = AbstractCapability[Any]()
    assert unbound.for_agent(agent) is unbound
    assert CombinedCapability([unbound]).for_agent(agent).capabilities == [unbound]


async def test_a_run_model_wins_over_the_capabilities_made_for_the_run() -> None:
    capability = Replaced(says('bootstrap'), Picks(says('replacement')))
    assert (await Agent(None, capabilities=[capability]).run('hi', model=says('run'))).output == 'run'


async def test_a_selector_made_for_the_run_over_the_agents_own_model() -> None:
    own = Entered('own')
    steps: list[int] = []

    def select(ctx: ModelSelectionContext[object]) -> Model:
        steps.append(ctx.run_step)
        assert ctx.model is own  # the model the run had before the selector
        return says('selected')

    agent = Agent(own, capabilities=[Replaced(None, Picks(select))])
    assert (await agent.run('hi')).output == 'selected'
    assert steps == [1]
    assert own.entered == 0  # the agent's own model is not the capabilities' to enter


async def test_the_agent_context_enters_the_override_or_nothing() -> None:
    async with Agent(None):  # no model anywhere: nothing to enter
        pass
    model = Entered('override')
    agent = Agent(None)
    with agent.override(model=model):
        async with agent:
            assert (await agent.run('hi')).output == 'override'
    assert (model.entered, model.left) == (1, 1)


async def test_a_made_capability_may_give_a_toolset_function() -> None:
    tools: FunctionToolset[object] = FunctionToolset()

    @tools.tool_plain
    def lookup() -> str:  # pragma: no cover - listed only
        return 'found'

    @dataclass
    class GivesFunction(AbstractCapability[object]):
        def get_toolset(self) -> Any:
            async def build(ctx: RunContext[object]) -> FunctionToolset[object]:
                return tools

            return build

    seen: list[list[str]] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(sorted(t.name for t in info.function_tools))
        return ModelResponse(parts=[TextPart('ok')])

    await Agent(FunctionModel(answer), capabilities=[lambda ctx: GivesFunction()]).run('hi')
    assert seen == [['lookup']]
