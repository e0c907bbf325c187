"""What a deferred capability's tools look like once it is loaded, as pydantic-ai 2.x shows them: still marked
`defer_loading=True` (the capability deferred them), revealed by `revealed_tool_names`; a history that loaded
the capability without saying which tools that revealed gains one `ToolAvailabilityDeltaPart`; and a call of a
tool of a capability not loaded yet is refused, naming the capability to load."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from edgewise.agent import Agent, RunContext, UnexpectedModelBehavior
from edgewise.agent.capabilities import AbstractCapability, Capability, PrefixTools, ProcessHistory, Toolset
from edgewise.agent.messages import (
    LoadCapabilityCallPart,
    LoadCapabilityReturnPart,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolAvailabilityDeltaPart,
    ToolCallPart,
    ToolReturnPart,
)
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.toolsets import FunctionToolset

pytestmark = pytest.mark.anyio


@dataclass
class Shown:
    """A model answering the n-th request with `replies[n]`; it keeps, per request, each tool it was shown with
    its `defer_loading` flag, and the request's `revealed_tool_names`."""

    replies: list[list[Any]]
    tools: list[list[tuple[str, bool]]] = field(default_factory=list)
    revealed: list[set[str]] = field(default_factory=list)

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.tools.append([(t.name, t.defer_loading) for t in info.function_tools])
        self.revealed.append(set(info.model_request_parameters.revealed_tool_names))
        return ModelResponse(parts=self.replies[len(self.tools) - 1])


def load(capability_id: str) -> ToolCallPart:
    return ToolCallPart('load_capability', {'id': capability_id}, tool_call_id='load')


def tool_returns(messages: list[ModelMessage]) -> list[tuple[str | None, Any]]:
    return [
        (p.tool_name, p.content)
        for m in messages
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, ToolReturnPart | RetryPromptPart)
    ]


def deltas(messages: list[ModelMessage]) -> list[ToolAvailabilityDeltaPart]:
    return [
        p for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolAvailabilityDeltaPart)
    ]


def audits() -> Capability[None]:
    capability = Capability[None](id='audits', description='Audit tools.', defer_loading=True)

    @capability.tool_plain
    def audit_log(account: str) -> str:
        """The audit log of an account."""
        return f'{account}: clean'

    return capability


async def test_a_loaded_capability_tool_registered_after_construction_is_shown_still_marked_deferred() -> None:
    model = Shown([[load('audits')], [ToolCallPart('audit_log', {'account': 'a-1'})], [TextPart('done')]])
    result = await Agent(FunctionModel(model), capabilities=[audits()]).run('audit')

    assert model.tools == [
        [('load_capability', False)],
        [('load_capability', False), ('audit_log', True)],
        [('load_capability', False), ('audit_log', True)],
    ]
    assert model.revealed[1:] == [{'audit_log'}, {'audit_log'}]
    assert ('audit_log', 'a-1: clean') in tool_returns(result.all_messages())


async def test_a_deferred_prefix_tools_capability_shows_its_prefixed_tools_marked_deferred_once_loaded() -> None:
    toolset = FunctionToolset[None]()

    @toolset.tool_plain
    def audit_log(account: str) -> str:
        return f'{account}: clean'

    capability = PrefixTools[None](wrapped=Toolset(toolset), prefix='acct', id='audits', defer_loading=True)
    model = Shown([[load('audits')], [ToolCallPart('acct_audit_log', {'account': 'a-2'})], [TextPart('done')]])
    result = await Agent(FunctionModel(model), capabilities=[capability]).run('audit')

    assert model.tools[1:] == [[('load_capability', False), ('acct_audit_log', True)]] * 2
    assert ('acct_audit_log', 'a-2: clean') in tool_returns(result.all_messages())


async def test_a_deferred_capability_made_per_run_shows_its_tools_marked_deferred_once_loaded() -> None:
    def per_run(ctx: RunContext[None]) -> AbstractCapability[None]:
        return audits()

    model = Shown([[load('audits')], [ToolCallPart('audit_log', {'account': 'a-3'})], [TextPart('done')]])
    result = await Agent(FunctionModel(model), capabilities=[per_run]).run('audit')

    assert [tools for tools in model.tools if ('audit_log', True) in tools] == model.tools[1:]
    assert ('audit_log', 'a-3: clean') in tool_returns(result.all_messages())


LOADED_WITHOUT_DELTA: list[ModelMessage] = [
    ModelResponse(parts=[LoadCapabilityCallPart(args={'id': 'audits'}, tool_call_id='old-load')]),
    ModelRequest(parts=[LoadCapabilityReturnPart(content={}, tool_call_id='old-load')]),
]


async def test_a_history_loading_a_capability_without_a_delta_gains_one_before_the_next_request() -> None:
    model = Shown([[TextPart('done')], [TextPart('again')]])
    agent = Agent(FunctionModel(model), capabilities=[audits()])

    first = await agent.run('continue', message_history=LOADED_WITHOUT_DELTA)
    assert deltas(first.new_messages()) == [ToolAvailabilityDeltaPart(tools_added=['audit_log'])]
    assert model.revealed == [{'audit_log'}]
    assert model.tools == [[('load_capability', False), ('audit_log', True)]]

    # the history now says it: a later run adds no second delta
    second = await agent.run('more', message_history=first.all_messages())
    assert deltas(second.new_messages()) == []
    assert model.revealed[1] == {'audit_log'}


async def test_a_history_whose_load_came_with_its_delta_gains_none() -> None:
    model = Shown([[load('audits')], [TextPart('done')], [TextPart('again')]])
    agent = Agent(FunctionModel(model), capabilities=[audits()])
    first = await agent.run('audit')
    assert len(deltas(first.all_messages())) == 1

    second = await agent.run('more', message_history=first.all_messages())
    assert deltas(second.new_messages()) == []


async def test_calling_a_tool_of_a_capability_not_loaded_is_refused_naming_the_capability() -> None:
    model = Shown([[ToolCallPart('audit_log', {'account': 'a-4'})], [TextPart('done')]])
    result = await Agent(FunctionModel(model), capabilities=[audits()]).run('audit')

    assert tool_returns(result.all_messages()) == [
        (
            'audit_log',
            "Tool 'audit_log' is not available yet: it belongs to capability 'audits'. Call `load_capability` for it "
            "first, then call the tool again once you've read the capability's instructions.",
        )
    ]
    assert deltas(result.all_messages()) == []
    assert model.tools == [[('load_capability', False)]] * 2


async def test_calling_a_tool_of_a_capability_not_loaded_past_its_retries_ends_the_run() -> None:
    call = [ToolCallPart('audit_log', {'account': 'a-5'})]
    model = Shown([call, call, [TextPart('never')]])
    with pytest.raises(UnexpectedModelBehavior, match="Tool 'audit_log' exceeded max retries count of 1"):
        await Agent(FunctionModel(model), capabilities=[audits()]).run('audit')


# -- the catalog's first line -----------------------------------------------------------------------------------------

PLAIN_CATALOG = (
    'The following capabilities are deferred and can be loaded using the `load_capability` tool. '
    "A capability's tools stay hidden until it is loaded:\n- audits: Audit tools."
)
CATALOG_WITH_SEARCH = (
    'The following capabilities are deferred and can be loaded using the `load_capability` tool. '
    "A capability's tools stay hidden until it is loaded — load the capability first rather than searching for its "
    'tools:\n- audits: Audit tools.'
)


def searchable_tools() -> FunctionToolset[None]:
    toolset = FunctionToolset[None]()

    @toolset.tool_plain(defer_loading=True)
    def weather_forecast(city: str) -> str:
        """The weather forecast of a city."""
        return f'sunny in {city}'

    return toolset


def request_instructions(messages: list[ModelMessage]) -> list[str | None]:
    return [m.instructions for m in messages if isinstance(m, ModelRequest)]


async def test_the_catalog_says_nothing_of_searching_in_a_run_without_tools_to_search() -> None:
    result = await Agent(FunctionModel(Shown([[TextPart('done')]])), capabilities=[audits()]).run('hi')
    assert request_instructions(result.all_messages()) == [PLAIN_CATALOG]


async def test_the_catalog_steers_to_loading_in_a_run_with_tools_to_search_on_every_request() -> None:
    search = ToolCallPart('search_tools', {'queries': ['weather']}, tool_call_id='s-1')
    model = Shown([[search], [load('audits')], [TextPart('done')]])
    agent = Agent(FunctionModel(model), capabilities=[audits()], toolsets=[searchable_tools()])
    result = await agent.run('search, then load')

    assert request_instructions(result.all_messages()) == [CATALOG_WITH_SEARCH] * 3


async def test_a_history_processor_dropping_deltas_keeps_a_loaded_capabilitys_tools_shown() -> None:
    def without_deltas(messages: list[ModelMessage]) -> list[ModelMessage]:
        return [
            ModelRequest(parts=[p for p in m.parts if not isinstance(p, ToolAvailabilityDeltaPart)])
            if isinstance(m, ModelRequest)
            else m
            for m in messages
        ]

    model = Shown([[load('audits')], [ToolCallPart('audit_log', {'account': 'a-6'})], [TextPart('done')]])
    agent = Agent(FunctionModel(model), capabilities=[audits(), ProcessHistory[None](without_deltas)])
    result = await agent.run('audit')

    assert model.tools[1:] == [[('load_capability', False), ('audit_log', True)]] * 2
    assert model.revealed[1:] == [{'audit_log'}, {'audit_log'}]
    assert ('audit_log', 'a-6: clean') in tool_returns(result.all_messages())
