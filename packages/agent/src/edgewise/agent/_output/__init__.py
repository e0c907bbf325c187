"""Output processing: how a model's text or tool call becomes a run's typed output (the types are in `output`).

- `schema`: the output schema of an agent (which output tools, whether text is allowed, how each is validated).
- `envelope`: the envelope of native and prompted output of several types.
- `json_schema`: the JSON schema of an agent's output values (`Agent.output_json_schema`).
- `partial_json`: an incremental JSON parser (each byte read once).
- `partial_output`: partial structured output validated as the JSON grows.

The output types are also re-exported here, at the private path where pydantic-ai's own code and tests import them
(`pydantic_ai._output.OutputSpec`); they are the classes of `output`.
"""

from ..output import NativeOutput, OutputSpec, PromptedOutput, TextOutput

__all__ = ('NativeOutput', 'OutputSpec', 'PromptedOutput', 'TextOutput')
