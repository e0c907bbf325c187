"""The vocabulary of tools (re-exported by `tools`).

- `definition`: `ToolDefinition`, a tool as the model is told about it.
- `deferred_calls`: the tool calls a run ends on, to be answered later (`DeferredToolRequests`,
  `DeferredToolResults`): calls waiting for an approval or for an external result.
- `tool_kinds`: `ToolKind`, what a tool is whatever it is called, and the registry of kind ids.
- `mcp_apps`: `MCPAppToolResult`, what an MCP App's tool call keeps for the front end.
"""
