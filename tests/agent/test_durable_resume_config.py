"""A resumed agent run is configured as a new run of its agent is: traced, validated, with its settings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pydantic
import pytest
from logfire.testing import CaptureLogfire

from edgewise.agent import Agent, RunContext
from edgewise.agent.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.graph.persistence.sqlite import SqliteStatePersistence

pytestmark = pytest.mark.anyio


class Crash(BaseException):
    """Stands for the process dying: the node is left to run again on resume."""


class Scaled(pydantic.BaseModel):
    x: int

    @pydantic.field_validator('x')
    @classmethod
    def scale(cls, value: int, info: pydantic.ValidationInfo) -> int:
        factor: int = info.context or 1
        return value * factor


def by_position(*responses: list[Any]) -> FunctionModel:
    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(responses[sum(isinstance(m, ModelResponse) for m in messages)])

    return FunctionModel(answer)


async def _crashed_run(agent: Agent[Any, Any], path: Path, crash: list[bool], **kwargs: Any) -> None:
    with pytest.raises((Crash, BaseExceptionGroup)):
        await agent.run('go', persistence=SqliteStatePersistence(path, 'r'), **kwargs)
    crash[0] = False


async def test_a_resumed_run_has_the_spans_of_a_run(tmp_path: Path, capfire: CaptureLogfire) -> None:
    crash = [True]
    agent = Agent(by_position([ToolCallPart('t', {}, 'c1')], [TextPart('ok')]), name='traced')

    @agent.tool_plain
    def t() -> int:
        if crash[0]:
            raise Crash
        return 1

    await _crashed_run(agent, tmp_path / 'runs.db', crash)
    capfire.exporter.clear()

    async with SqliteStatePersistence(tmp_path / 'runs.db', 'r') as persistence:
        assert (await agent.resume(persistence)).output == 'ok'

    spans = sorted(capfire.exporter.exported_spans_as_dict(), key=lambda s: s['start_time'])
    assert [s['attributes']['logfire.msg'] for s in spans] == ['agent run', 'running tool: t', 'chat function:answer:']
    run_span = spans[0]
    assert run_span['attributes']['agent_name'] == 'traced'
    assert all(s['parent']['span_id'] == run_span['context']['span_id'] for s in spans[1:])


async def test_a_resumed_run_of_an_agent_not_instrumented_has_no_spans(tmp_path: Path, capfire: CaptureLogfire) -> None:
    crash = [True]
    agent = Agent(by_position([ToolCallPart('t', {}, 'c1')], [TextPart('ok')]))
    agent.instrument = False

    @agent.tool_plain
    def t() -> int:
        if crash[0]:
            raise Crash
        return 1

    await _crashed_run(agent, tmp_path / 'runs.db', crash)

    async with SqliteStatePersistence(tmp_path / 'runs.db', 'r') as persistence:
        assert (await agent.resume(persistence)).output == 'ok'
    assert capfire.exporter.exported_spans_as_dict() == []


async def test_a_resumed_run_validates_tool_arguments_and_output_with_the_validation_context(tmp_path: Path) -> None:
    seen: list[int] = []
    crash = [True]
    model = by_position(
        [ToolCallPart('record', {'value': {'x': 2}}, 'c1')], [ToolCallPart('final_result', {'x': 3}, 'c2')]
    )
    agent = Agent(model, output_type=Scaled, deps_type=int, validation_context=lambda ctx: ctx.deps)

    @agent.tool_plain
    def record(value: Scaled) -> None:
        if crash[0]:
            raise Crash
        seen.append(value.x)

    await _crashed_run(agent, tmp_path / 'runs.db', crash, deps=10)

    async with SqliteStatePersistence(tmp_path / 'runs.db', 'r') as persistence:
        result = await agent.resume(persistence, deps=100)

    assert (seen, result.output.x) == ([200], 300)


async def test_a_resumed_run_takes_model_settings_that_are_functions_of_the_run_context(tmp_path: Path) -> None:
    crash = [True]
    settings_seen: list[Any] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        settings_seen.append(info.model_settings)
        if sum(isinstance(m, ModelResponse) for m in messages) == 0:
            return ModelResponse([ToolCallPart('t', {}, 'c1')])
        return ModelResponse([TextPart('ok')])

    agent = Agent(FunctionModel(answer), deps_type=float, model_settings=lambda ctx: {'temperature': ctx.deps})

    @agent.tool
    def t(ctx: RunContext[float]) -> int:
        if crash[0]:
            raise Crash
        return 1

    await _crashed_run(agent, tmp_path / 'runs.db', crash, deps=0.5)

    async with SqliteStatePersistence(tmp_path / 'runs.db', 'r') as persistence:
        assert (await agent.resume(persistence, deps=0.25)).output == 'ok'
    assert [s['temperature'] for s in settings_seen] == [0.5, 0.25]
