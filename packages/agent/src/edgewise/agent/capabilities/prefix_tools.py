"""`PrefixTools`: another capability whose tools' names get a prefix (`PrefixTools(Toolset(ts), prefix='ns')`)."""

from __future__ import annotations as _annotations

import sys
from dataclasses import dataclass
from typing import Any

from .._spec import CapabilitySpec, capability_spec_context, load_from_registry
from ..tools import AgentDepsT
from ..toolsets import AbstractToolset, PrefixedToolset, ToolsetFunc
from ..toolsets._dynamic import as_toolset
from .abstract import AbstractCapability
from .wrapper import WrapperCapability

__all__ = ('PrefixTools',)


@dataclass
class PrefixTools(WrapperCapability[AgentDepsT]):
    """The wrapped capability, its tools named `<prefix>_<name>` (the model calls them by those names; the tools
    are called by their own). The agent's other tools keep their names; every other hook is the wrapped
    capability's."""

    prefix: str
    """What goes before each tool name, joined with `_` (`'mcp'` makes `search` `mcp_search`)."""

    @classmethod
    def get_serialization_name(cls) -> str | None:
        """`'PrefixTools'`."""
        return 'PrefixTools'

    @classmethod
    def from_spec(cls, *, prefix: str, capability: CapabilitySpec | dict[str, Any] | str) -> PrefixTools[Any]:
        """The capability from an agent spec: `{'PrefixTools': {'prefix': 'web', 'capability': {'WebSearch': {}}}}`;
        `capability` is a capability spec as the agent spec's `capabilities` entries are (a custom capability of the
        spec being loaded too)."""
        return cls(wrapped=_load_nested(capability), prefix=prefix)

    def get_toolset(self) -> AbstractToolset[AgentDepsT] | ToolsetFunc[AgentDepsT] | None:
        """The wrapped capability's toolset with its tool names prefixed; `None` if it has none."""
        toolset = self.wrapped.get_toolset()
        if toolset is None:
            return None
        return PrefixedToolset(as_toolset(toolset), prefix=self.prefix)


def _load_nested(spec: CapabilitySpec | dict[str, Any] | str) -> AbstractCapability[Any]:
    """The capability `spec` names, from the registry of the agent spec being loaded, else the default one."""
    nested = spec if isinstance(spec, CapabilitySpec) else CapabilitySpec.model_validate(spec)
    context = capability_spec_context.get()
    if context is not None:
        registry, instantiate = context.registry, context.instantiate
    else:
        # The default registry is built in this package's `__init__`, which imports this module: read it there at
        # call time (it is always loaded before its submodules), as `models._model` reads `ALLOW_MODEL_REQUESTS`.
        registry = sys.modules[__package__ or ''].CAPABILITY_TYPES
        instantiate = _from_spec
    built: AbstractCapability[Any] = load_from_registry(
        registry, nested, label='capability', custom_types_param='custom_capability_types', instantiate=instantiate
    )
    return built


def _from_spec(cls: type[AbstractCapability[Any]], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    return cls.from_spec(*args, **kwargs)
