"""Spoken turns in a conversation: `SpeechPart` (audio with its transcript) and the `SpeechPartDelta` that grows
one while it streams, as pydantic-ai 2.x records the turns of a realtime (speech) session.

Edgewise does not open realtime sessions itself, but histories written by one (by pydantic-ai, or by code that
builds these parts) load, serialize and run: before a request, `edgewise.agent.models.Model.prepare_messages`
turns the spoken parts into the text or audio prompt parts every model understands.
"""

from __future__ import annotations as _annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from typing_extensions import TypeAliasType

from .content import BinaryContent

if TYPE_CHECKING:
    from .otel import OtelMessagePart, TraceContentOptions

__all__ = ('SpeechPart', 'SpeechPartDelta', 'SpeechTimestamp', 'SpeechTimestampGranularity', 'Speaker')

Speaker = Literal['user', 'assistant']
"""Who spoke: the end user (a part of a `ModelRequest`) or the model (a part of a `ModelResponse`)."""

SpeechTimestampGranularity = TypeAliasType('SpeechTimestampGranularity', Literal['word', 'segment'])
"""What one `SpeechTimestamp` times: one `'word'`, or a `'segment'` of several words (all some providers give)."""


@dataclass(repr=False, kw_only=True)
class SpeechTimestamp:
    """Where a piece of the model's speech falls in the audio of its `SpeechPart`, as the provider reported it:
    what lets an application show the words of a reply as they are played."""

    text: str
    """What is said there: a word (punctuation may be an entry of its own) or a stretch of the transcript."""
    start_ms: int
    """Where it starts, in milliseconds from the start of the part's own audio (like `interrupted_at_ms`)."""
    duration_ms: int
    """How long it takes to say, in milliseconds."""
    granularity: SpeechTimestampGranularity = 'word'
    """Whether it times one word or a segment of several."""

    def __repr__(self) -> str:
        shown = f'text={self.text!r}, start_ms={self.start_ms!r}, duration_ms={self.duration_ms!r}'
        if self.granularity != 'word':
            shown += f', granularity={self.granularity!r}'
        return f'SpeechTimestamp({shown})'


@dataclass(repr=False, kw_only=True)
class SpeechPart:
    """A spoken turn: its transcript and, when it was kept, its audio.

    The same part serves both sides of a conversation: in `ModelRequest.parts` the speaker is `'user'`, in
    `ModelResponse.parts` it is `'assistant'` (both messages check it when built or loaded). Models that take
    text read the transcript; models whose profile has `supports_audio_input` get a user's kept audio instead.
    """

    speaker: Speaker
    """Who spoke."""
    transcript: str | None = None
    """What was said, as text; `None` when there is no transcription."""
    audio: BinaryContent | None = None
    """The audio itself, when the session kept it (usually not: transcripts are the default)."""
    interrupted_at_ms: int | None = None
    """Where playback of this part's audio was cut off, in milliseconds from its start; `None` if it was not (or
    the provider did not say where)."""
    timestamps: list[SpeechTimestamp] | None = None
    """Where each piece of the model's speech falls in the part's audio, when the provider reported it (asked for
    with the realtime setting `output_speech_timestamps`)."""
    id: str | None = None
    """The provider's id of the item, to match the part with the provider's conversation."""
    provider_name: str | None = None
    """The provider that produced or transcribed the audio (required with `id` or `provider_details`)."""
    provider_details: dict[str, Any] | None = None
    """Provider-specific data."""
    part_kind: Literal['speech'] = 'speech'
    """Tag of this part kind in serialized messages."""

    @property
    def content(self) -> str:
        """The transcript, or `''` without one (so code that reads `TextPart.content` reads speech alike)."""
        return self.transcript or ''

    def has_content(self) -> bool:
        """Whether there is a transcript or kept audio."""
        return bool(self.transcript) or self.audio is not None

    def otel_message_parts(self, settings: TraceContentOptions) -> list[OtelMessagePart]:
        """The part as OpenTelemetry GenAI message parts: a text part for the transcript, a blob for the audio
        (their contents only when `settings` let content, and binary content, be recorded)."""
        from .otel import OtelTextPart, binary_part  # (loaded by the first traced run)

        parts: list[OtelMessagePart] = []
        if self.transcript is not None:
            text = OtelTextPart(type='text')
            if settings.include_content:
                text['content'] = self.transcript
            parts.append(text)
        if self.audio is not None:
            parts.append(binary_part(self.audio, settings))
        return parts

    def __repr__(self) -> str:
        names = (
            'speaker', 'transcript', 'audio', 'interrupted_at_ms', 'timestamps', 'id', 'provider_name',
            'provider_details',
        )  # fmt: skip
        shown = ', '.join(f'{n}={v!r}' for n in names if (v := getattr(self, n)) is not None)
        return f'SpeechPart({shown})'


@dataclass(repr=False, kw_only=True)
class SpeechPartDelta:
    """More of a `SpeechPart` while it streams: transcript text and audio.

    `transcript` is the whole transcript so far and replaces the part's (providers revise what they already
    transcribed); `transcript_delta` is only what was added, and is empty when the provider revised rather than
    added. Render `transcript` for a live transcript that is right on every provider.
    """

    speaker: Speaker | None = None
    """Who is speaking (the part's speaker); `None` outside realtime sessions."""
    transcript_delta: str | None = None
    """The transcript text this delta adds, if any."""
    transcript: str | None = None
    """The whole transcript of the turn so far, when this delta carries transcript text."""
    audio_chunk: bytes | None = None
    """A chunk of raw audio, for live playback; kept on the part only when the part keeps audio."""
    timestamps: list[SpeechTimestamp] | None = None
    """Timestamps of the speech this delta covers, new ones only (`apply` adds them to the part's). They may come
    before the audio they time: match them with the playback position rather than showing them on arrival."""
    part_delta_kind: Literal['speech'] = 'speech'
    """Tag of this delta kind in serialized events."""

    def apply(self, part: object) -> SpeechPart:
        """`part` with this delta applied (a new part; `part` is left as it was).

        `transcript` replaces the part's transcript; otherwise `transcript_delta` is appended to it. The audio
        chunk is appended to the part's audio only when the part has audio (a part without is not keeping any).
        `timestamps` are appended to the part's.

        Raises:
            ValueError: `part` is not a `SpeechPart`.
        """
        if not isinstance(part, SpeechPart):
            raise ValueError('Cannot apply SpeechPartDeltas to non-SpeechParts')
        transcript = part.transcript
        if self.transcript is not None:
            transcript = self.transcript
        elif self.transcript_delta:
            transcript = (transcript or '') + self.transcript_delta
        audio = part.audio
        if self.audio_chunk and audio is not None:
            audio = replace(audio, data=audio.data + self.audio_chunk)
        timestamps = part.timestamps
        if self.timestamps:
            timestamps = [*(timestamps or ()), *self.timestamps]
        return replace(part, transcript=transcript, audio=audio, timestamps=timestamps)

    def __repr__(self) -> str:
        names = ('speaker', 'transcript_delta', 'transcript', 'audio_chunk', 'timestamps')
        shown = ', '.join(f'{n}={v!r}' for n in names if (v := getattr(self, n)) is not None)
        return f'SpeechPartDelta({shown})'
