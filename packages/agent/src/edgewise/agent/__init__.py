"""Edgewise agents: LLM agents whose runs are Edgewise graph runs.

Source-compatible with the core of pydantic-ai 1.x: replace `pydantic_ai` with `edgewise.agent` in imports.
"""

from ._agent_graph import CallToolsNode, ModelRequestNode, UserPromptNode
from ._agent_run import AgentRun, capture_run_messages
from .agent import Agent, EndStrategy
from .exceptions import (
    AgentError,
    AgentRunError,
    ModelAPIError,
    ModelHTTPError,
    ModelRetry,
    UnexpectedModelBehavior,
    UsageLimitExceeded,
    UserError,
)
from .format_prompt import format_as_xml
from .messages import (
    AgentStreamEvent,
    FinalResultEvent,
    FunctionToolCallEvent,
    FunctionToolResultEvent,
    HandleResponseEvent,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ModelResponsePartDelta,
    ModelResponseStreamEvent,
    OutputToolCallEvent,
    OutputToolResultEvent,
    PartDeltaEvent,
    PartEndEvent,
    PartStartEvent,
    TextPartDelta,
    ThinkingPartDelta,
    ToolCallPartDelta,
)
from .output import NativeOutput, PromptedOutput, StructuredDict, TextOutput, ToolOutput
from .result import AgentEventStream, AgentRunResult, AgentRunResultEvent, FinalResult, StreamedRunResult
from .settings import ModelSettings
from .tools import RunContext, Tool, ToolDefinition
from .usage import RequestUsage, RunUsage, UsageLimits

__all__ = (
    'Agent',
    'AgentError',
    'AgentEventStream',
    'AgentRun',
    'AgentRunError',
    'AgentRunResult',
    'AgentRunResultEvent',
    'AgentStreamEvent',
    'CallToolsNode',
    'EndStrategy',
    'FinalResult',
    'FinalResultEvent',
    'FunctionToolCallEvent',
    'FunctionToolResultEvent',
    'HandleResponseEvent',
    'ModelAPIError',
    'ModelHTTPError',
    'ModelMessage',
    'ModelRequest',
    'ModelRequestNode',
    'ModelResponse',
    'ModelResponsePartDelta',
    'ModelResponseStreamEvent',
    'ModelRetry',
    'ModelSettings',
    'NativeOutput',
    'OutputToolCallEvent',
    'OutputToolResultEvent',
    'PartDeltaEvent',
    'PartEndEvent',
    'PartStartEvent',
    'PromptedOutput',
    'RequestUsage',
    'RunContext',
    'RunUsage',
    'StreamedRunResult',
    'StructuredDict',
    'TextOutput',
    'TextPartDelta',
    'ThinkingPartDelta',
    'Tool',
    'ToolCallPartDelta',
    'ToolDefinition',
    'ToolOutput',
    'UnexpectedModelBehavior',
    'UsageLimitExceeded',
    'UsageLimits',
    'UserError',
    'UserPromptNode',
    'capture_run_messages',
    'format_as_xml',
)
