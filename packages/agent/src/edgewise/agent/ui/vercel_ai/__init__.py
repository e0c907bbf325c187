"""The Vercel AI SDK's UI message stream (its data stream protocol): `VercelAIAdapter` serves an agent to a
chat front end built with the AI SDK (`useChat`), `VercelAIEventStream` encodes a run's events for it.

The request and response models are in `request_types` and `response_types`.
"""

from ._adapter import VercelAIAdapter
from ._event_stream import VercelAIEventStream

__all__ = ('VercelAIAdapter', 'VercelAIEventStream')
