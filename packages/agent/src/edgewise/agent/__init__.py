"""Edgewise agents: LLM agents whose runs are Edgewise graph runs.

Source-compatible with the core of pydantic-ai 1.x: replace `pydantic_ai` with `edgewise.agent` in imports.
"""

from typing import TYPE_CHECKING, Any

from ._agent_graph import CallToolsNode, ModelRequestNode, UserPromptNode
from ._agent_run import AgentRun, capture_run_messages
from ._run_options import AgentRetries
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
    AudioFormat,
    AudioMediaType,
    AudioUrl,
    BinaryContent,
    BinaryImage,
    CachePoint,
    DocumentFormat,
    DocumentMediaType,
    DocumentUrl,
    FilePart,
    FileUrl,
    FinalResultEvent,
    FinishReason,
    FunctionToolCallEvent,
    FunctionToolResultEvent,
    HandleResponseEvent,
    ImageFormat,
    ImageMediaType,
    ImageUrl,
    InstructionPart,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    ModelResponsePart,
    ModelResponsePartDelta,
    ModelResponseStreamEvent,
    MultiModalContent,
    OutputToolCallEvent,
    OutputToolResultEvent,
    PartDeltaEvent,
    PartEndEvent,
    PartStartEvent,
    RetryPromptPart,
    SystemPromptPart,
    TextContent,
    TextPart,
    TextPartDelta,
    ThinkingPart,
    ThinkingPartDelta,
    ToolCallPart,
    ToolCallPartDelta,
    ToolReturn,
    ToolReturnPart,
    UploadedFile,
    UserContent,
    UserPromptPart,
    VideoFormat,
    VideoMediaType,
    VideoUrl,
)
from .models.instrumented import InstrumentationSettings
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
    'AgentRetries',
    'AgentRunResultEvent',
    'AgentStreamEvent',
    'AudioFormat',
    'AudioMediaType',
    'AudioUrl',
    'BinaryContent',
    'BinaryImage',
    'CachePoint',
    'CallToolsNode',
    'DEFAULT_PROFILE',
    'DocumentFormat',
    'DocumentMediaType',
    'DocumentUrl',
    'EndStrategy',
    'FilePart',
    'FileUrl',
    'FinalResult',
    'FinalResultEvent',
    'FinishReason',
    'FunctionToolCallEvent',
    'FunctionToolResultEvent',
    'HandleResponseEvent',
    'ImageFormat',
    'ImageMediaType',
    'ImageUrl',
    'InlineDefsJsonSchemaTransformer',
    'InstructionPart',
    'InstrumentationSettings',
    'JsonSchemaTransformer',
    'ModelAPIError',
    'ModelHTTPError',
    'ModelMessage',
    'ModelMessagesTypeAdapter',
    'ModelProfile',
    'ModelProfileSpec',
    'ModelRequest',
    'ModelRequestNode',
    'ModelRequestPart',
    'ModelResponse',
    'ModelResponsePart',
    'ModelResponsePartDelta',
    'ModelResponseStreamEvent',
    'ModelRetry',
    'ModelSettings',
    'MultiModalContent',
    'NativeOutput',
    'OutputToolCallEvent',
    'OutputToolResultEvent',
    'PartDeltaEvent',
    'PartEndEvent',
    'PartStartEvent',
    'PromptedOutput',
    'RequestUsage',
    'RetryPromptPart',
    'RunContext',
    'RunUsage',
    'StreamedRunResult',
    'StructuredDict',
    'SystemPromptPart',
    'TextContent',
    'TextOutput',
    'TextPart',
    'TextPartDelta',
    'ThinkingPart',
    'ThinkingPartDelta',
    'Tool',
    'ToolCallPart',
    'ToolCallPartDelta',
    'ToolDefinition',
    'ToolOutput',
    'ToolReturn',
    'ToolReturnPart',
    'UnexpectedModelBehavior',
    'UploadedFile',
    'UsageLimitExceeded',
    'UsageLimits',
    'UserContent',
    'UserError',
    'UserPromptNode',
    'UserPromptPart',
    'VideoFormat',
    'VideoMediaType',
    'VideoUrl',
    'capture_run_messages',
    'format_as_xml',
)

# The profiles are re-exported here as in pydantic-ai, but imported on first use: `import edgewise.agent` stays
# free of the provider layer.
_PROFILE_NAMES = frozenset(
    {'DEFAULT_PROFILE', 'InlineDefsJsonSchemaTransformer', 'JsonSchemaTransformer', 'ModelProfile', 'ModelProfileSpec'}
)

if TYPE_CHECKING:
    from .profiles import (
        DEFAULT_PROFILE,
        InlineDefsJsonSchemaTransformer,
        JsonSchemaTransformer,
        ModelProfile,
        ModelProfileSpec,
    )


def __getattr__(name: str) -> Any:
    if name in _PROFILE_NAMES:
        from . import profiles

        return getattr(profiles, name)
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
