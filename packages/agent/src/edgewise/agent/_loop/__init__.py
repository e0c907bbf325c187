"""The agent loop: the graph nodes of a run and what they hand work to.

- `nodes`: `UserPromptNode -> ModelRequestNode -> CallToolsNode -> ... -> End`, the agent as an Edgewise graph.
- `agent_run`: `AgentRun`, a run driven node by node (`Agent.iter`), with the capabilities' node hooks.
- `history`: the message history as sent to the model (and the settings change a request records).
- `instruction_window`: the instruction baselines and changes a request records for `on_change='append'` blocks.
- `request_hooks`: the capabilities' hooks around a model request.
- `hook_loads`: the capability loads those hooks (and `before_run`) make, recorded on the request they go with.
- `loaded_instructions`: the instructions of the loaded deferred capabilities, stated in the history
  (`capability:<id>`).
- `model_stream`: `AgentStream`, one streamed model response (`ModelRequestNode.stream`).
- `debounce`: grouping the pieces of a stream that come faster than a reader wants them.
- `output_reader`: the text and the partial output of streamed responses, read incrementally (for `AgentStream`
  and `StreamedRunResult`).
- `response_output`: validating a (partly streamed) response into an output value.
- `empty_response`: what a response with nothing to act on means (no parts, empty text, reasoning only).
- `early_output`: under `end_strategy='early'`, a response's own output winning over its function tool calls.
- `step_tool_manager`: the `ToolManager` of each step (the tools listed, through `prepare_tools`).
- `response_tool_calls`: running the function tool calls of one response (validation, retries, concurrency).
- `call_tools_parts`: the parts a tool-call step answers with (output and skipped calls, retry prompts).
- `output_hooks`: the capabilities' hooks around output validation and processing.
- `run_hooks`: the capabilities' hooks around a whole run (`wrap_run`, `before_run`, `after_run`).
"""
