"""Durable execution of agent runs (each integration in its own module, behind its extra).

`EdgewiseDurability` (also in `edgewise.agent.capabilities`) stores an agent's runs in an Edgewise persistence:
`Agent(..., capabilities=[EdgewiseDurability('sqlite:///runs.db')])`, the shape of pydantic-ai 2.x's durability
capabilities. `edgewise.agent.durable_exec.dbos` has DBOS's: `DBOSAgent` and the capability `DBOSDurability`.

The external events a run waits for in process (`ExternalEventWaiter`, `external_event_scope`,
`ExternalEventError`) are here too, as in pydantic-ai 2.68, where an engine installs its own waiter with them.
"""

from ..capabilities.durability import EdgewiseDurability
from ..external_events import ExternalEventError, ExternalEventWaiter, external_event_scope

__all__ = ('EdgewiseDurability', 'ExternalEventError', 'ExternalEventWaiter', 'external_event_scope')
