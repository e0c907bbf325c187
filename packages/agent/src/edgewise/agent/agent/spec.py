"""Agent specs: an agent described as data (a dict, JSON or YAML file) for `Agent.from_spec`, `Agent.from_file`
and the `spec=` argument of `run`, `iter` and `override`; the module where pydantic-ai 1.107 keeps them."""

from ._from_spec import (
    DEFAULT_SCHEMA_PATH_TEMPLATE,
    LEGACY_CAPABILITY_NAMES,
    AgentSpec,
    CapabilitySpec,
    CapabilitySpecContext,
    capability_spec_context,
    get_capability_registry,
    load_capability_from_nested_spec,
)
from ._from_spec import _infer_fmt as _infer_fmt  # pydantic-ai's tests import it from here

__all__ = (
    'AgentSpec',
    'CapabilitySpec',
    'CapabilitySpecContext',
    'DEFAULT_SCHEMA_PATH_TEMPLATE',
    'LEGACY_CAPABILITY_NAMES',
    'capability_spec_context',
    'get_capability_registry',
    'load_capability_from_nested_spec',
)
