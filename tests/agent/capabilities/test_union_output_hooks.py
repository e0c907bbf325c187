"""The output hooks on an output of several types (native or prompted): the hooks see the chosen type's value,
and a value they give is processed as the type it is an instance of."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from edgewise.agent import Agent, ModelRetry, RunContext
from edgewise.agent.capabilities import AbstractCapability, OutputContext, RawOutput, WrapOutputProcessHandler
from edgewise.agent.messages import ModelMessage, ModelResponse, TextPart
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.output import PromptedOutput

pytestmark = pytest.mark.anyio


class Cat(BaseModel):
    name: str


class Dog(BaseModel):
    name: str


def _answering(text: str) -> FunctionModel:
    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse([TextPart(text)])

    return FunctionModel(model)


def _prompted(*outputs: Any) -> Any:
    """Prompted output of `outputs` (typed `Any`: the tests' outputs are of several types)."""
    return PromptedOutput(list(outputs))


@dataclass
class Seen(AbstractCapability[Any]):
    """Records the value each output hook gets."""

    values: list[tuple[str, Any]] = field(default_factory=list)

    async def after_output_validate(self, ctx: RunContext[Any], *, output_context: OutputContext, output: Any) -> Any:
        self.values.append(('after_validate', output))
        return output

    async def before_output_process(self, ctx: RunContext[Any], *, output_context: OutputContext, output: Any) -> Any:
        self.values.append(('before_process', output))
        return output


@dataclass
class Recover(AbstractCapability[Any]):
    """Answers an output that does not validate with `value`."""

    value: Any

    async def on_output_validate_error(
        self,
        ctx: RunContext[Any],
        *,
        output_context: OutputContext,
        output: RawOutput,
        error: ValidationError | ModelRetry,
    ) -> Any:
        return self.value


def shout(name: str) -> str:
    return name.upper()


def pair(left: int, right: int) -> str:
    return f'{left}+{right}'


async def test_the_hooks_see_the_chosen_types_value() -> None:
    seen = Seen()
    agent = Agent(
        _answering('{"result": {"kind": "Dog", "data": {"name": "Rex"}}}'),
        output_type=_prompted(Cat, Dog),
        capabilities=[seen],
    )
    result = await agent.run('go')
    assert result.output == Dog(name='Rex')
    assert seen.values == [('after_validate', Dog(name='Rex')), ('before_process', Dog(name='Rex'))]


async def test_the_hooks_see_the_parameter_of_a_one_parameter_output_function() -> None:
    seen = Seen()
    agent = Agent(
        _answering('{"result": {"kind": "shout", "data": {"name": "rex"}}}'),
        output_type=_prompted(shout, Cat),
        capabilities=[seen],
    )
    assert (await agent.run('go')).output == 'REX'
    assert seen.values == [('after_validate', 'rex'), ('before_process', 'rex')]


async def test_the_arguments_of_a_chosen_several_parameter_function_reach_it() -> None:
    seen = Seen()
    agent = Agent(
        _answering('{"result": {"kind": "pair", "data": {"left": 1, "right": 2}}}'),
        output_type=_prompted(pair, Cat),
        capabilities=[seen],
    )
    assert (await agent.run('go')).output == '1+2'
    assert seen.values == [('after_validate', {'left': 1, 'right': 2}), ('before_process', {'left': 1, 'right': 2})]


async def test_a_recovered_value_is_processed_as_the_type_it_is() -> None:
    agent = Agent(_answering('{"bad": "data"}'), output_type=_prompted(Cat, shout), capabilities=[Recover('rex')])
    assert (await agent.run('go')).output == 'REX'


async def test_a_recovered_primitive_is_processed_as_its_type() -> None:
    agent = Agent(_answering('{"bad": "data"}'), output_type=_prompted(Cat, int), capabilities=[Recover(7)])
    assert (await agent.run('go')).output == 7


async def test_a_recovered_list_matches_a_generic_list_type() -> None:
    agent = Agent(
        _answering('{"bad": "data"}'),
        output_type=_prompted(Cat, list[Dog]),
        capabilities=[Recover([Dog(name='Rex')])],
    )
    assert (await agent.run('go')).output == [Dog(name='Rex')]


async def test_a_value_of_another_type_given_after_validation_is_processed_as_that_type() -> None:
    @dataclass
    class Swap(AbstractCapability[Any]):
        async def after_output_validate(
            self, ctx: RunContext[Any], *, output_context: OutputContext, output: Any
        ) -> Any:
            return 'felix'

    agent = Agent(
        _answering('{"result": {"kind": "Cat", "data": {"name": "Tom"}}}'),
        output_type=_prompted(Cat, shout),
        capabilities=[Swap()],
    )
    assert (await agent.run('go')).output == 'FELIX'


async def test_a_value_of_no_output_type_is_the_output_as_it_is() -> None:
    @dataclass
    class Swap(AbstractCapability[Any]):
        async def wrap_output_process(
            self, ctx: RunContext[Any], *, output_context: OutputContext, output: Any, handler: WrapOutputProcessHandler
        ) -> Any:
            return await handler(99)

    agent = Agent(
        _answering('{"result": {"kind": "Cat", "data": {"name": "Tom"}}}'),
        output_type=_prompted(pair, Cat),
        capabilities=[Swap()],
    )
    assert (await agent.run('go')).output == 99


async def test_a_dict_recovered_is_not_taken_for_the_arguments_of_a_function_not_chosen() -> None:
    agent = Agent(
        _answering('{"bad": "data"}'),
        output_type=_prompted(pair, Cat),
        capabilities=[Recover({'left': 1, 'right': 2})],
    )
    assert (await agent.run('go')).output == {'left': 1, 'right': 2}
