"""The vocabulary of a conversation, as data: what an agent and a model say to each other (re-exported by
`messages`). The floor of the package: nothing here imports another module of it.

- `model_messages`: requests, responses and their parts, the provider-neutral message model.
- `tool_parts`: the tool call and return parts (re-exported by `model_messages`), with the typed parts of the
  tools the agent adds itself (`load_capability`, `search_tools`).
- `content`: what a user prompt or a tool return can hold besides text: file URLs, binary content, `ToolReturn`,
  `CachePoint`, `StructuredContent`.
- `citations`: the sources backing a model's text and where in it (`TextPart.citations`).
- `attempts`: `ModelRequestAttempt`, the record of a failed attempt at a model request.
- `usage_counts`: the token and request counters a response and a run carry (re-exported by `usage`).
- `capability_loading`: the parts that load a capability on demand (`defer_loading=True`).
- `instructions`: instruction blocks and their ids, and the records of an instruction window (baselines, changes).
- `deltas`: the records of capabilities loaded without a call and of model settings changed mid-conversation.
- `speech`: spoken turns (`SpeechPart`, `SpeechPartDelta`), as a realtime session records them.
- `framing`: the tags the framework writes into prompt text (`<system>`, `<pyai:context>`, `<pyai:tool_result>`).
- `lookalike`: finding text that copies one of those tags, and the notes saying who wrote it.
- `compaction`: `CompactionPart`, the provider's summary standing in for the history before it.
- `history`: functions over a whole history (its compaction window, its typed tool parts).
- `sanitize`: `sanitize_messages`, a history from an untrusted source (a browser) made safe to run on.
- `ids`: time-ordered ids (UUID version 7) for conversations and enqueued content.
- `otel`: the OpenTelemetry GenAI shapes of message parts, as the parts' `otel_message_parts` write them for
  spans.

`exceptions` sits on this floor (some errors carry messages); `_message_flow` above it.
"""
