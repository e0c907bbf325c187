"""The data of pydantic-ai 2.x's realtime (speech) sessions: their settings (`settings`) and the session error
event; the spoken parts themselves (`SpeechPart`, `SpeechPartDelta`) are messages (`edgewise.agent.messages`).

Edgewise does not open realtime sessions (`Agent.realtime` and `RealtimeSession` are left out, see
docs/compatibility.md); a history recorded by one loads, serializes and runs on any model.
"""

from .._message_flow.events import RealtimeSessionErrorEvent
from .settings import (
    AudioRetention,
    KnownRealtimeTranscriptionModelName,
    RealtimeModelSettings,
    ReconnectPolicy,
    TurnDetection,
)

__all__ = (
    'AudioRetention',
    'KnownRealtimeTranscriptionModelName',
    'RealtimeModelSettings',
    'RealtimeSessionErrorEvent',
    'ReconnectPolicy',
    'TurnDetection',
)
