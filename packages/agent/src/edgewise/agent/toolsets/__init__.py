"""Toolsets: where an agent's tools come from (functions, other toolsets, MCP servers, the outside world)."""

from .abstract import AbstractToolset, ToolsetTool
from .approval_required import ApprovalRequiredToolset
from .combined import CombinedToolset
from .external import ExternalToolset
from .filtered import FilteredToolset
from .function import FunctionToolset
from .prefixed import PrefixedToolset
from .prepared import PreparedToolset
from .renamed import RenamedToolset
from .wrapper import WrapperToolset

__all__ = (
    'AbstractToolset',
    'ApprovalRequiredToolset',
    'CombinedToolset',
    'ExternalToolset',
    'FilteredToolset',
    'FunctionToolset',
    'PrefixedToolset',
    'PreparedToolset',
    'RenamedToolset',
    'ToolsetTool',
    'WrapperToolset',
)
