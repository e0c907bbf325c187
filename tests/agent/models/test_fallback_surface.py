"""`FallbackModel`'s public surface as pydantic-ai 2.x has it: a dataclass whose one public field is `models`, its
constructor's parameters, and its repr."""

from __future__ import annotations

import dataclasses
import inspect
import re
from typing import Any

import pytest

from edgewise.agent import Agent
from edgewise.agent.exceptions import ModelAPIError, UserError
from edgewise.agent.messages import ModelMessage, ModelResponse, TextPart
from edgewise.agent.models.fallback import FallbackModel
from edgewise.agent.models.function import AgentInfo, FunctionModel


def says(text: str) -> FunctionModel:
    return FunctionModel(lambda messages, info: ModelResponse(parts=[TextPart(text)]), model_name=text)


def fails(error: Exception) -> FunctionModel:
    def fail(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise error

    return FunctionModel(fail, model_name='failing')


def test_fallback_model_is_a_dataclass_whose_public_field_is_models() -> None:
    first, second = says('first'), says('second')
    model = FallbackModel(first, second)

    assert dataclasses.is_dataclass(FallbackModel)
    assert dataclasses.is_dataclass(model)
    assert [f.name for f in dataclasses.fields(model) if not f.name.startswith('_')] == ['models']
    assert model.models == [first, second]


def test_fallback_model_repr_names_the_model_and_its_models_not_its_predicates() -> None:
    model = FallbackModel(says('first'), says('second'), fallback_on=(KeyError,))

    assert repr(model) == (
        "FallbackModel(model_name='fallback:first,second', "
        "models=[FunctionModel(model_name='first'), FunctionModel(model_name='second')])"
    )
    assert [f.name for f in dataclasses.fields(model) if f.repr] == ['models']


def test_fallback_model_constructor_matches_pydantic_ai() -> None:
    parameters = inspect.signature(FallbackModel).parameters

    assert [(name, p.kind) for name, p in parameters.items()] == [
        ('default_model', inspect.Parameter.POSITIONAL_OR_KEYWORD),
        ('fallback_models', inspect.Parameter.VAR_POSITIONAL),
        ('fallback_on', inspect.Parameter.KEYWORD_ONLY),
    ]
    assert parameters['fallback_on'].default == (ModelAPIError,)
    assert FallbackModel(default_model=says('only')).models[0].model_name == 'only'


@pytest.mark.parametrize(
    ('fallback_on', 'named'),
    [('invalid', "fallback_on='invalid'"), (3, 'fallback_on=3'), ([KeyError, 'invalid'], "'invalid' in fallback_on")],
)
def test_fallback_on_that_is_not_a_condition_is_refused(fallback_on: Any, named: str) -> None:
    with pytest.raises(UserError, match=re.escape(f'FallbackModel got {named}: give exception types')):
        FallbackModel(says('first'), fallback_on=fallback_on)


def test_fallback_models_keep_identity_equality_and_stay_hashable() -> None:
    first = says('first')
    one, other = FallbackModel(first), FallbackModel(first)

    assert one == one
    assert one != other
    assert len({one, other}) == 2


def test_replacing_models_changes_the_chain() -> None:
    model = FallbackModel(says('first'))
    model.models = [says('second'), says('third')]

    assert model.model_name == 'fallback:second,third'
    assert 'second' in repr(model)


@pytest.mark.anyio
async def test_a_dataclass_fallback_model_still_falls_back_in_a_run() -> None:
    model = FallbackModel(fails(KeyError('k')), says('backup'), fallback_on=(KeyError,))

    result = await Agent(model).run('hi')

    assert result.output == 'backup'
    assert result.response.model_name == 'backup'
