"""Agent runs on DBOS (extra `edgewise-agent[dbos]`): each run a DBOS workflow, each model request and tool call a step.

```python
from edgewise.agent.durable_exec.dbos import DBOSAgent

durable = DBOSAgent(agent, name='support')  # at module level in every process, before DBOS.launch()
result = durable.run_sync('Where is my order?')
```

The workflow `{name}.run` runs the wrapped agent with its model wrapped in a `DBOSModel` (each request the
step `{name}__model.request`, each streamed request `{name}__model.request_stream`) and its toolsets wrapped
so that each tool call is the step `{name}__tool.call_tool`. Step outputs are JSON strings (pydantic), never
pickles. A run whose process dies is finished by DBOS's recovery from its last recorded step: completed model
requests and tool calls are not repeated.

Inside the workflow, tool calls run one at a time: DBOS numbers steps in the order they are called, and a
recovered run must call them in the same order. The deps a run gets are this process's (`deps=`), never stored.

`DBOSDurability` is the pydantic-ai 2.x shape of the same: a capability (`Agent(..., capabilities=[DBOSDurability()])`)
that makes each model request of a run a step of the same `DBOSModel` kind when the run happens inside a workflow
of your own (`@DBOS.workflow()` code calling `agent.run(...)`); MCP servers and dynamic toolsets are made steps too
(their listings, instructions and tool calls, `_toolsets`), function tools run in that workflow's code.
"""

from __future__ import annotations as _annotations

try:
    import dbos as _dbos  # noqa: F401 (the guard: the modules below import it as well)
except ImportError as _error:  # pragma: no cover - exercised in a subprocess by tests/agent/dbos/test_extra.py
    raise ModuleNotFoundError(
        'edgewise.agent.durable_exec.dbos needs the DBOS library: install the `dbos` extra, '
        '`pip install "edgewise-agent[dbos]"`.',
        name='dbos',
    ) from _error

from edgewise.graph.dbos import DBOSQueue

from ._agent import DBOSAgent, DBOSModel, StepConfig
from ._durability import DBOSDurability, DBOSParallelExecutionMode

__all__ = ('DBOSAgent', 'DBOSDurability', 'DBOSModel', 'DBOSParallelExecutionMode', 'DBOSQueue', 'StepConfig')
