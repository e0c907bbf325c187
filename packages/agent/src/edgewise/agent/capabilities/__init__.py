"""Capabilities: pieces of agent behaviour given with `Agent(capabilities=[...])` (or per run).

Edgewise implements pydantic-ai 1.107's capability hooks: `AbstractCapability` with its `get_*` methods, its
`prepare_tools`/`prepare_output_tools` hooks, the lifecycle hooks of the run, of each node, model request, tool
call (validation and execution) and output (validation and processing), `wrap_run_event_stream`,
`handle_deferred_tool_calls`, `get_ordering`, `for_run` and `apply`; `CombinedCapability`, `Hooks`,
`HandleDeferredToolCalls`, `PrepareTools`, `PrepareOutputTools`, `IncludeToolReturnSchemas`, `NativeTool`,
`ProcessHistory`, `Instrumentation`, `ToolSearch`, `Capability`, `DynamicCapability`, `WrapperCapability` and
`ProcessEventStream`; the provider-adaptive tools `NativeOrLocalTool`, `WebSearch`, `WebFetch`, `ImageGeneration`
and `XSearch`; `Thinking`; `Toolset`, `SetToolMetadata`, `ReinjectSystemPrompt`, `UseThreadExecutor`, `MCP` and
`PrefixTools`; and pydantic-ai 2.x's `RaiseContentFilterError`, the model hooks (`get_model`,
`resolve_model_id`) with `SelectModel` and `ResolveModelId`; and pydantic-ai 2.68's `Citations`, event listeners
(`on_event`), `ModelFallback`, `RequestInput`, `Caching`, `FileUnderstanding`, `durable_operation`,
`MCPAuthorizationTokenFunc` and `BatchModelRequests`.

The hooks are listed once, in the table of `_hook_table` (name, kind of folding, group): `CombinedCapability`,
`Hooks`, `WrapperCapability` and the run's checks of which hooks to take all derive from it.

`CAPABILITY_TYPES` maps the names agent specs may use (`capabilities: [{ToolSearch: {max_results: 5}}]`) to the
capabilities that can be built from data.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

from ..exceptions import HookTimeoutError
from ..output import OutputContext
from ._dynamic import DynamicCapability
from ._on_event import on_event
from .abstract import (
    AbstractCapability,
    AgentCapability,
    AgentModel,
    AgentNode,
    CapabilityFunc,
    CapabilityOrdering,
    CapabilityPosition,
    CapabilityRef,
    ModelRequestContext,
    ModelSelection,
    ModelSelector,
    NodeResult,
    RawOutput,
    RawToolArgs,
    ValidatedToolArgs,
    WrapModelRequestHandler,
    WrapNodeRunHandler,
    WrapOutputProcessHandler,
    WrapOutputValidateHandler,
    WrapRunHandler,
    WrapToolExecuteHandler,
    WrapToolValidateHandler,
)
from .capability import Capability, CapabilityDescription
from .combined import CombinedCapability
from .durability import EdgewiseDurability
from .durable_operation import durable_operation  # eager: the function, not its module, is the package's attribute
from .instrumentation import Instrumentation
from .thread_executor import UseThreadExecutor, renamed_thread_executor
from .tool_search import (
    ToolSearch,
    ToolSearchFunc,
    ToolSearchLocalStrategy,
    ToolSearchNativeStrategy,
    ToolSearchStrategy,
)
from .wrapper import WrapperCapability

# The ready-made capabilities that the agent itself never uses are imported on first use (`capabilities.WebSearch`,
# `from edgewise.agent.capabilities import WebSearch`, `CAPABILITY_TYPES`), so that importing the agent stays cheap.
_LAZY: dict[str, str] = {
    'BatchModelRequests': 'batch_model_requests',
    'Caching': 'caching',
    'Citations': 'citations',
    'FileUnderstanding': 'file_understanding',
    'HandleDeferredToolCalls': 'deferred_tool_handler',
    'HistoryProcessor': 'process_history',
    'HistoryProcessorFunc': 'process_history',
    'HookRegistration': 'hooks',
    'Hooks': 'hooks',
    'IncludeToolReturnSchemas': 'include_return_schemas',
    'LocalWorkspace': 'local_workspace',
    'NativeTool': 'native_tool',
    'PrepareOutputTools': 'prepare_tools',
    'PrepareTools': 'prepare_tools',
    'ProcessEventStream': 'process_event_stream',
    'ProcessHistory': 'process_history',
    'ImageGeneration': 'image_generation',
    'MCP': 'mcp',
    'MCPAuthorizationTokenFunc': 'mcp',
    'ModelFallback': 'model_fallback',
    'ModelIdResolver': 'resolve_model_id',
    'NativeOrLocalTool': 'native_or_local',
    'PrefixTools': 'prefix_tools',
    'RaiseContentFilterError': 'content_filter',
    'RequestInput': 'request_input',
    'ResolveModelId': 'resolve_model_id',
    'SelectModel': 'select_model',
    'ReinjectSystemPrompt': 'reinject_system_prompt',
    'SetToolMetadata': 'set_tool_metadata',
    'Thinking': 'thinking',
    'Toolset': 'toolset',
    'WebFetch': 'web_fetch',
    'WebSearch': 'web_search',
    'XSearch': 'x_search',
}

# The capabilities an agent spec can name, in the order their names are looked up.
_SPEC_TYPES: tuple[str, ...] = (
    'NativeTool',
    'BatchModelRequests',
    'Caching',
    'FileUnderstanding',
    'RaiseContentFilterError',
    'IncludeToolReturnSchemas',
    'Instrumentation',
    'LocalWorkspace',
    'ToolSearch',
    # provider-adaptive tools and thinking
    'Citations',
    'ImageGeneration',
    'Thinking',
    'WebFetch',
    'WebSearch',
    'XSearch',
    'ReinjectSystemPrompt',
    'ResolveModelId',
    'SelectModel',
    'SetToolMetadata',
    'UseThreadExecutor',
    'Toolset',
    'MCP',
    'PrefixTools',
    'ModelFallback',
)


def _capability_types() -> dict[str, type[AbstractCapability[Any]]]:
    types: dict[str, type[AbstractCapability[Any]]] = {}
    for attribute in _SPEC_TYPES:
        cls: type[AbstractCapability[Any]] = __getattr__(attribute) if attribute in _LAZY else globals()[attribute]
        if (name := cls.get_serialization_name()) is not None:
            types[name] = cls
    return types


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(import_module(f'{__name__}.{_LAZY[name]}'), name)
    elif name == 'CAPABILITY_TYPES':
        value = _capability_types()
    elif name == 'ThreadExecutor':  # the name before pydantic-ai 2.x: warns at every use, so not cached
        return renamed_thread_executor()
    else:
        raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY, 'CAPABILITY_TYPES'})


if TYPE_CHECKING:
    from .batch_model_requests import BatchModelRequests
    from .caching import Caching
    from .citations import Citations
    from .content_filter import RaiseContentFilterError
    from .deferred_tool_handler import HandleDeferredToolCalls
    from .file_understanding import FileUnderstanding
    from .hooks import HookRegistration, Hooks
    from .image_generation import ImageGeneration
    from .include_return_schemas import IncludeToolReturnSchemas
    from .local_workspace import LocalWorkspace
    from .mcp import MCP, MCPAuthorizationTokenFunc
    from .model_fallback import ModelFallback
    from .native_or_local import NativeOrLocalTool
    from .native_tool import NativeTool
    from .prefix_tools import PrefixTools
    from .prepare_tools import PrepareOutputTools, PrepareTools
    from .process_event_stream import ProcessEventStream
    from .process_history import HistoryProcessor, HistoryProcessorFunc, ProcessHistory
    from .reinject_system_prompt import ReinjectSystemPrompt
    from .request_input import RequestInput
    from .resolve_model_id import ModelIdResolver, ResolveModelId
    from .select_model import SelectModel
    from .set_tool_metadata import SetToolMetadata
    from .thinking import Thinking
    from .toolset import Toolset
    from .web_fetch import WebFetch
    from .web_search import WebSearch
    from .x_search import XSearch

    CAPABILITY_TYPES: dict[str, type[AbstractCapability[Any]]]
    """The capabilities an agent spec can name, by name (custom ones are given with `custom_capability_types=`)."""

__all__ = (
    'CAPABILITY_TYPES',
    'AbstractCapability',
    'AgentCapability',
    'AgentModel',
    'AgentNode',
    'BatchModelRequests',
    'Capability',
    'CapabilityDescription',
    'Citations',
    'CapabilityFunc',
    'CapabilityOrdering',
    'CapabilityPosition',
    'CapabilityRef',
    'Caching',
    'CombinedCapability',
    'DynamicCapability',
    'FileUnderstanding',
    'HandleDeferredToolCalls',
    'HistoryProcessor',
    'HistoryProcessorFunc',
    'HookRegistration',
    'HookTimeoutError',
    'Hooks',
    'ImageGeneration',
    'IncludeToolReturnSchemas',
    'Instrumentation',
    'LocalWorkspace',
    'MCP',
    'MCPAuthorizationTokenFunc',
    'ModelFallback',
    'ModelIdResolver',
    'ModelRequestContext',
    'ModelSelection',
    'ModelSelector',
    'NativeOrLocalTool',
    'NativeTool',
    'NodeResult',
    'OutputContext',
    'PrefixTools',
    'PrepareOutputTools',
    'PrepareTools',
    'ProcessEventStream',
    'ProcessHistory',
    'RaiseContentFilterError',
    'RawOutput',
    'RawToolArgs',
    'Thinking',
    'ReinjectSystemPrompt',
    'RequestInput',
    'ResolveModelId',
    'SelectModel',
    'SetToolMetadata',
    'UseThreadExecutor',
    'EdgewiseDurability',
    'ToolSearch',
    'ToolSearchFunc',
    'ToolSearchLocalStrategy',
    'ToolSearchNativeStrategy',
    'ToolSearchStrategy',
    'Toolset',
    'ValidatedToolArgs',
    'WebFetch',
    'WebSearch',
    'WrapModelRequestHandler',
    'WrapNodeRunHandler',
    'WrapOutputProcessHandler',
    'WrapOutputValidateHandler',
    'WrapRunHandler',
    'WrapToolExecuteHandler',
    'WrapToolValidateHandler',
    'XSearch',
    'WrapperCapability',
    'durable_operation',
    'on_event',
)
