"""Spans through logfire: one for the agent run, one per model request, one per tool call."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from logfire.testing import CaptureLogfire

from edgewise.agent import Agent, RunContext, UnexpectedModelBehavior
from edgewise.agent.capabilities import AbstractCapability, Instrumentation, WrapModelRequestHandler
from edgewise.agent.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from edgewise.agent.models import ModelRequestContext
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.instrumented import DEFAULT_INSTRUMENTATION_VERSION, InstrumentationSettings
from edgewise.agent.models.test import TestModel

from ._helpers import scripted

pytestmark = pytest.mark.anyio


async def test_a_run_has_spans_for_itself_its_requests_and_its_tools(capfire: CaptureLogfire) -> None:
    agent = Agent(scripted([ToolCallPart('t', {})], [TextPart('ok')]), name='traced')

    @agent.tool_plain
    async def t() -> int:
        return 1

    await agent.run('go')
    spans = sorted(capfire.exporter.exported_spans_as_dict(), key=lambda s: s['start_time'])
    assert [s['attributes']['logfire.msg'] for s in spans] == [
        'agent run',
        'chat function:script:',
        'running tool: t',
        'chat function:script:',
    ]
    run_span = spans[0]
    assert run_span['attributes']['agent_name'] == 'traced'
    assert all(s['parent']['span_id'] == run_span['context']['span_id'] for s in spans[1:] if s['parent'])


async def test_no_spans_are_made_when_tracing_is_off(capfire: CaptureLogfire, monkeypatch: pytest.MonkeyPatch) -> None:
    from edgewise.agent import _instrument

    monkeypatch.setattr(_instrument, 'TRACING', False)
    agent = Agent(scripted([ToolCallPart('t', {})], [TextPart('ok')]))

    @agent.tool_plain
    async def t() -> int:
        return 1

    assert (await agent.run('go')).output == 'ok'
    assert capfire.exporter.exported_spans_as_dict() == []


async def test_a_failed_run_ends_its_span_with_the_error(capfire: CaptureLogfire) -> None:
    agent = Agent(scripted([TextPart('x')], [TextPart('x')]), output_type=int)
    with pytest.raises(UnexpectedModelBehavior):
        await agent.run('go')
    run_span = next(s for s in capfire.exporter.exported_spans_as_dict() if s['name'] == 'agent run')
    assert run_span['attributes']['logfire.level_num'] == 17


class _ModelDown(Exception):
    pass


async def test_a_failed_streamed_request_ends_its_span_with_the_error(capfire: CaptureLogfire) -> None:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        yield 'half an ans'
        raise _ModelDown('connection lost')

    agent = Agent(FunctionModel(stream_function=stream))
    with pytest.raises(_ModelDown):
        async with agent.run_stream('go') as result:
            await result.get_output()
    request_span = next(s for s in capfire.exporter.exported_spans_as_dict() if s['name'].startswith('chat '))
    assert request_span['attributes']['logfire.level_num'] == 17
    [event] = request_span['events']
    assert event['name'] == 'exception'
    assert event['attributes']['exception.type'].endswith('_ModelDown')
    assert event['attributes']['exception.message'] == 'connection lost'


async def test_a_run_span_carries_the_runs_total_usage_under_aggregated_names(capfire: CaptureLogfire) -> None:
    from edgewise.agent.models.instrumented import DEFAULT_INSTRUMENTATION_VERSION, InstrumentationSettings

    agent = Agent(scripted([ToolCallPart('t', {})], [TextPart('ok')]))

    @agent.tool_plain
    async def t() -> int:
        return 1

    result = await agent.run('go')
    run_span = next(s for s in capfire.exporter.exported_spans_as_dict() if s['name'] == 'agent run')
    usage = result.usage
    assert usage.input_tokens > 0
    assert run_span['attributes']['gen_ai.aggregated_usage.input_tokens'] == usage.input_tokens
    assert run_span['attributes']['gen_ai.aggregated_usage.output_tokens'] == usage.output_tokens
    assert not any(key.startswith('gen_ai.usage.') for key in run_span['attributes'])
    assert InstrumentationSettings().version == DEFAULT_INSTRUMENTATION_VERSION == 5


async def test_the_standard_usage_names_on_the_run_span_when_asked(capfire: CaptureLogfire) -> None:
    from edgewise.agent.capabilities import Instrumentation
    from edgewise.agent.models.instrumented import InstrumentationSettings

    settings = InstrumentationSettings(use_aggregated_usage_attribute_names=False, version=6)
    agent = Agent(scripted([TextPart('ok')]), capabilities=[Instrumentation(settings)])
    result = await agent.run('go')
    run_span = next(s for s in capfire.exporter.exported_spans_as_dict() if s['name'] == 'agent run')
    assert run_span['attributes']['gen_ai.usage.input_tokens'] == result.usage.input_tokens
    assert not any(key.startswith('gen_ai.aggregated_usage.') for key in run_span['attributes'])


def test_instrumentation_versions_before_5_warn_and_unknown_ones_fail() -> None:
    from edgewise.agent.models.instrumented import InstrumentationSettings

    with pytest.warns(DeprecationWarning, match='version 2 is deprecated; use `version=5` instead'):
        assert InstrumentationSettings(version=2).version == 2
    with pytest.raises(ValueError, match='must be one of 1 to 6, not 7'):
        InstrumentationSettings(version=7)  # type: ignore[arg-type]


@pytest.mark.parametrize(('version', 'is_error'), [(5, False), (4, True)])
async def test_a_deferred_tool_call_is_an_error_on_its_span_only_before_format_5(
    capfire: CaptureLogfire, version: int, is_error: bool
) -> None:
    import warnings

    from edgewise.agent import CallDeferred, DeferredToolRequests
    from edgewise.agent.capabilities import Instrumentation
    from edgewise.agent.models.instrumented import InstrumentationSettings

    with warnings.catch_warnings():
        warnings.simplefilter('ignore', DeprecationWarning)
        settings = InstrumentationSettings(version=version)  # type: ignore[arg-type]
    agent: Agent[None, str | DeferredToolRequests] = Agent(
        scripted([ToolCallPart('later', {})]),
        output_type=[str, DeferredToolRequests],
        capabilities=[Instrumentation(settings)],
    )

    @agent.tool_plain
    async def later() -> int:
        raise CallDeferred

    result = await agent.run('go')
    assert isinstance(result.output, DeferredToolRequests)
    tool_span = next(s for s in capfire.exporter.exported_spans_as_dict() if s['name'] == 'running tool: {tool_name}')
    assert (tool_span['attributes'].get('logfire.level_num') == 17) is is_error
    assert any(e['name'] == 'exception' for e in tool_span.get('events', [])) is is_error


@pytest.mark.parametrize(
    ('capabilities', 'version'), [([], 5), ([Instrumentation(settings=InstrumentationSettings(version=6))], 6)]
)
async def test_the_run_context_gives_the_instrumentation_version(capabilities: list[Any], version: int) -> None:
    seen: list[int] = []
    agent = Agent(TestModel(), capabilities=capabilities)

    @agent.tool
    def look(ctx: RunContext[None]) -> str:
        seen.append(ctx.instrumentation_version)
        return 'ok'

    await agent.run('hi')
    assert seen == [version]
    assert DEFAULT_INSTRUMENTATION_VERSION == 5


def _chat_spans(capfire: CaptureLogfire) -> list[dict[str, Any]]:
    spans = sorted(capfire.exporter.exported_spans_as_dict(), key=lambda s: s['start_time'])
    return [s for s in spans if s['attributes']['logfire.msg'].startswith('chat ')]


def _messages(span: dict[str, Any], key: str) -> Any:
    return json.loads(span['attributes'][key])


async def test_request_spans_carry_the_messages_and_format_6_gives_tool_results_their_role(
    capfire: CaptureLogfire,
) -> None:
    agent = Agent(
        scripted([ToolCallPart('t', {'n': 1}, tool_call_id='c1')], [TextPart('ok')]),
        instructions='Be brief.',
        capabilities=[Instrumentation(settings=InstrumentationSettings(version=6))],
    )

    @agent.tool_plain
    async def t(n: int) -> int:
        return n + 1

    await agent.run('go')
    first, second = _chat_spans(capfire)
    assert _messages(first, 'gen_ai.input.messages') == [{'role': 'user', 'parts': [{'type': 'text', 'content': 'go'}]}]
    assert _messages(first, 'gen_ai.output.messages') == [
        {'role': 'assistant', 'parts': [{'type': 'tool_call', 'id': 'c1', 'name': 't', 'arguments': {'n': 1}}]}
    ]
    assert _messages(first, 'gen_ai.system_instructions') == [{'type': 'text', 'content': 'Be brief.'}]
    assert [m['role'] for m in _messages(second, 'gen_ai.input.messages')] == ['user', 'assistant', 'tool']
    assert _messages(second, 'gen_ai.input.messages')[2]['parts'] == [
        {'type': 'tool_call_response', 'id': 'c1', 'name': 't', 'result': 2}
    ]
    assert _messages(second, 'gen_ai.output.messages') == [
        {'role': 'assistant', 'parts': [{'type': 'text', 'content': 'ok'}]}
    ]


async def test_format_5_request_spans_keep_tool_results_in_user_messages_and_content_can_be_left_out(
    capfire: CaptureLogfire,
) -> None:
    settings = InstrumentationSettings(include_content=False)
    agent = Agent(
        scripted([ToolCallPart('t', {}, tool_call_id='c1')], [TextPart('ok')]),
        capabilities=[Instrumentation(settings=settings)],
    )

    @agent.tool_plain
    async def t() -> int:
        return 1

    await agent.run('go')
    _, second = _chat_spans(capfire)
    assert _messages(second, 'gen_ai.input.messages') == [
        {'role': 'user', 'parts': [{'type': 'text'}]},
        {'role': 'assistant', 'parts': [{'type': 'tool_call', 'id': 'c1', 'name': 't'}]},
        {'role': 'user', 'parts': [{'type': 'tool_call_response', 'id': 'c1', 'name': 't'}]},
    ]
    assert 'gen_ai.system_instructions' not in second['attributes']


async def test_streamed_request_spans_carry_the_messages(capfire: CaptureLogfire) -> None:
    agent = Agent(TestModel(custom_output_text='streamed'))
    async with agent.run_stream('go') as result:
        assert await result.get_output() == 'streamed'
    (span,) = _chat_spans(capfire)
    assert _messages(span, 'gen_ai.input.messages') == [{'role': 'user', 'parts': [{'type': 'text', 'content': 'go'}]}]
    assert _messages(span, 'gen_ai.output.messages') == [
        {'role': 'assistant', 'parts': [{'type': 'text', 'content': 'streamed'}]}
    ]


class _PassThrough(AbstractCapability[object]):
    """A capability wrapping the model request (so the request goes through the hooks) without changing it."""

    async def wrap_model_request(
        self, ctx: RunContext[object], *, request_context: ModelRequestContext, handler: WrapModelRequestHandler
    ) -> ModelResponse:
        return await handler(request_context)


@pytest.mark.parametrize('streamed', [False, True])
async def test_request_spans_through_the_hooks_carry_the_messages(capfire: CaptureLogfire, streamed: bool) -> None:
    agent = Agent(TestModel(custom_output_text='hooked'), capabilities=[_PassThrough()])
    if streamed:
        async with agent.run_stream('go') as result:
            assert await result.get_output() == 'hooked'
    else:
        assert (await agent.run('go')).output == 'hooked'
    (span,) = _chat_spans(capfire)
    assert _messages(span, 'gen_ai.input.messages') == [{'role': 'user', 'parts': [{'type': 'text', 'content': 'go'}]}]
    assert _messages(span, 'gen_ai.output.messages')[0]['parts'] == [{'type': 'text', 'content': 'hooked'}]


async def test_a_span_that_does_not_record_gets_no_messages() -> None:
    from edgewise.agent._loop.node_support import trace_exchange as _trace_exchange

    class NotRecording:
        def is_recording(self) -> bool:
            return False

        def set_attributes(self, attributes: dict[str, Any]) -> None:  # pragma: no cover - must not be called
            raise AssertionError(attributes)

    model = TestModel()
    agent = Agent(model)
    async with agent.iter('go') as run:
        state, deps = run.ctx.state, run.ctx.deps
        _trace_exchange(NotRecording(), deps, state, model, None, [], ModelResponse([TextPart('x')]))
        _trace_exchange(None, deps, state, model, None, [], ModelResponse([TextPart('x')]))
        _trace_exchange(NotRecording(), deps, state, model, None, [], None)
