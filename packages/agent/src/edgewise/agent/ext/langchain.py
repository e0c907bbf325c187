"""LangChain tools as Edgewise tools: `tool_from_langchain` and `LangChainToolset`.

Nothing here imports LangChain: a tool is read by its shape (`name`, `description`, `args`,
`get_input_jsonschema()` and `run(...)`, which every LangChain `BaseTool` has), so any object of that shape works.
"""

from __future__ import annotations as _annotations

from typing import Any, Protocol

from ..tools import Tool
from ..toolsets import FunctionToolset

__all__ = ('LangChainTool', 'LangChainToolset', 'tool_from_langchain')


class LangChainTool(Protocol):
    """What `tool_from_langchain` needs of a LangChain tool."""

    @property
    def args(self) -> dict[str, Any]:
        """The JSON schema of each argument, by name (one with a `default` is optional)."""
        ...  # pragma: no cover - a protocol

    def get_input_jsonschema(self) -> dict[str, Any]:
        """The JSON schema of the tool's input."""
        ...  # pragma: no cover - a protocol

    @property
    def name(self) -> str:
        """The tool's name."""
        ...  # pragma: no cover - a protocol

    @property
    def description(self) -> str:
        """What the tool does, for the model."""
        ...  # pragma: no cover - a protocol

    def run(self, *args: Any, **kwargs: Any) -> str:
        """Run the tool with its input (a dict of the arguments)."""
        ...  # pragma: no cover - a protocol


def tool_from_langchain(langchain_tool: LangChainTool) -> Tool[Any]:
    """An Edgewise tool that calls a LangChain tool: same name, description and argument schema.

    The schema is the tool's input schema, closed to other properties (unless it says otherwise) and with every
    argument that has no default required. The call fills in the defaults the model left out and runs the tool with
    the arguments as one dict, as LangChain does (in a worker thread: LangChain's `run` blocks).

    Args:
        langchain_tool: The LangChain tool (any object of its shape: see `LangChainTool`).

    Returns:
        The Edgewise tool.
    """
    arguments = dict(langchain_tool.args)
    schema = dict(langchain_tool.get_input_jsonschema())
    schema.setdefault('additionalProperties', False)
    required = sorted(name for name, detail in arguments.items() if 'default' not in detail)
    if required:
        schema['required'] = required
    defaults = {name: detail['default'] for name, detail in arguments.items() if 'default' in detail}

    def run(**kwargs: Any) -> str:
        return langchain_tool.run({**defaults, **kwargs})

    return Tool.from_schema(
        function=run, name=langchain_tool.name, description=langchain_tool.description, json_schema=schema
    )


class LangChainToolset(FunctionToolset[Any]):
    """A toolset of LangChain tools (each made with `tool_from_langchain`)."""

    def __init__(self, tools: list[LangChainTool], *, id: str | None = None) -> None:
        """A toolset of `tools`.

        Args:
            tools: The LangChain tools.
            id: The toolset's id (for durable execution).
        """
        super().__init__([tool_from_langchain(tool) for tool in tools], id=id)
