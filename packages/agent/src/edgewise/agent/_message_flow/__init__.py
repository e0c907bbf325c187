"""Messages in motion: the events of a streamed response, the parts built from its deltas, and the messages queued
for the next request (re-exported by `messages`). Above `exceptions`, whose errors these raise.

- `events`: the streaming events (part deltas, part start and end, tool call and result events).
- `custom_events`: the open families of events applications and capabilities define (`CustomEvent`,
  `CapabilityEvent`), their registries and unknown envelopes.
- `streamed_parts`: builds a streamed response's parts from deltas, with the events of each step.
- `pending`: messages queued into a running conversation (`RunContext.enqueue`, `AgentRun.enqueue`).
- `cancellation`: the other signal sent into a running conversation, its cancellation (`CancellationToken`,
  `RunContext.cancel`, `AgentRun.cancel`).
"""
