"""`ToolManager` used on its own (pydantic-ai 2.x): it carries the retry counts from step to step, records the tools
that succeeded, can raise failures as they are (`wrap_validation_errors=False`), runs its capability's tool hooks
without being told which, and says which calls run alone (`is_sequential`)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from edgewise.agent import ModelRetry, RunContext, ToolDefinition
from edgewise.agent.capabilities import AbstractCapability
from edgewise.agent.exceptions import ToolFailed, ToolFailedError, ToolRetryError
from edgewise.agent.messages import ToolCallPart
from edgewise.agent.models.test import TestModel
from edgewise.agent.tool_manager import ToolManager
from edgewise.agent.toolsets import FunctionToolset
from edgewise.agent.usage import RunUsage

pytestmark = pytest.mark.anyio


def _ctx(step: int = 0, retries: dict[str, int] | None = None) -> RunContext[None]:
    return RunContext(deps=None, model=TestModel(), usage=RunUsage(), run_step=step, retries=retries or {})


def _toolset() -> FunctionToolset[None]:
    toolset: FunctionToolset[None] = FunctionToolset(max_retries=3)

    @toolset.tool_plain
    def double(x: int) -> int:
        if x < 0:
            raise ModelRetry('x must not be negative')
        return 2 * x

    @toolset.tool_plain
    def give_up() -> None:
        raise ToolFailed('not possible')

    return toolset


async def test_for_run_step_at_the_same_step_gives_the_manager_back() -> None:
    manager = await ToolManager(_toolset()).for_run_step(_ctx(step=1))
    assert await manager.for_run_step(_ctx(step=1)) is manager
    assert await manager.for_run_step(_ctx(step=2)) is not manager


async def test_retry_counts_carry_over_to_the_next_step() -> None:
    manager = await ToolManager(_toolset()).for_run_step(_ctx(step=0, retries={'give_up': 2, 'other': 1}))
    with pytest.raises(ToolRetryError):
        await manager.handle_call(ToolCallPart('double', {'x': -1}))
    with pytest.raises(ToolFailedError):
        await manager.handle_call(ToolCallPart('give_up', {}))

    next_manager = await manager.for_run_step(_ctx(step=1))

    assert next_manager.ctx is not None
    # `double` failed: one more; `other` was not called and `give_up` ended as failed (no retry spent): kept
    assert next_manager.ctx.retries == {'give_up': 2, 'other': 1, 'double': 1}
    assert (next_manager.failed_tools, next_manager.succeeded_tools) == (set(), set())


async def test_a_tool_that_fails_and_succeeds_in_one_step_counts_the_failure() -> None:
    manager = await ToolManager(_toolset()).for_run_step(_ctx(step=0, retries={'double': 1}))
    with pytest.raises(ToolRetryError):
        await manager.handle_call(ToolCallPart('double', {'x': -1}))
    assert await manager.handle_call(ToolCallPart('double', {'x': 2})) == 4
    assert (manager.failed_tools, manager.succeeded_tools) == ({'double'}, {'double'})

    next_manager = await manager.for_run_step(_ctx(step=1))

    assert next_manager.ctx is not None
    assert next_manager.ctx.retries == {'double': 2}


async def test_a_tool_that_only_succeeds_starts_its_count_again() -> None:
    manager = await ToolManager(_toolset()).for_run_step(_ctx(step=0, retries={'double': 2}))
    assert await manager.handle_call(ToolCallPart('double', {'x': 1})) == 2

    next_manager = await manager.for_run_step(_ctx(step=1))

    assert next_manager.ctx is not None
    assert next_manager.ctx.retries == {}


async def test_a_manager_that_does_not_carry_over_takes_each_steps_context_as_it_is() -> None:
    manager = await ToolManager(_toolset(), carry_over=False).for_run_step(_ctx(step=0))
    with pytest.raises(ToolRetryError):
        await manager.handle_call(ToolCallPart('double', {'x': -1}))

    same_step = await manager.for_run_step(_ctx(step=0, retries={'double': 5}))

    assert same_step is not manager
    assert same_step.ctx is not None
    assert same_step.ctx.retries == {'double': 5}


async def test_raw_mode_raises_a_validation_error_as_it_is_and_spends_no_retry() -> None:
    manager = await ToolManager(_toolset()).for_run_step(_ctx())
    with pytest.raises(ValidationError):
        await manager.handle_call(ToolCallPart('double', {'x': 'many'}), wrap_validation_errors=False)
    assert manager.failed_tools == set()


async def test_raw_mode_raises_a_model_retry_from_the_tool_as_it_is() -> None:
    manager = await ToolManager(_toolset()).for_run_step(_ctx())
    with pytest.raises(ModelRetry, match='x must not be negative'):
        await manager.handle_call(ToolCallPart('double', {'x': -1}), wrap_validation_errors=False)
    assert manager.failed_tools == set()


async def test_raw_mode_raises_tool_failed_from_the_tool_as_it_is() -> None:
    manager = await ToolManager(_toolset()).for_run_step(_ctx())
    with pytest.raises(ToolFailed, match='not possible'):
        await manager.handle_call(ToolCallPart('give_up', {}), wrap_validation_errors=False)


async def test_raw_mode_does_not_record_a_success() -> None:
    manager = await ToolManager(_toolset()).for_run_step(_ctx())
    assert await manager.handle_call(ToolCallPart('double', {'x': 3}), wrap_validation_errors=False) == 6
    assert manager.succeeded_tools == set()


class _Refusing(AbstractCapability[None]):
    """Fails every call in the hook `stage` names."""

    def __init__(self, stage: str) -> None:
        self.stage = stage

    async def before_tool_validate(
        self, ctx: RunContext[None], *, call: ToolCallPart, tool_def: ToolDefinition, args: str | dict[str, Any]
    ) -> str | dict[str, Any]:
        if self.stage == 'validate':
            raise ToolFailed('refused in validation')
        return args

    async def before_tool_execute(
        self, ctx: RunContext[None], *, call: ToolCallPart, tool_def: ToolDefinition, args: dict[str, Any]
    ) -> dict[str, Any]:
        if self.stage == 'execute':
            raise ToolFailed('refused in execution')
        return args  # pragma: no cover - the validation stage refused first

    async def after_tool_execute(
        self, ctx: RunContext[None], *, call: ToolCallPart, tool_def: ToolDefinition, args: dict[str, Any], result: Any
    ) -> Any:
        if self.stage == 'after':
            raise ValidationError.from_exception_data('checked', [{'type': 'missing', 'loc': ('x',), 'input': {}}])
        return result  # pragma: no cover - only the 'after' stage gets here


@pytest.mark.parametrize(
    ('stage', 'message'), [('validate', 'refused in validation'), ('execute', 'refused in execution')]
)
async def test_a_manager_given_a_capability_runs_its_tool_hooks_and_raw_mode_raises_their_failure(
    stage: str, message: str
) -> None:
    manager = await ToolManager(_toolset(), _Refusing(stage)).for_run_step(_ctx())
    with pytest.raises(ToolFailed, match=message):
        await manager.handle_call(ToolCallPart('double', {'x': 1}), wrap_validation_errors=False)


async def test_raw_mode_raises_a_hooks_validation_error_as_it_is() -> None:
    manager = await ToolManager(_toolset(), _Refusing('after')).for_run_step(_ctx())
    with pytest.raises(ValidationError):
        await manager.handle_call(ToolCallPart('double', {'x': 1}), wrap_validation_errors=False)
    assert manager.failed_tools == set()


async def test_is_sequential_names_the_calls_that_run_alone() -> None:
    toolset: FunctionToolset[None] = FunctionToolset()

    @toolset.tool_plain(sequential=True)
    def alone() -> None:
        pass  # pragma: no cover - only listed

    @toolset.tool_plain
    def together() -> None:
        pass  # pragma: no cover - only listed

    manager = await ToolManager(toolset).for_run_step(_ctx())

    assert [manager.is_sequential(ToolCallPart(name, {})) for name in ('alone', 'together', 'unknown')] == [
        True,
        False,
        False,
    ]
    assert manager.get_parallel_execution_mode() == 'parallel'
    with ToolManager.parallel_execution_mode('sequential'):
        assert manager.get_parallel_execution_mode() == 'sequential'
