"""`Agent.iter` node by node, `capture_run_messages`, `Agent.override`, `ALLOW_MODEL_REQUESTS`, FunctionModel's
`AgentInfo`, model settings, message histories from JSON, and an empty model response."""

from __future__ import annotations

import json
from dataclasses import dataclass

import anyio

from edgewise.agent import (
    Agent,
    CallToolsNode,
    ModelRequestNode,
    RunContext,
    UnexpectedModelBehavior,
    UserPromptNode,
    capture_run_messages,
    models,
)
from edgewise.agent.messages import ModelMessage, ModelMessagesTypeAdapter, ModelResponse, TextPart, ToolCallPart
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.test import TestModel
from edgewise.graph import End
from tests.compat._show import show_error, show_messages, usage_line


@dataclass
class Shop:
    name: str


shop_agent = Agent('test', deps_type=Shop, instructions='Be brief.', model_settings={'temperature': 0.5})


@shop_agent.tool
def shop_name(ctx: RunContext[Shop]) -> str:
    return ctx.deps.name


async def walk() -> None:
    async with shop_agent.iter('hello', deps=Shop(name='Corner')) as run:
        async for node in run:
            if isinstance(node, UserPromptNode):
                print('UserPromptNode', repr(node.user_prompt))
            elif isinstance(node, ModelRequestNode):
                print('ModelRequestNode', [p.part_kind for p in node.request.parts])
            elif isinstance(node, CallToolsNode):
                print('CallToolsNode', [p.part_kind for p in node.model_response.parts])
            else:
                print(type(node).__name__, node.data.output)
        print(usage_line(run.usage))
        assert run.result is not None
        print(repr(run.result.output))

    async with shop_agent.iter('step by step', deps=Shop(name='Kiosk')) as run:
        step = run.next_node
        kinds = []
        while not isinstance(step, End):
            kinds.append(type(step).__name__)
            step = await run.next(step)
        print(kinds, step.data.output)


anyio.run(walk)

print('== override')
with shop_agent.override(model=TestModel(custom_output_text='overridden'), deps=Shop(name='Other')):
    print(repr(shop_agent.run_sync('x', deps=Shop(name='ignored')).output))
print(repr(shop_agent.run_sync('x', deps=Shop(name='Back')).output))

print('== FunctionModel sees')


def inspect_info(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    print('  instructions:', repr(info.instructions))
    print('  model_settings:', info.model_settings)
    print('  function tools:', [t.name for t in info.function_tools])
    print('  messages:', [m.kind for m in messages])
    return ModelResponse(parts=[TextPart('seen')])


with shop_agent.override(model=FunctionModel(inspect_info)):
    print(repr(shop_agent.run_sync('x', deps=Shop(name='F'), model_settings={'max_tokens': 10}).output))

print('== capture_run_messages')


def broken(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[ToolCallPart('shop_name', {'unexpected': 1}, f'b{len(messages)}')])


with capture_run_messages() as captured:
    try:
        shop_agent.run_sync('x', deps=Shop(name='C'), model=FunctionModel(broken))
    except UnexpectedModelBehavior as error:
        show_error(error)
show_messages(captured)

print('== ALLOW_MODEL_REQUESTS')
models.ALLOW_MODEL_REQUESTS = False
try:
    print(repr(Agent(TestModel()).run_sync('x').output))
    print(repr(Agent(FunctionModel(inspect_info)).run_sync('x').output))
finally:
    models.ALLOW_MODEL_REQUESTS = True

print('== history from JSON')
first = shop_agent.run_sync('one', deps=Shop(name='J'))
data = json.loads(first.all_messages_json())
# pydantic-ai 1.107 also writes `conversation_id`, `provider_url` and `state` (docs/compatibility.md), and 2.68 a
# response's `model_id`, `failed_attempts`, `canonical_system`, `workspace_ref` and `history_digest`
newer = {'conversation_id', 'provider_url', 'state', 'model_id', 'failed_attempts'}
newer |= {'canonical_system', 'workspace_ref', 'history_digest'}
print(sorted(set(data[0]) - newer), sorted(set(data[1]) - newer))
print([part['part_kind'] for message in data for part in message['parts']])
history = ModelMessagesTypeAdapter.validate_python(data)
second = shop_agent.run_sync('two', deps=Shop(name='J'), message_history=history)
show_messages(second.new_messages())

print('== empty response')


def silent(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    if len(messages) == 1:
        return ModelResponse(parts=[])
    return ModelResponse(parts=[TextPart('spoke at last')])


result = Agent(FunctionModel(silent)).run_sync('x')
print(repr(result.output))
show_messages(result.all_messages())
