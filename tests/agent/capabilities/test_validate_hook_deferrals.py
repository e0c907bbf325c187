"""A tool call deferred from a validation hook (pydantic-ai 2.x): once its arguments are valid (`after_tool_validate`,
or `wrap_tool_validate` after its handler) the call is deferred; before that (`before_tool_validate`,
`wrap_tool_validate` before its handler, `on_tool_validate_error`) it is a `UserError`."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import pytest

from edgewise.agent import Agent, ModelRetry, RunContext
from edgewise.agent.capabilities import AbstractCapability
from edgewise.agent.exceptions import ApprovalRequired, CallDeferred, UserError
from edgewise.agent.messages import ModelMessage, ModelResponse, RetryPromptPart, ToolCallPart
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.test import TestModel
from edgewise.agent.tool_manager import ToolManager
from edgewise.agent.tools import DeferredToolRequests, ToolDefinition
from edgewise.agent.toolsets import FunctionToolset
from edgewise.agent.usage import RunUsage

pytestmark = pytest.mark.anyio


@dataclass
class DefersAt(AbstractCapability[Any]):
    """Raises `error` (with metadata naming the place) at the hook position `where`."""

    where: str
    error: type[CallDeferred] | type[ApprovalRequired] = ApprovalRequired

    def _maybe(self, position: str) -> None:
        if self.where == position:
            raise self.error(metadata={'from': position})

    async def before_tool_validate(self, ctx: RunContext[Any], *, call: ToolCallPart, tool_def: ToolDefinition,
                                   args: Any) -> Any:  # fmt: skip
        self._maybe('before_tool_validate')
        return args

    async def wrap_tool_validate(self, ctx: RunContext[Any], *, call: ToolCallPart, tool_def: ToolDefinition,
                                 args: Any, handler: Any) -> Any:  # fmt: skip
        self._maybe('wrap_before')
        validated = await handler(args)
        self._maybe('wrap_after')
        return validated

    async def after_tool_validate(self, ctx: RunContext[Any], *, call: ToolCallPart, tool_def: ToolDefinition,
                                  args: Any) -> Any:  # fmt: skip
        self._maybe('after_tool_validate')
        return args


def agent_with(capability: AbstractCapability[Any], executed: list[int]) -> Agent[None, str | DeferredToolRequests]:
    agent: Agent[None, str | DeferredToolRequests] = Agent(
        TestModel(), output_type=[str, DeferredToolRequests], capabilities=[capability]
    )

    @agent.tool_plain(retries=0)
    def my_tool(x: int) -> int:
        executed.append(x)
        return x

    return agent


@pytest.mark.parametrize('error', [ApprovalRequired, CallDeferred])
@pytest.mark.parametrize('where', ['after_tool_validate', 'wrap_after'])
async def test_a_hook_defers_a_call_once_its_arguments_are_valid(
    where: str, error: type[CallDeferred] | type[ApprovalRequired]
) -> None:
    executed: list[int] = []
    output = (await agent_with(DefersAt(where, error), executed).run('call it')).output
    assert isinstance(output, DeferredToolRequests)
    deferred = output.approvals if error is ApprovalRequired else output.calls
    assert [call.tool_name for call in deferred] == ['my_tool']
    assert output.metadata == {deferred[0].tool_call_id: {'from': where}}
    assert executed == []


@pytest.mark.parametrize('error', [ApprovalRequired, CallDeferred])
@pytest.mark.parametrize(('where', 'hook'), [('before_tool_validate', 'before_tool_validate'),
                                             ('wrap_before', 'wrap_tool_validate')])  # fmt: skip
async def test_a_hook_deferring_before_validation_is_an_error(
    where: str, hook: str, error: type[CallDeferred] | type[ApprovalRequired]
) -> None:
    with pytest.raises(UserError, match=re.escape(f'`{hook}` raised `{error.__name__}`')):
        await agent_with(DefersAt(where, error), []).run('call it')


async def test_the_error_hook_cannot_defer() -> None:
    @dataclass
    class DefersOnError(AbstractCapability[Any]):
        async def on_tool_validate_error(self, ctx: RunContext[Any], *, call: ToolCallPart, tool_def: ToolDefinition,
                                         args: Any, error: Any) -> Any:  # fmt: skip
            raise ApprovalRequired()

    def bad_args(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[ToolCallPart('greet', '{"wrong": 1}')])

    agent: Agent[None, str | DeferredToolRequests] = Agent(
        FunctionModel(bad_args), output_type=[str, DeferredToolRequests], capabilities=[DefersOnError()]
    )

    @agent.tool_plain
    def greet(name: str) -> str:  # pragma: no cover - never valid
        return name

    with pytest.raises(UserError) as caught:
        await agent.run('greet')
    assert str(caught.value) == (
        '`on_tool_validate_error` raised `ApprovalRequired`, but a tool call can only be deferred once its arguments '
        "have been validated. Raise it from `after_tool_validate`, from the tool's `args_validator`, or from "
        '`before_tool_execute` instead.'
    )


async def test_an_args_validator_deferral_passes_through_the_hooks() -> None:
    agent: Agent[None, str | DeferredToolRequests] = Agent(
        TestModel(), output_type=[str, DeferredToolRequests], capabilities=[DefersAt('nowhere')]
    )

    def needs_approval(ctx: RunContext[None], x: int) -> None:
        raise ApprovalRequired(metadata={'from': 'args_validator'})

    @agent.tool_plain(args_validator=needs_approval)
    def my_tool(x: int) -> int:  # pragma: no cover - deferred
        return x

    output = (await agent.run('call it')).output
    assert isinstance(output, DeferredToolRequests)
    assert [call.tool_name for call in output.approvals] == ['my_tool']


@dataclass
class Gate(AbstractCapability[Any]):
    """An `after_tool_validate` policy gate: records the arguments it sees, may reject the first call or change
    the arguments."""

    reject_first: bool = False
    rewrite: dict[str, Any] | None = None
    seen: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])

    async def after_tool_validate(self, ctx: RunContext[Any], *, call: ToolCallPart, tool_def: ToolDefinition,
                                  args: dict[str, Any]) -> dict[str, Any]:  # fmt: skip
        self.seen.append(dict(args))
        if self.reject_first and len(self.seen) == 1:
            raise ModelRetry('not allowed')
        return self.rewrite if self.rewrite is not None else args


def _deferring_tool(agent: Agent[None, str | DeferredToolRequests], retries: int = 0) -> None:
    def needs_approval(ctx: RunContext[None], x: int) -> None:
        raise ApprovalRequired(metadata={'from': 'args_validator'})

    @agent.tool_plain(args_validator=needs_approval, retries=retries)
    def my_tool(x: int) -> int:  # pragma: no cover - deferred
        return x


async def test_after_tool_validate_guards_a_call_the_args_validator_defers() -> None:
    gate = Gate()
    agent: Agent[None, str | DeferredToolRequests] = Agent(
        TestModel(), output_type=[str, DeferredToolRequests], capabilities=[gate]
    )
    _deferring_tool(agent)
    output = (await agent.run('call it')).output
    assert isinstance(output, DeferredToolRequests)
    assert [(c.tool_name, c.args) for c in output.approvals] == [('my_tool', {'x': 0})]
    assert output.metadata == {output.approvals[0].tool_call_id: {'from': 'args_validator'}}
    assert gate.seen == [{'x': 0}]


async def test_after_tool_validate_rejecting_a_deferred_call_sends_the_retry() -> None:
    gate = Gate(reject_first=True)
    agent: Agent[None, str | DeferredToolRequests] = Agent(
        TestModel(), output_type=[str, DeferredToolRequests], capabilities=[gate]
    )
    _deferring_tool(agent, retries=1)
    result = await agent.run('call it')
    retries = [p.content for m in result.all_messages() for p in m.parts if isinstance(p, RetryPromptPart)]
    assert retries == ['not allowed']
    assert isinstance(result.output, DeferredToolRequests)
    assert gate.seen == [{'x': 0}, {'x': 0}]


async def test_after_tool_validate_deferring_replaces_the_args_validators_deferral() -> None:
    agent: Agent[None, str | DeferredToolRequests] = Agent(
        TestModel(),
        output_type=[str, DeferredToolRequests],
        capabilities=[DefersAt('after_tool_validate', CallDeferred)],
    )
    _deferring_tool(agent)
    output = (await agent.run('call it')).output
    assert isinstance(output, DeferredToolRequests)
    assert (output.approvals, [c.tool_name for c in output.calls]) == ([], ['my_tool'])
    assert output.metadata == {output.calls[0].tool_call_id: {'from': 'after_tool_validate'}}


async def test_a_deferred_call_carries_the_arguments_after_tool_validate_gave() -> None:
    toolset: FunctionToolset[None] = FunctionToolset()

    def needs_approval(ctx: RunContext[None], x: int) -> None:
        raise ApprovalRequired()

    @toolset.tool_plain(args_validator=needs_approval)
    def my_tool(x: int) -> int:  # pragma: no cover - deferred
        return x

    gate = Gate(rewrite={'x': 99})
    ctx: RunContext[None] = RunContext(deps=None, model=TestModel(), usage=RunUsage())
    manager = await ToolManager(toolset, root_capability=gate).for_run_step(ctx)
    validated = await manager.validate_tool_call(ToolCallPart('my_tool', {'x': 1}, tool_call_id='c1'))
    assert (validated.args_valid, validated.validated_args) == (True, {'x': 99})
    assert isinstance(validated.deferral, ApprovalRequired)
    assert gate.seen == [{'x': 1}]
