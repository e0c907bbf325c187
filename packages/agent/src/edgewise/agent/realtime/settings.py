"""The settings vocabulary of pydantic-ai 2.x's realtime (speech) sessions, as data.

Edgewise runs no realtime sessions (see docs/compatibility.md); these types are here so that code and
configuration written for them type-check and load, and so that `RunContext.model_settings` can be annotated as
pydantic-ai annotates it (`ModelSettings | RealtimeModelSettings | None`).
"""

from __future__ import annotations as _annotations

from typing import Literal

from typing_extensions import TypeAliasType, TypedDict

from ..settings import ThinkingLevel, ToolChoice

__all__ = (
    'AudioRetention',
    'KnownRealtimeTranscriptionModelName',
    'RealtimeModelSettings',
    'ReconnectPolicy',
    'TurnDetection',
)

AudioRetention = TypeAliasType('AudioRetention', Literal['transcript_only', 'input_audio', 'output_audio', 'all'])
"""Which audio a session keeps on its `SpeechPart`s besides the transcripts: none (`'transcript_only'`, the
default), the user's, the model's, or both."""

KnownRealtimeTranscriptionModelName = TypeAliasType(
    'KnownRealtimeTranscriptionModelName',
    Literal[
        'auto',
        'whisper-1',
        'gpt-4o-transcribe',
        'gpt-4o-mini-transcribe',
        'gpt-realtime-whisper',
        'grok-transcribe',
        'azure-speech',
        'mai-transcribe',
    ],
)
"""Transcription models known by name (`'auto'`: the provider's recommended one); any other name is accepted too."""


class TurnDetection(TypedDict, total=False):
    """Voice-activity detection: when the provider decides a speaker's turn started or ended."""

    sensitivity: Literal['low', 'medium', 'high']
    """How readily a turn boundary is detected (higher: sooner, with more false starts)."""
    prefix_padding_ms: int
    """Audio kept from before the detected start of speech, in milliseconds."""
    silence_duration_ms: int
    """Silence that ends a turn, in milliseconds."""


class ReconnectPolicy(TypedDict, total=False):
    """How a session dials again after its connection dropped."""

    max_attempts: int
    """Attempts per drop before giving up (pydantic-ai's default: 3)."""
    max_reconnects: int
    """Successful reconnections allowed over the session's life (default: 50)."""
    base_delay: float
    """First delay between attempts, in seconds, doubled each attempt (default: 0.5)."""
    max_delay: float
    """Longest delay between attempts, in seconds (default: 30)."""
    jitter: bool
    """Whether delays are randomized (default: `True`)."""


class RealtimeModelSettings(TypedDict, total=False):
    """Settings of a realtime model session (the counterpart of `ModelSettings` for speech sessions)."""

    max_tokens: int
    """Most tokens generated per response."""
    parallel_tool_calls: bool
    """Whether the model may call several tools at once."""
    tool_choice: ToolChoice
    """Which function tools the model may (or must) call, as `ModelSettings.tool_choice`."""
    input_transcription_model: KnownRealtimeTranscriptionModelName | str | None
    """The model that transcribes the user's audio (`'auto'`, a model name, or `None` for no transcription)."""
    output_modality: Literal['audio', 'text']
    """What the model answers in (`'audio'` by default)."""
    output_speech_timestamps: bool
    """Whether the model's speech is timed (`SpeechPartDelta.timestamps`, then `SpeechPart.timestamps` in the
    history), to show its words as they are played; off by default."""
    thinking: ThinkingLevel
    """Reasoning, as `ModelSettings.thinking`."""
    turn_detection: bool | TurnDetection
    """Automatic turn detection: on at the provider's defaults (`True`, the default), off (`False`), or tuned."""
    handshake_timeout: float
    """Seconds to wait for the session's handshake (default: 30)."""
    reconnect: ReconnectPolicy
    """How to recover from a dropped connection; without one, a drop ends the session."""
