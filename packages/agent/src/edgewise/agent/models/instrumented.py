"""`InstrumentationSettings`: how agent runs are traced (`Agent(instrument=...)`, `Agent.instrument_all(...)`).

Edgewise makes its spans (agent run, model request, tool call) through logfire-api, so they go wherever logfire
is configured to send them; when logfire is not installed no span is made and none of this costs anything.
"""

from __future__ import annotations as _annotations

from typing import Any, Literal

__all__ = ('InstrumentationSettings',)


class InstrumentationSettings:
    """Options of agent tracing.

    The OpenTelemetry providers are accepted for compatibility with pydantic-ai; Edgewise's spans go through
    logfire (`logfire.configure()` chooses where they are sent).
    """

    def __init__(
        self,
        *,
        tracer_provider: Any = None,
        meter_provider: Any = None,
        include_binary_content: bool = True,
        include_content: bool = True,
        version: Literal[1, 2, 3, 4, 5] = 2,
        event_mode: Literal['attributes', 'logs'] = 'attributes',
        logger_provider: Any = None,
        use_aggregated_usage_attribute_names: bool = False,
    ) -> None:
        """Set the options.

        Args:
            tracer_provider: Accepted for compatibility (spans go through logfire).
            meter_provider: Accepted for compatibility.
            include_binary_content: Whether binary content may be recorded on spans.
            include_content: Whether prompts, outputs and tool arguments may be recorded on spans.
            version: The version of the span format.
            event_mode: Accepted for compatibility.
            logger_provider: Accepted for compatibility.
            use_aggregated_usage_attribute_names: Accepted for compatibility.
        """
        self.tracer_provider = tracer_provider
        self.meter_provider = meter_provider
        self.include_binary_content = include_binary_content
        self.include_content = include_content
        self.version = version
        self.event_mode = event_mode
        self.logger_provider = logger_provider
        self.use_aggregated_usage_attribute_names = use_aggregated_usage_attribute_names

    def __repr__(self) -> str:
        return f'InstrumentationSettings(include_content={self.include_content!r}, version={self.version!r})'
