"""The vocabulary of tools: what a model is told about a tool and how a function becomes one (re-exported by
`tools`).

- `definition`: `ToolDefinition`, a tool as the model sees it.
- `function_schema`: a function's signature and docstring as a JSON schema; its arguments validated and applied.
- `docstrings`: descriptions read from google, numpy or sphinx docstrings.
- `selector`: which tools a capability applies to.
- `deferred_calls`: tool calls a run ends on to be answered later (`DeferredToolRequests`,
  `DeferredToolResults`): approvals and external calls.
"""
