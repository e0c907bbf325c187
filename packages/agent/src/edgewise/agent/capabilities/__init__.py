"""Capabilities: pieces of agent behaviour given with `Agent(capabilities=[...])` (or per run).

Edgewise implements the core of pydantic-ai 1.107's capabilities: `AbstractCapability` with its
`get_instructions`, `get_model_settings` and `before_model_request` hooks, `ProcessHistory` and `Instrumentation`.
"""

from .abstract import AbstractCapability, AgentCapability, CapabilityFunc, ModelRequestContext
from .instrumentation import Instrumentation
from .process_history import HistoryProcessor, HistoryProcessorFunc, ProcessHistory

__all__ = (
    'AbstractCapability',
    'AgentCapability',
    'CapabilityFunc',
    'HistoryProcessor',
    'HistoryProcessorFunc',
    'Instrumentation',
    'ModelRequestContext',
    'ProcessHistory',
)
