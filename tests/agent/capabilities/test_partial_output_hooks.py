"""Partial outputs of a streamed structured answer go through the output hooks (with `ctx.partial_output` set), as
the final output does: the validate hooks, then the process hooks; a hook rejecting a partial value skips it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from pydantic import BaseModel

from edgewise.agent import Agent, ModelRetry, RunContext
from edgewise.agent.capabilities import AbstractCapability, OutputContext, RawOutput
from edgewise.agent.messages import ModelMessage
from edgewise.agent.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

pytestmark = pytest.mark.anyio


class Point(BaseModel):
    x: int
    y: int = 0


def _chunked(*chunks: str) -> FunctionModel:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[DeltaToolCalls]:
        for index, chunk in enumerate(chunks):
            yield {0: DeltaToolCall(name='final_result' if index == 0 else None, json_args=chunk)}

    return FunctionModel(stream_function=stream)


@dataclass
class Log(AbstractCapability[Any]):
    """Records the hooks' calls as (hook, partial, value); may reject partial values past `reject_partial_from`."""

    calls: list[tuple[str, bool, Any]] = field(default_factory=list)
    rewrite: str | None = None

    async def before_output_validate(
        self, ctx: RunContext[Any], *, output_context: OutputContext, output: RawOutput
    ) -> RawOutput:
        self.calls.append(('before_validate', ctx.partial_output, output))
        return self.rewrite if self.rewrite is not None and ctx.partial_output else output

    async def after_output_process(self, ctx: RunContext[Any], *, output_context: OutputContext, output: Any) -> Any:
        self.calls.append(('after_process', ctx.partial_output, output))
        return output


async def test_partial_outputs_go_through_the_validate_and_process_hooks() -> None:
    log = Log()
    agent = Agent(_chunked('{"x": 1,', ' "y": 2}'), output_type=Point, capabilities=[log])
    async with agent.run_stream('go') as stream:
        outputs = [output async for output in stream.stream_output(debounce_by=None)]
    assert outputs[-1] == Point(x=1, y=2)
    assert ('before_validate', True, '{"x": 1,') in log.calls
    assert ('after_process', True, Point(x=1)) in log.calls
    assert log.calls[-1] == ('after_process', False, Point(x=1, y=2))


async def test_a_partial_value_a_hook_rejects_is_skipped() -> None:
    @dataclass
    class RejectPartial(AbstractCapability[Any]):
        async def after_output_validate(
            self, ctx: RunContext[Any], *, output_context: OutputContext, output: Any
        ) -> Any:
            if ctx.partial_output and output.y == 0:
                raise ModelRetry('not yet')
            return output

    agent = Agent(_chunked('{"x": 1,', ' "y": 2}'), output_type=Point, capabilities=[RejectPartial()])
    async with agent.run_stream('go') as stream:
        outputs = [output async for output in stream.stream_output(debounce_by=None)]
    assert Point(x=1) not in outputs
    assert outputs[-1] == Point(x=1, y=2)


async def test_a_raw_partial_answer_a_hook_changes_is_validated_partially() -> None:
    log = Log(rewrite='{"x": 7, "y": 8')
    agent = Agent(_chunked('{"x": 1,', ' "y": 2}'), output_type=Point, capabilities=[log])
    async with agent.run_stream('go') as stream:
        outputs = [output async for output in stream.stream_output(debounce_by=None)]
    assert outputs[0] == Point(x=7, y=8)
    assert outputs[-1] == Point(x=1, y=2)
