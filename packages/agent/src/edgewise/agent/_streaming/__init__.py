"""The readers of a running agent: what `run_stream`, `run_stream_events` and event stream handlers read.

- `node_loop`: the one loop over the streamed nodes of a run, with the event stream handler.
- `event_stream`: `AgentEventStream`, every event of a run and then its result.
- `run_result`: `StreamedRunResult`, the result of `run_stream`, read while the run goes on.
- `run_result_sync`: `StreamedRunResultSync`, the same read from synchronous code.
- `handled_events`: a streamed node's events, passed on and kept for the run's event stream handler.
"""
