"""UI event streams: serve an agent to a chat front end over a UI protocol.

A `UIAdapter` reads a protocol's request (its messages, frontend tools, state and tool approvals), runs the
agent with `Agent.run_stream_events`, and streams back the protocol's events, made by a `UIEventStream`.
Two protocols come with Edgewise, with pydantic-ai 2.x's API:

- `edgewise.agent.ui.vercel_ai.VercelAIAdapter`: the Vercel AI SDK's UI message stream (data stream protocol);
- `edgewise.agent.ui.ag_ui.AGUIAdapter`: the AG-UI protocol (needs the `ag-ui` extra).

`dispatch_request` and `streaming_response` answer a Starlette request (the `ui` extra); everything else works
without Starlette. `edgewise.agent.ui.web` builds the chat app of `Agent.to_web()` (the `web` extra);
`DEFAULT_HTML_URL` and `OFFLINE_HTML_URL` are where it serves its built-in page (and its self-contained variant).
"""

from ._adapter import DEFAULT_ALLOWED_CONTENT_TYPES, StateDeps, StateHandler, UIAdapter
from ._event_stream import SSE_CONTENT_TYPE, NativeEvent, OnCancelFunc, OnCompleteFunc, UIEventStream
from ._messages_builder import BuilderCheckpoint, MessagesBuilder
from ._page_urls import DEFAULT_HTML_URL, OFFLINE_HTML_URL

__all__ = (
    'DEFAULT_ALLOWED_CONTENT_TYPES',
    'DEFAULT_HTML_URL',
    'OFFLINE_HTML_URL',
    'SSE_CONTENT_TYPE',
    'BuilderCheckpoint',
    'MessagesBuilder',
    'NativeEvent',
    'OnCancelFunc',
    'OnCompleteFunc',
    'StateDeps',
    'StateHandler',
    'UIAdapter',
    'UIEventStream',
)
