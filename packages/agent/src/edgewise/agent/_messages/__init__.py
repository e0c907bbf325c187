"""The vocabulary of a conversation: what an agent and a model say to each other (re-exported by `messages`).

- `model_messages`: requests, responses and their parts, the provider-neutral message model.
- `content`: what a user prompt or a tool return can hold besides text: file URLs, binary content, `ToolReturn`,
  `CachePoint`.
- `events`: the streaming events (part deltas, part start and end, tool call and result events).
- `streamed_parts`: builds a streamed response's parts from deltas, with the events of each step.
- `pending`: messages queued into a running conversation (`RunContext.enqueue`, `AgentRun.enqueue`).
- `usage_counts`: the token and request counters a response and a run carry (re-exported by `usage`).
- `capability_loading`: the parts that load a capability on demand (`defer_loading=True`).

Nothing here imports the engines (models, toolsets, the loop).
"""
