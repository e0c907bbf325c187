"""Tool visibility in agent runs (pydantic-ai 2.68): a hidden tool stays among the request's function tools, marked
`'withheld'`, so that hooks and the model's parameters show it while no provider is sent it; `tool_choice` leaves
withheld names out; a tool revealed mid-run is `'via_history'` for a model that takes new tools' definitions in the
conversation; and `edgewise.agent.models.resolve_request_tools`, pydantic-ai 2.68's decision table."""

from __future__ import annotations

from typing import Any

import pytest

from edgewise.agent import Agent, RunContext, ToolOrOutput, UserError
from edgewise.agent.capabilities import AbstractCapability, Capability, Hooks
from edgewise.agent.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from edgewise.agent.models import InstructionVisibility, ModelRequestContext, ModelRequestParameters, ToolVisibility
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.openai import OpenAIChatModel
from edgewise.agent.models.test import TestModel
from edgewise.agent.native_tools import WebSearchTool
from edgewise.agent.native_tools._tool_search import ToolSearchTool
from edgewise.agent.profiles import ModelProfile
from edgewise.agent.providers.openai import OpenAIProvider
from edgewise.agent.tools import ToolDefinition

from .models.conftest import LocalServer, Reply
from .models.conftest import local_server as local_server

pytestmark = pytest.mark.anyio


def audits() -> Capability[None]:
    """A deferred capability with one tool, `audit_log`, hidden until the model loads the capability."""
    capability = Capability[None](id='audits', description='Audit tools.', defer_loading=True)

    @capability.tool_plain
    def audit_log(account: str) -> str:
        """The audit log of an account."""
        return f'{account}: clean'

    return capability


def _time(city: str) -> str:
    """The time in a city."""
    return f'Noon in {city}.'


class Seen:
    """A model function answering the n-th request with `replies[n]`; it keeps what each request showed it."""

    def __init__(self, *replies: list[Any]) -> None:
        self.replies = replies
        self.params: list[ModelRequestParameters] = []
        self.shown: list[list[str]] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.params.append(info.model_request_parameters)
        self.shown.append([t.name for t in info.function_tools])
        return ModelResponse(parts=self.replies[len(self.params) - 1])


def _load() -> list[Any]:
    return [ToolCallPart('load_capability', {'id': 'audits'}, tool_call_id='load')]


async def test_a_hidden_capability_tool_is_in_the_request_withheld_until_loaded() -> None:
    seen = Seen(_load(), [TextPart('done')])
    agent = Agent(FunctionModel(seen), tools=[_time], capabilities=[audits()])
    assert (await agent.run('Audit a-1')).output == 'done'

    before, after = seen.params
    assert [t.name for t in before.function_tools] == ['load_capability', '_time', 'audit_log']
    assert before.tool_visibility == {'load_capability': 'visible', '_time': 'visible', 'audit_log': 'withheld'}
    assert after.tool_visibility == {'load_capability': 'visible', '_time': 'visible', 'audit_log': 'visible'}
    # the model function is shown the tools the request sends: the withheld one is not among them
    assert seen.shown == [['load_capability', '_time'], ['load_capability', '_time', 'audit_log']]


class _Recorder(AbstractCapability[Any]):
    """Records, in `before_model_request`, the function tools of each request and how each would be sent."""

    def __init__(self) -> None:
        self.seen: list[dict[str, ToolVisibility]] = []

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        params = request_context.model_request_parameters
        self.seen.append({t.name: params.visibility_of(t.name) for t in params.function_tools})
        return request_context


async def test_the_request_hooks_see_the_hidden_tools() -> None:
    recorder = _Recorder()
    agent = Agent(FunctionModel(Seen(_load(), [TextPart('done')])), capabilities=[audits(), recorder])
    await agent.run('Audit a-1')
    assert recorder.seen == [
        {'load_capability': 'visible', 'audit_log': 'withheld'},
        {'load_capability': 'visible', 'audit_log': 'visible'},
    ]


async def test_test_model_does_not_call_a_withheld_tool() -> None:
    model = TestModel(call_tools=['audit_log'])
    with pytest.raises(UserError) as raised:
        await Agent(model, capabilities=[audits()]).run('Audit a-1')
    assert str(raised.value) == (
        "Tool 'audit_log' has visibility 'withheld'; it must be revealed or configured without deferred loading "
        'before `TestModel` can call it.'
    )


async def test_a_tool_revealed_mid_run_is_via_history_for_a_model_taking_definitions_in_the_history() -> None:
    seen = Seen(_load(), [TextPart('done')])
    model = FunctionModel(seen, profile=ModelProfile(tool_addition_mode='with_definitions'))
    await Agent(model, capabilities=[audits()]).run('Audit a-1')
    before, after = seen.params
    assert before.visibility_of('audit_log') == 'withheld'
    assert after.visibility_of('audit_log') == 'via_history'
    # not among the request's tools: its definition travels in the conversation
    assert seen.shown == [['load_capability'], ['load_capability']]
    assert [t.name for t in after.declared_function_tools] == ['load_capability']


async def test_a_model_without_a_native_addition_channel_is_sent_a_revealed_tool_as_it_is() -> None:
    seen = Seen(_load(), [TextPart('done')])
    model = FunctionModel(seen, profile=ModelProfile(tool_deferral_mode='standalone'))
    await Agent(model, capabilities=[audits()]).run('Audit a-1')
    assert [p.visibility_of('audit_log') for p in seen.params] == ['withheld', 'visible']


async def test_a_trivial_run_resolves_an_empty_table() -> None:
    model = TestModel()
    assert (await Agent(model).run('hi')).output == 'success (no tool calls)'
    params = model.last_model_request_parameters
    assert params is not None
    assert params.tool_visibility == {}


def _chat(server: LocalServer) -> OpenAIChatModel:
    return OpenAIChatModel('gpt-4o', provider=OpenAIProvider(api_key='sk-test', base_url=server.url, max_retries=0))


def _chat_answer() -> dict[str, Any]:
    return {
        'id': 'chatcmpl-1',
        'object': 'chat.completion',
        'created': 0,
        'model': 'gpt-4o',
        'choices': [
            {'index': 0, 'message': {'role': 'assistant', 'content': 'Done.'}, 'finish_reason': 'stop'},
        ],
        'usage': {'prompt_tokens': 10, 'completion_tokens': 2, 'total_tokens': 12},
    }


async def test_tool_choice_leaves_a_withheld_tool_out_of_the_wire(local_server: LocalServer) -> None:
    # A hidden tool is a known name (no warning of an unknown one), and it is not chosen on the wire.
    local_server.script(Reply(body=_chat_answer()))
    choice = ToolOrOutput(function_tools=['_time', 'audit_log'])
    async with _chat(local_server) as model:
        agent = Agent(model, tools=[_time], capabilities=[audits()])
        result = await agent.run('Audit a-1', model_settings={'tool_choice': choice})
    assert result.output == 'Done.'
    body = local_server.received[0]['body']
    assert [t['function']['name'] for t in body['tools']] == ['_time']
    assert body['tool_choice'] == 'auto'


async def test_choosing_only_hidden_tools_is_a_clear_error(local_server: LocalServer) -> None:
    async with _chat(local_server) as model:
        agent = Agent(model, capabilities=[audits()])
        with pytest.raises(UserError, match=r"No tool in `tool_choice` is currently available: \['audit_log'\]"):
            await agent.run('Audit a-1', model_settings={'tool_choice': ToolOrOutput(function_tools=['audit_log'])})
    assert local_server.received == []


HIDDEN = ToolDefinition(name='hidden', defer_loading=True)
"""A tool hidden until revealed, of no search."""
COVERED = ToolDefinition(name='covered', defer_loading=True, with_native='tool_search')
"""A hidden tool of the provider-run tool search."""
NEWCOMER = ToolDefinition(name='newcomer')
"""A tool that came mid-run."""
PLAIN = ToolDefinition(name='plain')


def _resolved(params: ModelRequestParameters, **abilities: Any) -> dict[str, ToolVisibility]:
    from edgewise.agent.models import resolve_request_tools

    resolved: ModelRequestParameters = resolve_request_tools(
        params, frozenset({ToolSearchTool, WebSearchTool}), **abilities
    )
    visibility = resolved.tool_visibility
    assert visibility is not None
    return visibility


def _always(natives: Any) -> bool:
    return True


def test_resolve_request_tools_is_public() -> None:
    import edgewise.agent.models as models

    assert 'resolve_request_tools' in models.__all__
    assert models.resolve_request_tools.__module__ == 'edgewise.agent.models._native_support'


@pytest.mark.parametrize(
    ('abilities', 'expected'),
    [
        ({}, 'withheld'),
        ({'can_withhold_tool_schemas': _always}, 'deferred'),  # declared from the start, revealed by reference
        ({'can_withhold_tool_schemas': _always, 'tool_addition_mode': 'with_definitions'}, 'withheld'),
    ],
)
def test_a_hidden_tool_of_no_search(abilities: dict[str, Any], expected: ToolVisibility) -> None:
    params = ModelRequestParameters(function_tools=[PLAIN, HIDDEN])
    assert _resolved(params, **abilities) == {'plain': 'visible', 'hidden': expected}


def test_a_hidden_tool_of_no_search_stays_off_a_request_with_a_search() -> None:
    params = ModelRequestParameters(function_tools=[HIDDEN, COVERED], native_tools=[ToolSearchTool()])
    assert _resolved(params, can_withhold_tool_schemas=_always) == {'hidden': 'withheld', 'covered': 'deferred'}
    assert _resolved(params) == {'hidden': 'withheld', 'covered': 'withheld'}


@pytest.mark.parametrize(
    ('abilities', 'expected'),
    [
        ({}, 'visible'),
        ({'can_withhold_tool_schemas': _always}, 'deferred'),
        ({'tool_addition_mode': 'with_definitions'}, 'via_history'),
        ({'can_withhold_tool_schemas': _always, 'tool_addition_mode': 'with_definitions'}, 'via_history'),
    ],
)
def test_a_revealed_tool(abilities: dict[str, Any], expected: ToolVisibility) -> None:
    params = ModelRequestParameters(function_tools=[PLAIN, HIDDEN], revealed_tool_names={'hidden'})
    assert _resolved(params, **abilities) == {'plain': 'visible', 'hidden': expected}


def test_a_lone_newcomer_is_declared_as_it_is() -> None:
    alone = ModelRequestParameters(function_tools=[NEWCOMER], revealed_tool_names={'newcomer'})
    assert _resolved(alone, tool_addition_mode='with_definitions') == {'newcomer': 'visible'}
    # next to a tool declared as it is, it goes in the history
    with_plain = ModelRequestParameters(function_tools=[PLAIN, NEWCOMER], revealed_tool_names={'newcomer'})
    assert _resolved(with_plain, tool_addition_mode='with_definitions') == {
        'plain': 'visible',
        'newcomer': 'via_history',
    }


def test_a_native_tool_with_settings_the_model_cannot_apply_gives_way_to_its_fallback() -> None:
    from edgewise.agent.models import resolve_request_tools

    native = WebSearchTool(allowed_domains=['example.com'])
    fallback = ToolDefinition(name='search_locally', unless_native=native.unique_id)
    params = ModelRequestParameters(function_tools=[fallback], native_tools=[native])
    supported = frozenset({WebSearchTool})

    def no_domains(tool: Any) -> frozenset[str]:
        return frozenset({'allowed_domains'}) if getattr(tool, 'allowed_domains', None) else frozenset()

    applied = resolve_request_tools(params, supported)
    assert (applied.native_tools, applied.tool_visibility) == ([native], {})
    swapped = resolve_request_tools(params, supported, unsupported_settings=no_domains)
    assert (swapped.native_tools, swapped.tool_visibility) == ([], {'search_locally': 'visible'})
    alone = ModelRequestParameters(native_tools=[native])
    with pytest.raises(UserError, match=r"Native tool\(s\) \['WebSearchTool'\] not supported by this model"):
        resolve_request_tools(alone, supported, unsupported_settings=no_domains)


class _InstructionRecorder(AbstractCapability[Any]):
    """Records, in `before_model_request`, each instruction block of the request and where it reaches the model."""

    def __init__(self) -> None:
        self.seen: list[list[tuple[str, InstructionVisibility]]] = []

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        params = request_context.model_request_parameters
        self.seen.append(
            [(part.content, params.instruction_visibility_of(part)) for part in params.instruction_parts or ()]
        )
        return request_context


async def test_the_hooks_see_a_loaded_capability_s_instructions_via_history_and_the_model_does_not() -> None:
    capability = Capability[None](
        id='refunds', description='Refund tools.', instructions='Check the refund policy first.', defer_loading=True
    )
    recorder = _InstructionRecorder()
    seen = Seen([ToolCallPart('load_capability', {'id': 'refunds'}, tool_call_id='load')], [TextPart('done')])
    agent = Agent(FunctionModel(seen), instructions='Be brief.', capabilities=[capability, recorder])
    await agent.run('Refund order 7')

    policy = ('Check the refund policy first.', 'via_history')
    first, second = recorder.seen
    assert first[0] == second[0] == ('Be brief.', 'prefix')
    assert policy not in first
    assert second[-1] == policy
    assert {visibility for _, visibility in [*first, *second[:-1]]} == {'prefix'}
    # the model is sent the prefix only: the capability's instructions are stated in the history
    after = seen.params[1]
    assert [part.content for part in after.instruction_parts or ()] == [content for content, _ in second[:-1]]
    assert after.instruction_visibility is None


async def test_without_request_hooks_nothing_is_added() -> None:
    capability = Capability[None](id='refunds', description='Refunds.', instructions='Policy.', defer_loading=True)
    seen = Seen([ToolCallPart('load_capability', {'id': 'refunds'}, tool_call_id='load')], [TextPart('done')])
    await Agent(FunctionModel(seen), instructions='Be brief.', capabilities=[capability]).run('Refund order 7')
    for params in seen.params:
        assert 'Policy.' not in [part.content for part in params.instruction_parts or ()]
        assert params.instruction_visibility is None


async def test_a_capability_loaded_from_code_states_its_block_in_the_history() -> None:
    # Loaded by a hook, the capability states its instructions in the history (`capability:refunds`), as one the model
    # loaded: the hooks of the next request see that block once, `'via_history'`, and it is not in the prefix.
    capability = Capability[None](id='refunds', description='Refunds.', instructions='Policy.', defer_loading=True)
    recorder = _InstructionRecorder()
    loader = Hooks[None]()

    @loader.on.before_model_request
    async def load(ctx: RunContext[None], request_context: ModelRequestContext) -> ModelRequestContext:
        ctx.load_capability('refunds')
        return request_context

    seen = Seen([ToolCallPart('_time', {'city': 'Paris'}, tool_call_id='t')], [TextPart('done')])
    agent = Agent(FunctionModel(seen), tools=[_time], capabilities=[loader, capability, recorder])
    await agent.run('Time in Paris?')
    assert recorder.seen[1].count(('Policy.', 'via_history')) == 1
    assert ('Policy.', 'prefix') not in recorder.seen[1]
    assert 'Policy.' not in [part.content for part in seen.params[1].instruction_parts or ()]


def test_a_tool_the_search_found_already_is_shown_as_it_is() -> None:
    from edgewise.agent.models import resolve_request_tools

    found = ToolDefinition(name='found', with_native='tool_search')  # a member of the search, not hidden
    params = ModelRequestParameters(function_tools=[found, COVERED], native_tools=[ToolSearchTool()])
    resolved = resolve_request_tools(params, frozenset({ToolSearchTool}), can_withhold_tool_schemas=_always)
    assert resolved.tool_visibility == {'found': 'visible', 'covered': 'deferred'}
    assert [t.defer_loading for t in resolved.function_tools] == [False, True]  # the definitions as given


def test_a_member_of_a_search_the_model_cannot_run_is_a_member_no_more() -> None:
    from edgewise.agent.models import resolve_request_tools

    params = ModelRequestParameters(function_tools=[COVERED], native_tools=[ToolSearchTool(optional=True)])
    resolved = resolve_request_tools(params, frozenset({WebSearchTool}), can_withhold_tool_schemas=_always)
    assert resolved.native_tools == []
    assert [(t.name, t.with_native, t.defer_loading) for t in resolved.function_tools] == [('covered', None, True)]
    assert resolved.tool_visibility == {'covered': 'deferred'}
