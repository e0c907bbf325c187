"""`Instrumentation`: trace an agent's runs with the given settings (`Agent(capabilities=[Instrumentation()])`)."""

from __future__ import annotations as _annotations

from dataclasses import dataclass, field
from typing import Any

from ..models.instrumented import InstrumentationSettings
from .abstract import AbstractCapability

__all__ = ('Instrumentation',)


@dataclass
class Instrumentation(AbstractCapability[Any]):
    """Trace the agent's runs (agent run, model request and tool call spans, through logfire)."""

    settings: InstrumentationSettings = field(default_factory=InstrumentationSettings)
    """The tracing options."""

    @classmethod
    def from_spec(cls, **kwargs: Any) -> Instrumentation:
        """The capability from a spec's `InstrumentationSettings` arguments (`include_content`, `version`, ...);
        the OpenTelemetry providers, which a spec cannot hold, stay the global ones."""
        return cls(settings=InstrumentationSettings(**kwargs))
