"""pydantic-ai 2.68's retry records: `RetryInfo` (why a retry happened, and how far into its budget), and
`RetryFeedbackPart`, the application's feedback on a response it could not use, which answers no tool call.

The stored part is model-neutral: `Model.prepare_messages` turns it into the prompt part its cause calls for
(`as_prompt_part`). Feedback that can quote the model's own words (validation errors, a `ModelRetry` message) is sent
in the user voice, fenced behind a line saying the application speaks; only the agent's own fixed `'no_output'` text
is sent in the system voice.
"""

from __future__ import annotations as _annotations

from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeAlias

import pydantic_core
from typing_extensions import TypeVar

from .framing import RETRY_FEEDBACK_TAG, VALIDATION_ERRORS_TAG, frame
from .tool_parts import _now_utc

if TYPE_CHECKING:
    from .otel import OtelMessagePart, TraceContentOptions

__all__ = (
    'ToolRetryCause',
    'RetryFeedbackCause',
    'RetryInfo',
    'RetryFeedbackPart',
    'RETRY_FEEDBACK_FRAMING',
    'no_output_feedback_text',
    'user_voice_feedback',
)

ToolRetryCause: TypeAlias = Literal['validation_error', 'model_retry', 'unknown_tool', 'unavailable_tool']
"""Why a tool call has to be made again: its arguments (or an output tool's result) failed validation, the tool (or a
hook) raised `ModelRetry`, the tool is unknown, or it cannot be called at this step."""

RetryFeedbackCause: TypeAlias = Literal['validation_error', 'no_output', 'model_retry']
"""Why a response could not be used: its output failed validation, it held nothing that could be the output, or an
output validator, output function or model hook raised `ModelRetry`."""

RetryCauseT_co = TypeVar(
    'RetryCauseT_co', bound=str, covariant=True, default=Literal[ToolRetryCause, RetryFeedbackCause]
)
"""The cause a `RetryInfo` records."""

RETRY_FEEDBACK_FRAMING = (
    "Your previous response failed the application's validation (this is automated feedback, not a message from "
    'the user):'
)
"""The line before feedback sent in the user voice: it says the application speaks, not the person (pydantic-ai's
wording, which a model reading either library's histories sees the same)."""

_NO_OUTPUT_ALTERNATIVES: tuple[tuple[str, ...], ...] = (
    ('return text',),
    ('include your response in a tool call', 'call a tool'),
    ('return an image',),
)
"""What the agent can ask for instead of a response with nothing usable, in the order it names them."""


def no_output_feedback_text(alternatives: Sequence[str]) -> str:
    """The agent's fixed `'no_output'` feedback asking for one of `alternatives`."""
    return f'Please {" or ".join(alternatives)}.'


def _all_no_output_texts() -> frozenset[str]:
    texts: set[str] = set()
    choices: list[tuple[str, ...]] = [()]
    for slot in _NO_OUTPUT_ALTERNATIVES:
        choices = [*choices, *((*chosen, option) for chosen in choices for option in slot)]
    for chosen in choices:
        texts.add(no_output_feedback_text(chosen))
    return frozenset(texts)


_NO_OUTPUT_TEXTS = _all_no_output_texts()
"""Every text the agent writes as `'no_output'` feedback: the only feedback sent in the system voice."""


def _feedback_text(part: RetryFeedbackPart) -> str:
    """The feedback's content as text: a message as it is, validation errors as JSON (without their `ctx`)."""
    if isinstance(part.content, str):
        return part.content
    errors: list[dict[str, Any]] = [{k: v for k, v in e.items() if k != 'ctx'} for e in part.content]
    return pydantic_core.to_json(errors).decode()


def user_voice_feedback(part: RetryFeedbackPart) -> str:
    """`part`'s feedback as it is sent in the user voice: `RETRY_FEEDBACK_FRAMING`, then the content fenced in
    `<pyai:validation_errors>` (validation errors) or `<pyai:retry_feedback>` (any other cause)."""
    tag = VALIDATION_ERRORS_TAG if part.retry.cause == 'validation_error' else RETRY_FEEDBACK_TAG
    fenced = frame(tag, '\n' + _feedback_text(part) + '\n')
    return f'{RETRY_FEEDBACK_FRAMING}\n{fenced}'


@dataclass(frozen=True, repr=False)
class RetryInfo(Generic[RetryCauseT_co]):
    """Why a retry happened and which retry it is, on a `RetryFeedbackPart` (`retry`). For the application only:
    never sent to the model."""

    cause: RetryCauseT_co
    """What made the retry necessary."""
    _: KW_ONLY
    attempt: int | None = None
    """Which retry this is, from 1, on the counter `max_retries` limits; `None` when the retry is not charged to a
    budget or its producer cannot know (a part built by hand, or loaded from a `RetryPromptPart`)."""
    max_retries: int | None = None
    """The limit `attempt` was checked against; `None` whenever `attempt` is."""

    def __repr__(self) -> str:
        shown = [f'cause={self.cause!r}']
        shown.extend(f'{name}={value!r}' for name in ('attempt', 'max_retries') if (value := getattr(self, name)))
        return f'RetryInfo({", ".join(shown)})'


@dataclass(repr=False)
class RetryFeedbackPart:
    """The application's feedback on a response it could not use as a whole (its output failed validation, a
    `ModelRetry` rejected it, or it held no output); a tool call to make again is answered by its own part instead.
    """

    content: list[pydantic_core.ErrorDetails] | str
    """The validation errors, or the text of the feedback (a `ModelRetry` message, the agent's `'no_output'` text)."""
    _: KW_ONLY
    retry: RetryInfo[RetryFeedbackCause]
    """Why the response could not be used (which decides the voice the model is sent it in), and which output retry
    this is."""
    timestamp: datetime = field(default_factory=_now_utc)
    """When the retry was decided."""
    part_kind: Literal['retry-feedback'] = 'retry-feedback'
    """Tag of this part kind in serialized messages."""

    @property
    def speaks_for_the_application(self) -> bool:
        """Whether the model is sent it in the system voice: only the agent's own fixed `'no_output'` texts are (the
        cause alone is a claim any code can make, so other content is fenced in the user voice)."""
        return self.retry.cause == 'no_output' and isinstance(self.content, str) and self.content in _NO_OUTPUT_TEXTS

    def model_response(self) -> str:
        """The text the model is sent: the agent's `'no_output'` text as it is, else the content (errors as JSON)
        fenced in `<pyai:validation_errors>` or `<pyai:retry_feedback>` behind `RETRY_FEEDBACK_FRAMING`."""
        if self.speaks_for_the_application:
            return _feedback_text(self)
        return user_voice_feedback(self)

    def otel_message_parts(self, settings: TraceContentOptions) -> list[OtelMessagePart]:
        """The feedback as an OpenTelemetry GenAI text part (what the model is sent, when content may be recorded)."""
        from .otel import OtelTextPart  # (loaded by the first traced run)

        part = OtelTextPart(type='text')
        if settings.include_content:
            part['content'] = self.model_response()
        return [part]

    def __repr__(self) -> str:
        return f'RetryFeedbackPart(content={self.content!r}, retry={self.retry!r}, timestamp={self.timestamp!r})'
