"""What a run holds: its state, dependencies, options and result.

- `state`: `GraphAgentState`, what a stored run keeps (persisted with each snapshot), and the run's ids.
- `deps`: `GraphAgentDeps`, what the nodes need besides the state (per run, never persisted), and the checks made
  against it.
- `options`: what an agent's configuration and a run's arguments resolve to (retries, instructions, settings).
- `result`: `AgentRunResult` and the final-result event.
- `history_scan`: `HistoryScan`, a question about the growing history (spoken turns, copied tags) answered by
  reading each message once.

The functions a user hands in for instructions, system prompts and output validators are run by
`_functions.runners`, below the toolsets that also take instructions.
"""
