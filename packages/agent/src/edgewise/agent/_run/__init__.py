"""What a run holds: its state, dependencies, options and result.

- `state_and_deps`: the agent graph's state (persisted with a run) and dependencies (per run, never persisted),
  with the helpers that build instructions and system prompts from them.
- `options`: what an agent's configuration and a run's arguments resolve to (retries, instructions, settings).
- `result`: `AgentRunResult` and the final-result event.
"""
