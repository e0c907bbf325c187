"""Capabilities: pieces of agent behaviour given with `Agent(capabilities=[...])` (or per run).

Edgewise implements the core of pydantic-ai 1.107's capabilities: `AbstractCapability` with its
`get_instructions`, `get_model_settings`, `prepare_tools`, `prepare_output_tools`, `wrap_run`,
`before_model_request`, `wrap_model_request`, `get_wrapper_toolset` and `handle_deferred_tool_calls` hooks;
`CombinedCapability`, `HandleDeferredToolCalls`, `PrepareTools`, `PrepareOutputTools`, `IncludeToolReturnSchemas`,
`NativeTool`, `ProcessHistory`, `Instrumentation` and `ToolSearch`.
"""

from .abstract import (
    AbstractCapability,
    AgentCapability,
    CapabilityFunc,
    ModelRequestContext,
    WrapModelRequestHandler,
    WrapRunHandler,
)
from .combined import CombinedCapability
from .deferred_tool_handler import HandleDeferredToolCalls
from .include_return_schemas import IncludeToolReturnSchemas
from .instrumentation import Instrumentation
from .native_tool import NativeTool
from .prepare_tools import PrepareOutputTools, PrepareTools
from .process_history import HistoryProcessor, HistoryProcessorFunc, ProcessHistory
from .tool_search import (
    ToolSearch,
    ToolSearchFunc,
    ToolSearchLocalStrategy,
    ToolSearchNativeStrategy,
    ToolSearchStrategy,
)

__all__ = (
    'AbstractCapability',
    'AgentCapability',
    'CapabilityFunc',
    'CombinedCapability',
    'HandleDeferredToolCalls',
    'HistoryProcessor',
    'HistoryProcessorFunc',
    'IncludeToolReturnSchemas',
    'Instrumentation',
    'ModelRequestContext',
    'NativeTool',
    'PrepareOutputTools',
    'PrepareTools',
    'ProcessHistory',
    'ToolSearch',
    'ToolSearchFunc',
    'ToolSearchLocalStrategy',
    'ToolSearchNativeStrategy',
    'ToolSearchStrategy',
    'WrapModelRequestHandler',
    'WrapRunHandler',
)
