"""`IncludeToolReturnSchemas` shows the model the return schema of the selected tools; tool selectors."""

from __future__ import annotations

import pytest

from edgewise.agent import Agent, RunContext, Tool, ToolDefinition
from edgewise.agent.capabilities import IncludeToolReturnSchemas
from edgewise.agent.models import ModelRequestParameters, prepare_return_schemas
from edgewise.agent.models.test import TestModel
from edgewise.agent.tools import ToolSelector, matches_tool_selector
from edgewise.agent.usage import RunUsage

pytestmark = pytest.mark.anyio


def double(x: int) -> int:
    return 2 * x


def echo(text: str) -> str:
    return text


async def _descriptions(*tools: Tool[None], selector: ToolSelector[None] = 'all') -> dict[str, str | None]:
    model = TestModel()
    await Agent(model, tools=list(tools), capabilities=[IncludeToolReturnSchemas(tools=selector)]).run('go')
    params = model.last_model_request_parameters
    assert params is not None
    return {t.name: t.description for t in params.function_tools}


async def test_every_tool_gets_its_return_schema_by_default() -> None:
    found = await _descriptions(Tool(double), Tool(echo))
    assert all('Return schema' in (d or '') for d in found.values())


async def test_only_the_named_tools_get_it() -> None:
    found = await _descriptions(Tool(double), Tool(echo), selector=['double'])
    assert 'Return schema' in (found['double'] or '')
    assert 'Return schema' not in (found['echo'] or '')


async def test_a_tool_that_opted_out_keeps_its_choice() -> None:
    found = await _descriptions(Tool(double, include_return_schema=False), Tool(echo))
    assert 'Return schema' not in (found['double'] or '')
    assert 'Return schema' in (found['echo'] or '')


async def test_tool_selectors() -> None:
    ctx = RunContext(deps=None, model=TestModel(), usage=RunUsage())
    tool = ToolDefinition(name='t', metadata={'group': {'kind': 'math', 'level': 2}, 'safe': True})

    async def is_t(ctx: RunContext[None], tool_def: ToolDefinition) -> bool:
        return tool_def.name == 't'

    assert await matches_tool_selector('all', ctx, tool)
    assert await matches_tool_selector(['t', 'u'], ctx, tool)
    assert not await matches_tool_selector(['u'], ctx, tool)
    assert await matches_tool_selector({'group': {'kind': 'math'}}, ctx, tool)
    assert not await matches_tool_selector({'group': {'kind': 'text'}}, ctx, tool)
    assert not await matches_tool_selector({'missing': 1}, ctx, tool)
    assert await matches_tool_selector(is_t, ctx, tool)
    assert not await matches_tool_selector(lambda c, d: False, ctx, tool)


def _params(*tool_defs: ToolDefinition) -> ModelRequestParameters:
    return ModelRequestParameters(function_tools=list(tool_defs))


ASKING = ToolDefinition(
    name='asking', description='Asks.', return_schema={'type': 'string'}, include_return_schema=True
)
NOT_ASKING = ToolDefinition(name='not_asking', return_schema={'type': 'integer'})


def test_prepare_return_schemas_adds_the_schema_to_the_description_for_a_model_without_return_schemas() -> None:
    prepared = prepare_return_schemas(_params(ASKING, NOT_ASKING), supports_tool_return_schema=False)
    assert prepared.function_tools == [
        ToolDefinition(name='asking', description='Asks.\n\nReturn schema:\n\n{\n  "type": "string"\n}',
                       include_return_schema=True),
        ToolDefinition(name='not_asking'),
    ]  # fmt: skip


def test_prepare_return_schemas_keeps_the_schema_for_a_model_with_return_schemas() -> None:
    prepared = prepare_return_schemas(_params(ASKING, NOT_ASKING), supports_tool_return_schema=True)
    assert prepared.function_tools == [ASKING, ToolDefinition(name='not_asking')]


def test_prepare_return_schemas_gives_the_parameters_back_when_nothing_changes() -> None:
    params = _params(ASKING, ToolDefinition(name='plain'))
    assert prepare_return_schemas(params, supports_tool_return_schema=True) is params
