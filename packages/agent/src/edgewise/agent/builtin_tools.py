"""The pre-1.107 home of the native tool classes: `from edgewise.agent.builtin_tools import WebSearchTool` still
works, with a `DeprecationWarning` pointing at `edgewise.agent.native_tools` (and at the new name of the renamed
`AbstractBuiltinTool` and `BUILTIN_TOOL_*` constants), as in pydantic-ai 1.107."""

from __future__ import annotations as _annotations

import warnings
from typing import TYPE_CHECKING, Any

from ._warnings import PydanticAIDeprecationWarning

if TYPE_CHECKING:
    from .native_tools import (
        DEPRECATED_NATIVE_TOOLS as DEPRECATED_BUILTIN_TOOLS,
    )
    from .native_tools import (
        NATIVE_TOOL_TYPES as BUILTIN_TOOL_TYPES,
    )
    from .native_tools import (
        NATIVE_TOOLS_REQUIRING_CONFIG as BUILTIN_TOOLS_REQUIRING_CONFIG,
    )
    from .native_tools import (
        SUPPORTED_NATIVE_TOOLS as SUPPORTED_BUILTIN_TOOLS,
    )
    from .native_tools import (
        AbstractNativeTool as AbstractBuiltinTool,
    )
    from .native_tools import (
        CodeExecutionTool,
        FileSearchTool,
        ImageAspectRatio,
        ImageGenerationModelName,
        ImageGenerationTool,
        MCPServerTool,
        MemoryTool,
        UrlContextTool,  # pyright: ignore[reportDeprecated]
        WebFetchTool,
        WebSearchTool,
        WebSearchUserLocation,
        XSearchTool,
    )

__all__ = (
    'AbstractBuiltinTool',
    'WebSearchTool',
    'WebSearchUserLocation',
    'XSearchTool',
    'CodeExecutionTool',
    'WebFetchTool',
    'UrlContextTool',
    'ImageGenerationModelName',
    'ImageGenerationTool',
    'ImageAspectRatio',
    'MemoryTool',
    'MCPServerTool',
    'FileSearchTool',
    'BUILTIN_TOOL_TYPES',
    'DEPRECATED_BUILTIN_TOOLS',
    'SUPPORTED_BUILTIN_TOOLS',
    'BUILTIN_TOOLS_REQUIRING_CONFIG',
)

_NEW_NAMES = {
    'AbstractBuiltinTool': 'AbstractNativeTool',
    'BUILTIN_TOOL_TYPES': 'NATIVE_TOOL_TYPES',
    'DEPRECATED_BUILTIN_TOOLS': 'DEPRECATED_NATIVE_TOOLS',
    'SUPPORTED_BUILTIN_TOOLS': 'SUPPORTED_NATIVE_TOOLS',
    'BUILTIN_TOOLS_REQUIRING_CONFIG': 'NATIVE_TOOLS_REQUIRING_CONFIG',
}


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
    from . import native_tools

    new_name = _NEW_NAMES.get(name)
    if new_name is not None:
        message = (
            f'`edgewise.agent.builtin_tools.{name}` is deprecated, '
            f'use `edgewise.agent.native_tools.{new_name}` instead.'
        )
    else:
        new_name = name
        message = (
            f'Importing `{name}` from `edgewise.agent.builtin_tools` is deprecated, '
            'import it from `edgewise.agent.native_tools` instead.'
        )
    warnings.warn(message, PydanticAIDeprecationWarning, stacklevel=2)
    return getattr(native_tools, new_name)
