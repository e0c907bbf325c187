"""`InstrumentationSettings`: how agent runs are traced (`Agent(instrument=...)`, `Agent.instrument_all(...)`).

Public in `edgewise.agent.models.instrumented`; here, below `Model`, so that models can read it without an import
cycle through `InstrumentedModel`.

Edgewise makes its spans (agent run, model request, tool call) through logfire-api, so they go wherever logfire
is configured to send them; when logfire is not installed no span is made and none of this costs anything. A model
request span that records (logfire is configured) carries the messages sent and received in the OpenTelemetry GenAI
form (`gen_ai.input.messages`, `gen_ai.output.messages`, `gen_ai.system_instructions`), as `messages_to_otel_messages`
writes them.
"""

from __future__ import annotations as _annotations

import itertools
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from .._messages.model_messages import (
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    RetryPromptPart,
    SystemPromptPart,
    ToolAvailabilityDeltaPart,
)
from .._messages.tool_parts import BaseToolReturnPart

if TYPE_CHECKING:
    from .._messages.otel import OtelChatMessage, OtelMessagePart, OtelRole
    from ..usage import RunUsage

__all__ = ('InstrumentationSettings', 'DEFAULT_INSTRUMENTATION_VERSION', 'record_model_request')

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
                deprecated (a `DeprecationWarning` names `version=5`); before 4, files are written as `image-url`
                and `binary` parts rather than `uri` and `blob`; before 5, a deferred tool call is an error on its
                span. 6 is 5 with tool results (and retry prompts of tool calls) in `role='tool'` messages of their
                own rather than in `role='user'` ones.
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

    def messages_to_otel_messages(self, messages: Sequence[ModelMessage]) -> list[OtelChatMessage]:
        """Messages in the OpenTelemetry GenAI form, as a model request span records them.

        A request becomes one message per run of parts of one role: system prompts (and tool availability notes)
        `system`, the rest `user`, except that from format 6 on tool returns and the retry prompts of tool calls
        are `tool` messages. A response becomes an `assistant` message with its `finish_reason`. What the parts
        hold is written as `include_content` and `include_binary_content` allow.
        """
        from .._messages.otel import OtelChatMessage, OtelOutputMessage  # (loaded by the first traced run)

        result: list[OtelChatMessage] = []
        for message in messages:
            if isinstance(message, ModelRequest):
                for role, parts in itertools.groupby(message.parts, key=self._role):
                    otel_parts: list[OtelMessagePart] = []
                    for part in parts:
                        otel_parts.extend(part.otel_message_parts(self))
                    result.append(OtelChatMessage(role=role, parts=otel_parts))
            else:
                output = OtelOutputMessage(role='assistant', parts=message.otel_message_parts(self))
                if message.finish_reason is not None:
                    output['finish_reason'] = message.finish_reason
                result.append(output)
        return result

    def _role(self, part: ModelRequestPart) -> OtelRole:
        if isinstance(part, SystemPromptPart | ToolAvailabilityDeltaPart):
            return 'system'
        if self.version >= 6 and (
            isinstance(part, BaseToolReturnPart) or (isinstance(part, RetryPromptPart) and part.tool_name is not None)
        ):
            return 'tool'
        return 'user'

    def system_instructions_attributes(self, instructions: str | None) -> dict[str, Any]:
        """`gen_ai.system_instructions`: a request's instructions as a text part, when there are some and content
        may be recorded."""
        if instructions and self.include_content:
            return {'gen_ai.system_instructions': [{'type': 'text', 'content': instructions}]}
        return {}

    def model_request_attributes(self, messages: Sequence[ModelMessage], response: ModelResponse) -> dict[str, Any]:
        """The attributes a model request span gets once answered: the messages sent (`gen_ai.input.messages`),
        the response (`gen_ai.output.messages`) and the last request's instructions."""
        last_request = next((m for m in reversed(messages) if isinstance(m, ModelRequest)), None)
        return {
            'gen_ai.input.messages': self.messages_to_otel_messages(messages),
            'gen_ai.output.messages': self.messages_to_otel_messages([response]),
            **self.system_instructions_attributes(last_request.instructions if last_request else None),
        }


def record_model_request(
    span: Any, settings: InstrumentationSettings, sent: Sequence[ModelMessage], response: ModelResponse
) -> None:
    """Put the messages of a model request on its `chat` span, in the form of `settings`, when the span records
    (logfire is configured): serializing them costs nothing otherwise. Used by the agent loop and `InstrumentedModel`
    alike."""
    if span is not None and span.is_recording():
        span.set_attributes(settings.model_request_attributes(sent, response))
