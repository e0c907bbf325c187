"""The run of an agent, as pydantic-ai 2.x's `run` module names it: `AgentRun` (a run driven node by node, from
`Agent.iter`), `AgentRunResult` (what a finished run gives) and `AgentRunResultEvent` (the last event of
`run_stream_events`).

The classes live in `edgewise.agent._loop.agent_run` and `edgewise.agent._run.result`; `edgewise.agent` and
`edgewise.agent.result` export them too.
"""

from ._loop.agent_run import AgentRun
from ._run.result import AgentRunResult, AgentRunResultEvent

__all__ = ('AgentRun', 'AgentRunResult', 'AgentRunResultEvent')
