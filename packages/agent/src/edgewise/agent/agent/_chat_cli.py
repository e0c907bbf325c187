"""`AbstractAgent.to_cli()`: a chat with an agent in the terminal (the `cli` extra: rich renders the answers).

Each prompt is one run of the agent continuing the chat's history; its answer streams in as Markdown, with a line for
each tool call. A prompt starting with `/` is a command: `/exit`, `/markdown` (the last answer's Markdown source),
`/multiline` (toggle: a prompt then ends at an empty line), `/cp` (the last answer to the clipboard, through the
platform's clipboard command) and `/usage` (`/usage --json`: the session's token and request counts). End of input
ends the chat too. A run that fails prints its error, and the chat goes on.
"""

from __future__ import annotations as _annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio.to_thread

from ..messages import (
    FunctionToolCallEvent,
    FunctionToolResultEvent,
    ModelMessage,
    ModelResponse,
    PartDeltaEvent,
    PartStartEvent,
    TextPart,
    TextPartDelta,
)
from ..usage import RunUsage

if TYPE_CHECKING:
    from rich.console import Console
    from rich.live import Live
    from rich.markdown import Markdown
    from rich.syntax import Syntax

    from ..models import KnownModelName, Model
    from ..settings import ModelSettings
    from ..usage import UsageLimits

__all__ = ('CLIPBOARD_COMMANDS', 'NO_BANNER_ENV', 'banner_enabled', 'run_chat')

CODE_THEME = 'monokai'

CLIPBOARD_COMMANDS: tuple[tuple[str, ...], ...] = (
    ('pbcopy',),
    ('wl-copy',),
    ('xclip', '-selection', 'clipboard'),
    ('xsel', '--clipboard', '--input'),
    ('clip',),
)
"""The commands `/cp` tries, in order: the first found on `PATH` gets the text on its standard input."""


@dataclass(frozen=True)
class _Rich:
    """The parts of rich the chat uses, imported when a chat starts."""

    console: type[Console]
    live: type[Live]
    markdown: type[Markdown]
    syntax: type[Syntax]

    @classmethod
    def load(cls) -> _Rich:
        """Import them, or fail naming the extra that brings rich."""
        try:
            from rich.console import Console
            from rich.live import Live
            from rich.markdown import Markdown
            from rich.syntax import Syntax
        except ModuleNotFoundError as error:
            raise ModuleNotFoundError(
                '`Agent.to_cli()` needs rich to show the answers: install the `cli` extra, '
                '`pip install "edgewise-agent[cli]"`.',
                name='rich',
            ) from error
        return cls(Console, Live, Markdown, Syntax)


def _read_line(prompt: str) -> str:
    return input(prompt)


async def _read_prompt(prompt: str, multiline: bool) -> str:
    """The next prompt: one line, or in multiline mode the lines up to an empty one (or the end of input).

    Raises:
        EOFError: the input ended before a prompt.
    """
    first = await anyio.to_thread.run_sync(_read_line, prompt)
    if not multiline:
        return first
    lines = [first]
    while lines[-1]:
        try:
            lines.append(await anyio.to_thread.run_sync(_read_line, ''))
        except EOFError:
            break
    return '\n'.join(lines).strip('\n')


def _last_text(messages: Sequence[ModelMessage]) -> str | None:
    last = messages[-1] if messages else None
    return last.text if isinstance(last, ModelResponse) else None


def _copy_to_clipboard(text: str) -> str | None:
    """Give `text` to the first clipboard command found; its name, or `None` when there is none."""
    for command in CLIPBOARD_COMMANDS:
        if (found := shutil.which(command[0])) is not None:
            subprocess.run([found, *command[1:]], input=text.encode(), check=True)
            return command[0]
    return None


@dataclass
class _StreamedAnswer:
    """What the terminal shows of the run in flight: the text streamed so far and its tool calls."""

    live: Live
    markdown: type[Markdown]
    pieces: list[str] = field(default_factory=list[str])
    text: str = ''
    calling: dict[str, str] = field(default_factory=dict[str, str])

    def show(self, event: object) -> None:
        if isinstance(event, PartStartEvent) and isinstance(event.part, TextPart):
            self._freeze()
            self.text = event.part.content
        elif isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
            self.text += event.delta.content_delta
        elif isinstance(event, FunctionToolCallEvent):
            self._freeze()
            self.calling[event.tool_call_id] = event.part.tool_name
        elif isinstance(event, FunctionToolResultEvent) and event.tool_call_id in self.calling:
            self.pieces.append(f'> Called tool `{self.calling.pop(event.tool_call_id)}`.')
        else:
            return
        shown = [*self.pieces, *([self.text] if self.text else [])]
        shown += [f'> _Calling tool `{name}`…_' for name in self.calling.values()]
        self.live.update(self.markdown('\n\n'.join(shown), code_theme=CODE_THEME))

    def _freeze(self) -> None:
        if self.text:
            self.pieces.append(self.text)
            self.text = ''


NO_BANNER_ENV = 'EDGEWISE_NO_BANNER'
"""The environment variable that, when set (to anything), turns the chat's banner off like `BANNER_ENABLED`."""


def banner_enabled() -> bool:
    """Whether a chat starts with its banner: `edgewise.agent.BANNER_ENABLED` is true and neither `EDGEWISE_NO_BANNER`
    nor pydantic-ai's `PYDANTIC_AI_NO_BANNER` is set."""
    # The flag is an attribute of the package that users assign to (pydantic-ai's contract), so it is read there
    # when the chat starts; the package is loaded by then (this module is reached through it).
    package = sys.modules.get('edgewise.agent')
    enabled = getattr(package, 'BANNER_ENABLED', True)
    return bool(enabled) and NO_BANNER_ENV not in os.environ and 'PYDANTIC_AI_NO_BANNER' not in os.environ


def _banner(prog_name: str, model: object) -> str:
    """The line a chat starts with: the program, the Edgewise version, the model and how to leave."""
    from .._version import __version__

    if model is None:
        shown = 'no model'
    elif isinstance(model, str):
        shown = model
    else:
        system, name = getattr(model, 'system', None), getattr(model, 'model_name', None)
        shown = f'{system}:{name}' if system and name else str(name or type(model).__name__)
    return f'{prog_name} · edgewise-agent {__version__} · model {shown} · /exit to quit'


@dataclass
class _Chat:
    """A chat's state: its history, its mode and its usage, and the options of each of its runs."""

    agent: Any  # an `AbstractAgent` (not imported: `abstract` imports this module)
    rich: _Rich
    console: Console
    run_options: dict[str, Any]
    messages: list[ModelMessage]
    multiline: bool = False
    usage: RunUsage = field(default_factory=RunUsage)
    turns: int = 0

    async def ask(self, prompt: str) -> None:
        """Run the agent on `prompt`, streaming its answer; print the error instead when the run fails."""
        turn_usage = RunUsage()  # the run's own, so that `usage_limits` hold per run
        live = self.rich.live('', console=self.console, refresh_per_second=15, vertical_overflow='ellipsis')
        answer = _StreamedAnswer(live, self.rich.markdown)
        try:
            with live:
                options = {**self.run_options, 'message_history': self.messages, 'usage': turn_usage}
                async with self.agent.run_stream_events(prompt, **options) as events:
                    async for event in events:
                        if event.event_kind == 'agent_run_result':
                            self.messages = event.result.all_messages()
                        else:
                            answer.show(event)
            # Live ends its last frame with a new line on a terminal only.
            self.console.line(0 if self.console.is_terminal else 1)
            self.turns += 1
        except Exception as error:
            self.console.print(f'\n[red]{type(error).__name__}:[/red] {error}', highlight=False)
            if error.__cause__ is not None:
                self.console.print(f'[dim]Caused by: {error.__cause__}[/dim]', highlight=False)
        finally:
            self.usage.incr(turn_usage)

    async def command(self, command: str, prog_name: str) -> bool:
        """Carry out a `/` command (lowercased, spaces as `-`); whether it ends the chat."""
        if command == '/exit':
            self.console.print('[dim]Exiting…[/dim]')
            return True
        if command == '/multiline':
            self.multiline = not self.multiline
            if self.multiline:
                self.console.print('Multiline mode on: a prompt ends at an empty line.')
            else:
                self.console.print('Multiline mode off.')
        elif command == '/markdown':
            self._print_markdown()
        elif command == '/cp':
            await self._copy()
        elif command == '/usage' or command.startswith('/usage-'):
            option = command.removeprefix('/usage').strip('-')
            if option in ('', 'json'):
                self.console.print(self._usage_text(prog_name, as_json=option == 'json'), soft_wrap=True, markup=False)
            else:
                self.console.print(f'[red]Unknown `/usage` option[/red] [magenta]`{command}`[/magenta]')
        else:
            self.console.print(f'[red]Unknown command[/red] [magenta]`{command}`[/magenta]')
        return False

    def _print_markdown(self) -> None:
        text = _last_text(self.messages)
        if text is None:
            self.console.print('[dim]No markdown output available.[/dim]')
            return
        self.console.print('[dim]Markdown output of last question:[/dim]\n')
        self.console.print(
            self.rich.syntax(text, 'markdown', theme=CODE_THEME, word_wrap=True, background_color='default')
        )

    async def _copy(self) -> None:
        text = (_last_text(self.messages) or '').strip()
        if not text:
            self.console.print('[dim]No output available to copy.[/dim]')
            return
        try:
            used = await anyio.to_thread.run_sync(_copy_to_clipboard, text)
        except (OSError, subprocess.CalledProcessError) as error:
            self.console.print(f'[red]Could not copy:[/red] {error}', highlight=False)
            return
        if used is None:
            names = ', '.join(command[0] for command in CLIPBOARD_COMMANDS)
            self.console.print(f'[dim]No clipboard command found on PATH (one of: {names}).[/dim]')
        else:
            self.console.print('[dim]Copied last output to clipboard.[/dim]')

    def _usage_text(self, prog_name: str, *, as_json: bool) -> str:
        usage = self.usage
        if as_json:
            counts = {
                'turns': self.turns,
                'input_tokens': usage.input_tokens,
                'output_tokens': usage.output_tokens,
                'total_tokens': usage.total_tokens,
                'requests': usage.requests,
                'tool_calls': usage.tool_calls,
            }
            return json.dumps(counts)
        return (
            f'{prog_name} usage (session total)\n\n'
            f'Turns:      {self.turns:,}\n'
            f'Tokens:     {usage.total_tokens:,}\n'
            f'  Input:    {usage.input_tokens:,}\n'
            f'  Output:   {usage.output_tokens:,}\n'
            f'Requests:   {usage.requests:,}\n'
            f'Tool calls: {usage.tool_calls:,}'
        )


async def run_chat(
    agent: Any,
    *,
    prog_name: str,
    deps: Any,
    message_history: Sequence[ModelMessage] | None,
    model_settings: ModelSettings | None,
    usage_limits: UsageLimits | None,
    model: Model | KnownModelName | str | None,
) -> None:
    """Chat with `agent` on standard input and output until `/exit` or the end of input."""
    rich = _Rich.load()
    console = rich.console()
    options: dict[str, Any] = {'deps': deps, 'model_settings': model_settings, 'usage_limits': usage_limits}
    if model is not None:
        options['model'] = model
    chat = _Chat(agent, rich, console, options, list(message_history or []))
    if banner_enabled():
        console.print(_banner(prog_name, model if model is not None else agent.model), highlight=False, markup=False)
    while True:
        try:
            text = await _read_prompt(f'{prog_name} ➤ ', chat.multiline)
        except (EOFError, KeyboardInterrupt):
            return
        if not text.strip():
            continue
        command = text.lower().strip().replace(' ', '-')
        if command.startswith('/'):
            if await chat.command(command, prog_name):
                return
            continue
        await chat.ask(text)
