"""The AG-UI protocol (Agent-User Interaction): `AGUIAdapter` serves an agent to an AG-UI client,
`AGUIEventStream` encodes a run's events as AG-UI events. Needs the `ag-ui` extra (the protocol's SDK)."""

from ._adapter import AGUIAdapter
from ._event_stream import AGUIEventStream
from ._sdk import DEFAULT_AG_UI_VERSION

__all__ = ('DEFAULT_AG_UI_VERSION', 'AGUIAdapter', 'AGUIEventStream')
