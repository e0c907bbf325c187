"""pydantic-ai 1.107 parity: output tool descriptions, `TestModel(seed=)` choosing among output tools, `StructuredDict`
of a model's schema, `AgentRunResult.timestamp` and `RunContext.available_tool_names`."""

from __future__ import annotations

import re
from typing import Any

import pydantic
import pytest

from edgewise.agent import Agent, RunContext, StructuredDict, ToolOutput, UserError
from edgewise.agent.capabilities import PrepareTools
from edgewise.agent.models.test import TestModel
from edgewise.agent.tools import ToolDefinition
from edgewise.agent.usage import RunUsage

pytestmark = pytest.mark.anyio


class Plain(pydantic.BaseModel):
    a: int


class Documented(pydantic.BaseModel):
    """A documented model."""

    b: str


PLAIN_OR_DOCUMENTED: Any = Plain | Documented


async def test_union_member_with_docstring_keeps_it_without_type_prefix() -> None:
    model = TestModel()
    await Agent(model, output_type=PLAIN_OR_DOCUMENTED).run('hi')
    params = model.last_model_request_parameters
    assert params is not None
    described = {tool.name: tool.description for tool in params.output_tools}
    assert described == {
        'final_result_Plain': 'Plain: The final response which ends this conversation',
        'final_result_Documented': 'A documented model.',
    }
    # the docstring moves from the schema to the description: it is not sent twice
    assert all('description' not in tool.parameters_json_schema for tool in params.output_tools)


async def test_tool_output_description_is_joined_with_the_docstring() -> None:
    model = TestModel()
    await Agent(model, output_type=ToolOutput(Documented, description='Given')).run('hi')
    params = model.last_model_request_parameters
    assert params is not None
    [tool] = params.output_tools
    assert tool.description == 'Given. A documented model.'
    assert 'description' not in tool.parameters_json_schema


async def test_single_output_type_without_docstring_gets_the_default() -> None:
    model = TestModel()
    await Agent(model, output_type=Plain).run('hi')
    params = model.last_model_request_parameters
    assert params is not None
    assert [tool.description for tool in params.output_tools] == ['The final response which ends this conversation']


async def test_test_model_seed_picks_the_output_tool() -> None:
    agent = Agent(TestModel(), output_type=PLAIN_OR_DOCUMENTED)
    first = await agent.run('hi')
    second = await agent.run('hi', model=TestModel(seed=1))
    assert isinstance(first.output, Plain)
    assert isinstance(second.output, Documented)


class Leaf(pydantic.BaseModel):
    x: int


class Tree(pydantic.BaseModel):
    leaf: Leaf


class Node(pydantic.BaseModel):
    nodes: list[Node]


def test_structured_dict_takes_a_model_schema_with_a_top_level_ref() -> None:
    tree = StructuredDict(Tree.model_json_schema())
    schema = pydantic.TypeAdapter(tree).json_schema()
    assert schema['title'] == 'Tree'
    assert schema['properties']['leaf']['properties'] == {'x': {'title': 'X', 'type': 'integer'}}


def test_structured_dict_rejects_a_recursive_model_schema() -> None:
    with pytest.raises(UserError, match='does not currently support recursive `\\$ref`s'):
        StructuredDict(Node.model_json_schema())
    with pytest.raises(UserError, match='Schema must be an object'):
        StructuredDict({'type': 'string'})


async def test_run_result_timestamp_is_the_last_response_timestamp() -> None:
    result = await Agent(TestModel()).run('hi')
    assert result.timestamp == result.response.timestamp
    assert result.timestamp.tzinfo is not None


async def test_run_context_lists_the_step_tools() -> None:
    seen_in_prepare: list[set[str]] = []
    seen_in_tool: list[set[str]] = []

    async def prepare(ctx: RunContext[object], tool_defs: list[ToolDefinition]) -> list[ToolDefinition]:
        seen_in_prepare.append(ctx.available_tool_names)
        assert set(ctx.tools) == {tool_def.name for tool_def in tool_defs}
        return [tool_def for tool_def in tool_defs if tool_def.name != 'hidden']

    agent = Agent(TestModel(), capabilities=[PrepareTools(prepare)])

    @agent.tool
    def probe(ctx: RunContext[object]) -> str:
        seen_in_tool.append(ctx.available_tool_names)
        return 'ok'

    @agent.tool_plain
    def hidden() -> str:
        return 'never called'

    result = await agent.run('hi')
    assert seen_in_prepare[0] == {'probe', 'hidden'}  # before the hook filters them
    assert seen_in_tool == [{'probe'}]  # what the model was offered
    assert 'never called' not in result.output


async def test_override_toolsets_replaces_the_run_toolsets_too() -> None:
    from edgewise.agent.toolsets import FunctionToolset

    extra: FunctionToolset[object] = FunctionToolset()

    @extra.tool_plain
    def bar() -> str:
        return 'from bar'

    agent = Agent(TestModel())
    assert 'from bar' in (await agent.run('hi', toolsets=[extra])).output
    with agent.override(toolsets=[]):
        assert (await agent.run('hi', toolsets=[extra])).output == 'success (no tool calls)'


async def test_output_tool_return_content_without_a_matching_return_is_a_lookup_error() -> None:
    result = await Agent(TestModel(), output_type=int).run('hi')
    assert result.all_messages(output_tool_return_content='done')[-1].parts[0].content == 'done'  # type: ignore[union-attr]
    result._output_tool_name = 'wrong'  # pyright: ignore[reportPrivateUsage]
    with pytest.raises(LookupError, match=re.escape("No tool call found with tool name 'wrong'.")):
        result.all_messages(output_tool_return_content='done')
    text = await Agent(TestModel()).run('hi')
    with pytest.raises(
        ValueError, match=re.escape('Cannot set output tool return content when the return type is `str`.')
    ):
        text.all_messages(output_tool_return_content='done')


async def test_run_context_agent_is_the_running_agent() -> None:
    agent = Agent(TestModel(), name='probe_agent', output_type=int)
    seen: list[Any] = []

    @agent.tool
    def probe(ctx: RunContext[object]) -> str:
        seen.append(ctx.agent)
        return 'ok'

    @agent.output_validator
    def check(ctx: RunContext[object], output: int) -> int:
        seen.append(ctx.agent)
        return output

    await agent.run('hi')
    assert seen == [agent, agent]
    assert RunContext(deps=None, model=TestModel(), usage=RunUsage()).agent is None
