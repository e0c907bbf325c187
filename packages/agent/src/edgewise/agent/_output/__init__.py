"""Output processing: how a model's text or tool call becomes a run's typed output (the types are in `output`).

- `schema`: the output schema of an agent (which output tools, whether text is allowed, how each is validated).
- `envelope`: the envelope of native and prompted output of several types.
- `json_schema`: the JSON schema of an agent's output values (`Agent.output_json_schema`).
- `partial_json`: an incremental JSON parser (each byte read once).
- `partial_output`: partial structured output validated as the JSON grows.

The names of `schema` are reachable from here too, as from pydantic-ai's private module of this name (code
importing `OutputSchema` or `NativeOutputSchema` from there keeps working); `schema` is imported on first use.
The output types are re-exported here as well (`pydantic_ai._output.OutputSpec`); they are the classes of `output`.
"""

from importlib import import_module
from typing import Any

from ..output import NativeOutput, OutputSpec, PromptedOutput, TextOutput

__all__ = ('NativeOutput', 'OutputSpec', 'PromptedOutput', 'TextOutput')

_MODULES = frozenset({'schema', 'envelope', 'json_schema', 'partial_json', 'partial_output'})


def __getattr__(name: str) -> Any:
    # A submodule not imported yet, or a dunder, is not looked up in `schema`: the import system asks for those.
    if name not in _MODULES and not name.startswith('__'):
        schema = import_module(f'{__name__}.schema')
        if hasattr(schema, name):
            return getattr(schema, name)
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
