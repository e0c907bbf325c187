"""Registration of an agent's tools, system prompts, instructions and output validators (the decorators)."""

from __future__ import annotations as _annotations

from collections.abc import Callable
from typing import Any, Generic, overload

from pydantic.json_schema import GenerateJsonSchema
from typing_extensions import TypeVar

from .._functions.runners import OutputValidator, SystemPromptRunner
from .._functions.schema import DocstringFormat, GenerateToolJsonSchema
from .._output.schema import OutputSchema
from ..exceptions import UserError
from ..output import OutputDataT
from ..tools import AgentDepsT, ArgsValidatorFunc, Tool, ToolPrepareFunc
from ._toolsets import AgentToolsets

__all__ = ('AgentRegistry',)

_F = TypeVar('_F', bound=Callable[..., Any])


class AgentRegistry(AgentToolsets[AgentDepsT], Generic[AgentDepsT, OutputDataT]):
    """What the decorators of `Agent` register: tools, toolsets, system prompts, instructions and output
    validators."""

    _output_schema: OutputSchema
    _system_prompts: list[str | SystemPromptRunner]
    _instructions: list[str | SystemPromptRunner]
    _output_validators: list[OutputValidator]

    @overload
    def tool(self, func: _F, /) -> _F: ...

    @overload
    def tool(
        self,
        /,
        *,
        name: str | None = None,
        description: str | None = None,
        retries: int | None = None,
        prepare: ToolPrepareFunc[AgentDepsT] | None = None,
        args_validator: ArgsValidatorFunc[AgentDepsT, ...] | None = None,
        docstring_format: DocstringFormat = 'auto',
        require_parameter_descriptions: bool = False,
        schema_generator: type[GenerateJsonSchema] = GenerateToolJsonSchema,
        strict: bool | None = None,
        sequential: bool = False,
        requires_approval: bool = False,
        metadata: dict[str, Any] | None = None,
        timeout: float | None = None,
        defer_loading: bool = False,
        include_return_schema: bool | None = None,
    ) -> Callable[[_F], _F]: ...

    def tool(self, func: Any = None, /, **options: Any) -> Any:
        """Register a tool whose function takes the `RunContext` first: `@agent.tool` or `@agent.tool(...)`."""
        return self._tool_decorator(func, True, options)

    @overload
    def tool_plain(self, func: _F, /) -> _F: ...

    @overload
    def tool_plain(
        self,
        /,
        *,
        name: str | None = None,
        description: str | None = None,
        retries: int | None = None,
        prepare: ToolPrepareFunc[AgentDepsT] | None = None,
        args_validator: ArgsValidatorFunc[AgentDepsT, ...] | None = None,
        docstring_format: DocstringFormat = 'auto',
        require_parameter_descriptions: bool = False,
        schema_generator: type[GenerateJsonSchema] = GenerateToolJsonSchema,
        strict: bool | None = None,
        sequential: bool = False,
        requires_approval: bool = False,
        metadata: dict[str, Any] | None = None,
        timeout: float | None = None,
        defer_loading: bool = False,
        include_return_schema: bool | None = None,
    ) -> Callable[[_F], _F]: ...

    def tool_plain(self, func: Any = None, /, **options: Any) -> Any:
        """Register a tool whose function does not take the `RunContext`: `@agent.tool_plain` or `(...)`."""
        return self._tool_decorator(func, False, options)

    def _tool_decorator(self, func: Any, takes_ctx: bool, options: dict[str, Any]) -> Any:
        # Taken out once, not in `register`: one decorator object may register several functions.
        retries = options.pop('retries', None)

        def register(function: _F) -> _F:
            self._register_tool(Tool(function, takes_ctx=takes_ctx, max_retries=retries, **options))
            return function

        return register if func is None else register(func)

    def _register_tool(self, tool: Tool[AgentDepsT]) -> None:
        if tool.name in self._output_schema.tools:
            raise UserError(
                "The agent defines a tool whose name conflicts with existing tool from the agent's output tools: "
                f'{tool.name!r}. Rename the tool or wrap the toolset in a `PrefixedToolset` to avoid name conflicts.'
            )
        self._function_toolset.add_tool(tool)

    @overload
    def system_prompt(self, func: _F, /) -> _F: ...

    @overload
    def system_prompt(self, /, *, dynamic: bool = False) -> Callable[[_F], _F]: ...

    def system_prompt(self, func: Any = None, /, *, dynamic: bool = False) -> Any:
        """Register a system prompt function (`(ctx) -> str` or `() -> str`, sync or async).

        With `dynamic=True` it is re-evaluated when a run continues a message history that holds its text.
        """

        def register(function: _F) -> _F:
            self._system_prompts.append(SystemPromptRunner(function, dynamic=dynamic))
            return function

        return register if func is None else register(func)

    @overload
    def instructions(self, func: _F, /) -> _F: ...

    @overload
    def instructions(self, /) -> Callable[[_F], _F]: ...

    def instructions(self, func: Any = None, /) -> Any:
        """Register an instructions function (`(ctx) -> str` or `() -> str`), evaluated for every request:
        `@agent.instructions` or `@agent.instructions()`."""

        def register(function: _F) -> _F:
            self._instructions.append(SystemPromptRunner(function))
            return function

        return register if func is None else register(func)

    def output_validator(self, func: _F, /) -> _F:
        """Register an output validator (`(output)` or `(ctx, output)`, sync or async) that may raise `ModelRetry`."""
        self._output_validators.append(OutputValidator(func))
        return func
