"""Toolsets: where an agent's tools come from (functions, other toolsets, MCP servers, the outside world)."""

from importlib import import_module
from typing import TYPE_CHECKING, Any, TypeAlias

from ..models._model import AgentDepsT
from ._dynamic import DynamicToolset, ToolsetFunc
from .abstract import AbstractToolset, ToolsetTool
from .combined import CombinedToolset
from .function import FunctionToolset
from .wrapper import WrapperToolset

AgentToolset: TypeAlias = AbstractToolset[AgentDepsT] | ToolsetFunc[AgentDepsT]
"""What `Agent(toolsets=...)` takes: a toolset, or a function of the run context that builds one."""

# The wrappers a plain agent run never uses are imported on first use (`from edgewise.agent.toolsets import
# FilteredToolset`), so that importing the agent stays cheap.
_LAZY: dict[str, str] = {
    'ApprovalRequiredToolset': 'approval_required',
    'DeferredLoadingToolset': 'deferred_loading',
    'DeferredToolset': 'external',
    'ExternalToolset': 'external',
    'FilteredToolset': 'filtered',
    'IncludeReturnSchemasToolset': 'include_return_schemas',
    'PrefixedToolset': 'prefixed',
    'PreparedToolset': 'prepared',
    'RenamedToolset': 'renamed',
    'SetMetadataToolset': 'set_metadata',
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
    value = getattr(import_module(f'{__name__}.{_LAZY[name]}'), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


if TYPE_CHECKING:
    from .approval_required import ApprovalRequiredToolset
    from .deferred_loading import DeferredLoadingToolset
    from .external import DeferredToolset, ExternalToolset  # pyright: ignore[reportDeprecated]
    from .filtered import FilteredToolset
    from .include_return_schemas import IncludeReturnSchemasToolset
    from .prefixed import PrefixedToolset
    from .prepared import PreparedToolset
    from .renamed import RenamedToolset
    from .set_metadata import SetMetadataToolset

__all__ = (
    'AbstractToolset',
    'AgentToolset',
    'ApprovalRequiredToolset',
    'CombinedToolset',
    'DeferredLoadingToolset',
    'DeferredToolset',
    'DynamicToolset',
    'ExternalToolset',
    'FilteredToolset',
    'FunctionToolset',
    'IncludeReturnSchemasToolset',
    'PrefixedToolset',
    'PreparedToolset',
    'RenamedToolset',
    'SetMetadataToolset',
    'ToolsetFunc',
    'ToolsetTool',
    'WrapperToolset',
)
