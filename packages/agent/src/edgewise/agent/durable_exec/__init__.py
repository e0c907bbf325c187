"""Durable execution of agent runs (each integration in its own module, behind its extra).

`EdgewiseDurability` (also in `edgewise.agent.capabilities`) stores an agent's runs in an Edgewise persistence:
`Agent(..., capabilities=[EdgewiseDurability('sqlite:///runs.db')])`, the shape of pydantic-ai 2.x's durability
capabilities. `edgewise.agent.durable_exec.dbos` has DBOS's: `DBOSAgent` and the capability `DBOSDurability`.
"""

from ..capabilities.durability import EdgewiseDurability

__all__ = ('EdgewiseDurability',)
