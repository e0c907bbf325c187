"""The result of an agent run: its output, its messages and its usage; and the results of streamed runs."""

from __future__ import annotations as _annotations

from ._functions.runners import OutputDataT_inv, OutputValidatorFunc
from ._loop.nodes import AgentStream
from ._run.result import AgentRunResult, AgentRunResultEvent, FinalResult
from ._streaming.event_stream import AgentEventStream
from ._streaming.run_result import StreamedRunResult
from ._streaming.run_result_sync import StreamedRunResultSync
from .output import OutputDataT, ToolOutput
from .usage import RunUsage as RunUsage  # pydantic-ai's result module has it too (tests import it from there)

__all__ = (
    'AgentRunResult',
    'FinalResult',
    'StreamedRunResult',
    'StreamedRunResultSync',
    'AgentEventStream',
    'AgentRunResultEvent',
    'AgentStream',
    'OutputDataT',
    'ToolOutput',
    'OutputDataT_inv',
    'OutputValidatorFunc',
)
