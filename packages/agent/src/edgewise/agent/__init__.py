"""Edgewise agents: LLM agents whose runs are Edgewise graph runs.

Source-compatible with the core of pydantic-ai 1.x: replace `pydantic_ai` with `edgewise.agent` in imports.
"""

from ._agent_graph import CallToolsNode, ModelRequestNode, UserPromptNode
from ._agent_run import AgentRun, capture_run_messages
from .agent import Agent, EndStrategy
from .exceptions import (
    AgentError,
    AgentRunError,
    ModelRetry,
    UnexpectedModelBehavior,
    UsageLimitExceeded,
    UserError,
)
from .messages import ModelMessage, ModelRequest, ModelResponse
from .output import NativeOutput, PromptedOutput, TextOutput, ToolOutput
from .result import AgentRunResult, FinalResult
from .settings import ModelSettings
from .tools import RunContext, Tool, ToolDefinition
from .usage import RequestUsage, RunUsage, UsageLimits

__all__ = (
    'Agent',
    'AgentError',
    'AgentRun',
    'AgentRunError',
    'AgentRunResult',
    'CallToolsNode',
    'EndStrategy',
    'FinalResult',
    'ModelMessage',
    'ModelRequest',
    'ModelRequestNode',
    'ModelResponse',
    'ModelRetry',
    'ModelSettings',
    'NativeOutput',
    'PromptedOutput',
    'RequestUsage',
    'RunContext',
    'RunUsage',
    'TextOutput',
    'Tool',
    'ToolDefinition',
    'ToolOutput',
    'UnexpectedModelBehavior',
    'UsageLimitExceeded',
    'UsageLimits',
    'UserError',
    'UserPromptNode',
    'capture_run_messages',
)
