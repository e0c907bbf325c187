"""`InstrumentationSettings`: how agent runs are traced (`Agent(instrument=...)`, `Agent.instrument_all(...)`).

Edgewise makes its spans (agent run, model request, tool call) through logfire-api, so they go wherever logfire
is configured to send them; when logfire is not installed no span is made and none of this costs anything.
"""

from __future__ import annotations as _annotations

import warnings
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from ..usage import RunUsage

__all__ = ('InstrumentationSettings', 'DEFAULT_INSTRUMENTATION_VERSION')

DEFAULT_INSTRUMENTATION_VERSION: Literal[5] = 5
"""The span format used when none is given (pydantic-ai 2.x's default)."""


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
        version: Literal[1, 2, 3, 4, 5, 6] = DEFAULT_INSTRUMENTATION_VERSION,
        event_mode: Literal['attributes', 'logs'] = 'attributes',
        logger_provider: Any = None,
        use_aggregated_usage_attribute_names: bool = True,
    ) -> None:
        """Set the options.

        Args:
            tracer_provider: Accepted for compatibility (spans go through logfire).
            meter_provider: Accepted for compatibility.
            include_binary_content: Whether binary content may be recorded on spans.
            include_content: Whether prompts, outputs and tool arguments may be recorded on spans.
            version: The version of the span format, 5 by default (as pydantic-ai 2.x). Versions 1 to 4 are
                deprecated (a `DeprecationWarning` names `version=5`); 6 is 5 with tool results in `role='tool'`
                messages.
            event_mode: Accepted for compatibility.
            logger_provider: Accepted for compatibility.
            use_aggregated_usage_attribute_names: Whether the run's total usage is given as
                `gen_ai.aggregated_usage.*` (the default) instead of `gen_ai.usage.*`, so that backends summing
                span attributes do not count it twice beside the requests' own usage.

        Raises:
            ValueError: `version` is not one of 1 to 6.
        """
        if version not in (1, 2, 3, 4, 5, 6):
            raise ValueError(f'Instrumentation version must be one of 1 to 6, not {version!r}.')
        if version < 5:
            warnings.warn(
                f'Instrumentation format version {version} is deprecated; use `version=5` instead.',
                DeprecationWarning,
                stacklevel=2,
            )
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

    def aggregated_usage_attributes(self, usage: RunUsage) -> dict[str, int]:
        """The run's total usage as span attributes: `gen_ai.usage.*` renamed to `gen_ai.aggregated_usage.*`
        unless `use_aggregated_usage_attribute_names` is off."""
        attributes = usage.opentelemetry_attributes()
        if not self.use_aggregated_usage_attribute_names:
            return attributes
        return {key.replace('gen_ai.usage.', 'gen_ai.aggregated_usage.', 1): value for key, value in attributes.items()}
