"""Agents with TestModel: run, run_sync, system prompts, instructions, deps, tools, message history, usage."""

from __future__ import annotations

from dataclasses import dataclass

import anyio

from edgewise.agent import Agent, RunContext
from edgewise.agent.messages import ModelMessagesTypeAdapter
from edgewise.agent.models.test import TestModel
from tests.compat._show import show_messages, usage_line


@dataclass
class Library:
    owner: str
    books: dict[str, int]


librarian = Agent(
    TestModel(),
    deps_type=Library,
    system_prompt='You look after a small library.',
    instructions='Answer in one sentence.',
)


@librarian.system_prompt
def owner_prompt(ctx: RunContext[Library]) -> str:
    return f'The library belongs to {ctx.deps.owner}.'


@librarian.instructions
async def count_instructions(ctx: RunContext[Library]) -> str:
    return f'There are {len(ctx.deps.books)} titles.'


@librarian.tool
def copies(ctx: RunContext[Library], title: str) -> int:
    """How many copies of a title the library holds.

    Args:
        title: the title of the book
    """
    print('copies called with', repr(title), 'retry', ctx.retry, 'step', ctx.run_step, ctx.tool_name)
    return ctx.deps.books.get(title, 0)


@librarian.tool_plain
def opening_hours(day: str = 'monday') -> str:
    """When the library opens on a day."""
    return f'{day}: 9-17'


deps = Library(owner='Ada', books={'Dune': 2, 'Emma': 1})

result = librarian.run_sync('How many copies of Dune?', deps=deps)
print(repr(result.output))
show_messages(result.all_messages())
print(usage_line(result.usage))
print(len(result.new_messages()), len(result.all_messages()))

follow_up = librarian.run_sync('And Emma?', deps=deps, message_history=result.new_messages())
show_messages(follow_up.new_messages())
print(len(follow_up.all_messages()), usage_line(follow_up.usage))

as_json = result.all_messages_json()
reloaded = ModelMessagesTypeAdapter.validate_json(as_json)
print(len(reloaded), [m.kind for m in reloaded], reloaded == result.all_messages())

plain = Agent('test', output_type=str)
print(repr(plain.run_sync('hi').output))
print(repr(Agent(TestModel(custom_output_text='fixed answer')).run_sync('x').output))
print(repr(plain.run_sync('hi', model=TestModel(custom_output_text='other model')).output))


async def main() -> None:
    run_result = await librarian.run('opening hours?', deps=deps, model=TestModel(call_tools=['opening_hours']))
    print(repr(run_result.output))
    show_messages(run_result.new_messages())


anyio.run(main)
