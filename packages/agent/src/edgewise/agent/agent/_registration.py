"""What `@agent.tool`, `@agent.tool_plain`, `@agent.system_prompt`, `@agent.instructions`, `@agent.output_validator` and
`@agent.toolset` do: `AgentRegistration`, the part of `Agent` that takes the functions a user registers."""

from __future__ import annotations as _annotations

from collections.abc import Callable
from typing import Any, Generic, overload

from typing_extensions import TypeVar, Unpack

from .._functions.runners import NamedInstructionRunner, OutputValidator, SystemPromptRunner
from .._output.schema import OutputSchema
from ..exceptions import UserError
from ..messages import InstructionChangePolicy
from ..tools import AgentDepsT, Tool, ToolOptions
from ..toolsets._dynamic import ToolsetFunc
from ._toolsets import AgentToolsets

_F = TypeVar('_F', bound=Callable[..., Any])


class AgentRegistration(Generic[AgentDepsT]):
    """The registering decorators of `Agent`, over the lists `Agent.__init__` sets up."""

    _output_schema: OutputSchema[Any]
    _tools: AgentToolsets[AgentDepsT]
    _system_prompts: list[str | SystemPromptRunner]
    _instructions: list[str | SystemPromptRunner]
    _output_validators: list[OutputValidator]

    @overload
    def tool(self, func: _F, /) -> _F: ...

    @overload
    def tool(self, /, **options: Unpack[ToolOptions[AgentDepsT]]) -> Callable[[_F], _F]: ...

    def tool(self, func: Any = None, /, **options: Unpack[ToolOptions[AgentDepsT]]) -> Any:
        """Register a tool whose function takes the `RunContext` first: `@agent.tool` or `@agent.tool(...)`."""
        return self._tool_decorator(func, True, options)

    @overload
    def tool_plain(self, func: _F, /) -> _F: ...

    @overload
    def tool_plain(self, /, **options: Unpack[ToolOptions[AgentDepsT]]) -> Callable[[_F], _F]: ...

    def tool_plain(self, func: Any = None, /, **options: Unpack[ToolOptions[AgentDepsT]]) -> Any:
        """Register a tool whose function does not take the `RunContext`: `@agent.tool_plain` or `(...)`."""
        return self._tool_decorator(func, False, options)

    def _tool_decorator(self, func: Any, takes_ctx: bool, tool_options: ToolOptions[AgentDepsT]) -> Any:
        # Taken out once, not in `register`: one decorator object may register several functions.
        options: dict[str, Any] = dict(tool_options)
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
        self._tools.function_toolset.add_tool(tool)

    @overload
    def system_prompt(
        self,
        func: _F,
        /,
        *,
        dynamic: bool = False,
        name: str | None = None,
        on_change: InstructionChangePolicy = 'rewrite',
    ) -> _F: ...

    @overload
    def system_prompt(
        self, /, *, dynamic: bool = False, name: str | None = None, on_change: InstructionChangePolicy = 'rewrite'
    ) -> Callable[[_F], _F]: ...

    def system_prompt(
        self,
        func: Any = None,
        /,
        *,
        dynamic: bool = False,
        name: str | None = None,
        on_change: InstructionChangePolicy = 'rewrite',
    ) -> Any:
        """Register a system prompt function (`(ctx) -> str` or `() -> str`, sync or async): `@agent.system_prompt`
        or `@agent.system_prompt(dynamic=..., name=..., on_change=...)`.

        Args:
            func: The function.
            dynamic: Re-evaluate it when a run continues a message history that holds its text.
            name: With `on_change='append'`, the name in the id `system_prompt:<name>` of the `<pyai:context>`
                element the model is sent it in (the function's `__name__` by default); no `:`. Ignored otherwise.
            on_change: `'rewrite'` (the default): a dynamic prompt whose text changed is rewritten where it sits in
                the history. `'append'` (which makes it dynamic): the history keeps the text the model got, and a
                changed text is added to the next request as a replacement with the same id (an empty text
                withdraws it), so the start of the conversation, and the provider's prompt cache, stay as they were.

        Raises:
            UserError: `name` holds `:`, or another appending system prompt of the agent has the same name.
        """
        appends = on_change == 'append'

        def register(function: _F) -> _F:
            context_id = None
            if appends:
                label = name if name is not None else function.__name__
                if ':' in label:
                    raise UserError(
                        f'System prompt name {label!r} cannot hold `:`: it is one segment of the id '
                        '`system_prompt:<name>`. Pass another `name=`.'
                    )
                context_id = f'system_prompt:{label}'
                if any(isinstance(p, SystemPromptRunner) and p.context_id == context_id for p in self._system_prompts):
                    raise UserError(
                        f"Another system prompt of this agent with `on_change='append'` is named {label!r}; "
                        'pass a different `name=`.'
                    )
            runner = SystemPromptRunner(function, dynamic=dynamic or appends, context_id=context_id)
            self._system_prompts.append(runner)
            return function

        return register if func is None else register(func)

    @overload
    def instructions(self, func: _F, /) -> _F: ...

    @overload
    def instructions(
        self, /, *, name: str | None = None, on_change: InstructionChangePolicy = 'rewrite'
    ) -> Callable[[_F], _F]: ...

    def instructions(
        self, func: Any = None, /, *, name: str | None = None, on_change: InstructionChangePolicy = 'rewrite'
    ) -> Any:
        """Register an instructions function (`(ctx) -> str` or `() -> str`, or returning an `InstructionPart`),
        evaluated for every request: `@agent.instructions` or `@agent.instructions(name=..., on_change=...)`.

        Args:
            func: The function.
            name: The name of the block it gives, keyed `agent:<name>` (pydantic-ai 2.68), so that the application
                can address it; no `:`, and not `'agent'` (the key of the agent's literal instructions).
            on_change: `'rewrite'` (the default) sends the instructions as they are on each request; `'append'`
                keeps the instructions the conversation began with and appends a change of this block to it (needs
                a `name`, else it warns and rewrites).

        Raises:
            UserError: `name` holds `:` or is `'agent'`.
        """
        if name is not None and (':' in name or name == 'agent'):
            raise UserError(
                f"Instruction name {name!r} cannot be used: a name is one segment of the block's id, so it cannot "
                "hold `:`, and 'agent' is the key of the agent's own instructions. Choose another name."
            )

        def register(function: _F) -> _F:
            if name is None and on_change == 'rewrite':
                self._instructions.append(SystemPromptRunner(function))
            else:
                self._instructions.append(NamedInstructionRunner(function, name=name, on_change=on_change))
            return function

        return register if func is None else register(func)

    def output_validator(self, func: _F, /) -> _F:
        """Register an output validator (`(output)` or `(ctx, output)`, sync or async) that may raise `ModelRetry`."""
        self._output_validators.append(OutputValidator(func))
        return func

    @overload
    def toolset(self, func: ToolsetFunc[AgentDepsT], /) -> ToolsetFunc[AgentDepsT]: ...

    @overload
    def toolset(
        self, /, *, per_run_step: bool = True, id: str | None = None
    ) -> Callable[[ToolsetFunc[AgentDepsT]], ToolsetFunc[AgentDepsT]]: ...

    def toolset(self, func: Any = None, /, *, per_run_step: bool = True, id: str | None = None) -> Any:
        """Register a function building a toolset from the `RunContext` (sync or async, `None` for no tools):
        `@agent.toolset` or `@agent.toolset(per_run_step=False)` to build it once per run instead of per step."""

        def register(function: Any) -> Any:
            self._tools.register(function, per_run_step, id)
            return function

        return register if func is None else register(func)
