"""Output types: models, scalars, unions, ToolOutput, NativeOutput, PromptedOutput, TextOutput, output functions,
output validators; driven by FunctionModel scripts that look at what the agent offers."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel
from typing_extensions import TypedDict

from edgewise.agent import Agent, ModelRetry, NativeOutput, PromptedOutput, RunContext, TextOutput, ToolOutput
from edgewise.agent.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from edgewise.agent.models.function import AgentInfo, FunctionModel
from tests.compat._show import show_error, show_messages


class City(BaseModel):
    name: str
    population: int


class Country(BaseModel):
    name: str


class Point(TypedDict):
    x: int
    y: int


def describe(info: AgentInfo) -> None:
    print('  allow_text_output:', info.allow_text_output)
    for tool in info.output_tools:
        print(
            '  output tool:', tool.name, repr(tool.description), json.dumps(tool.parameters_json_schema, sort_keys=True)
        )
    print('  function tools:', [t.name for t in info.function_tools])
    if info.model_request_parameters.output_object is not None:
        obj = info.model_request_parameters.output_object
        print('  output object:', obj.name, json.dumps(obj.json_schema, sort_keys=True))
    print('  output mode:', info.model_request_parameters.output_mode)


def answer_with(args: dict[str, Any]) -> FunctionModel:
    """A model that calls the first output tool with `args`, or answers `args` as JSON text when there is none."""

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        describe(info)
        if info.output_tools:
            return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args, tool_call_id='out-1')])
        return ModelResponse(parts=[TextPart(json.dumps(args))])

    return FunctionModel(model)


print('== model output')
result = Agent(answer_with({'name': 'Lyon', 'population': 520_000}), output_type=City).run_sync('a city')
print(repr(result.output))
show_messages(result.all_messages())

print('== scalar output')
print(repr(Agent(answer_with({'response': 7}), output_type=int).run_sync('a number').output))

print('== TypedDict output')
print(repr(Agent(answer_with({'x': 1, 'y': 2}), output_type=Point).run_sync('a point').output))

print('== list of types')
print(repr(Agent(answer_with({'name': 'Peru'}), output_type=[Country, City]).run_sync('a place').output))  # type: ignore[list-item]

print('== union with str')
print(repr(Agent(answer_with({'name': 'Chile'}), output_type=Country | str).run_sync('a place').output))  # type: ignore[arg-type]

print('== ToolOutput')
tool_output = ToolOutput(City, name='give_city', description='Return the city.')
print(repr(Agent(answer_with({'name': 'Oslo', 'population': 700_000}), output_type=tool_output).run_sync('x').output))

print('== several ToolOutputs')
several = [ToolOutput(City, name='city'), ToolOutput(Country, name='country')]
print(repr(Agent(answer_with({'name': 'Nice', 'population': 340_000}), output_type=several).run_sync('x').output))

print('== NativeOutput')
native = NativeOutput(City, name='city_result', description='A city.')
print(repr(Agent(answer_with({'name': 'Rome', 'population': 2_800_000}), output_type=native).run_sync('x').output))

print('== PromptedOutput')
prompted = PromptedOutput(City, name='prompted_city')
print(repr(Agent(answer_with({'name': 'Bern', 'population': 130_000}), output_type=prompted).run_sync('x').output))


def shout(text: str) -> str:
    return text.upper()


print('== TextOutput')
print(repr(Agent(answer_with({'said': 'hi'}), output_type=TextOutput(shout)).run_sync('x').output))


def city_size(ctx: RunContext[None], name: str, population: int) -> str:
    """Describe a city's size."""
    return f'{name} is {"big" if population > 1_000_000 else "small"}'


print('== output function')
print(repr(Agent(answer_with({'name': 'Lima', 'population': 9_000_000}), output_type=city_size).run_sync('x').output))

print('== output validator with a retry')
tries: list[str] = []


def validating_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    population = 100 if len(messages) == 1 else 200
    return ModelResponse(parts=[ToolCallPart('final_result', {'name': 'Ulm', 'population': population}, 'v1')])


validated = Agent(FunctionModel(validating_model), output_type=City)


@validated.output_validator
def at_least_150(ctx: RunContext[None], city: City) -> City:
    tries.append(f'{city.population} retry={ctx.retry}')
    if city.population < 150:
        raise ModelRetry('population must be at least 150')
    return city


result = validated.run_sync('x')
print(repr(result.output), tries)
show_messages(result.all_messages())

print('== invalid output arguments, then exceeded retries')


def bad_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[ToolCallPart('final_result', {'name': 'X', 'population': 'many'}, 'b1')])


try:
    Agent(FunctionModel(bad_model), output_type=City).run_sync('x')
except Exception as error:
    show_error(error)

print('== text when text is not allowed')


def chatty(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    if len(messages) == 1:
        return ModelResponse(parts=[TextPart('just text')])
    return ModelResponse(parts=[ToolCallPart('final_result', {'name': 'Ghent', 'population': 1}, 'c1')])


result = Agent(FunctionModel(chatty), output_type=City).run_sync('x')
print(repr(result.output))
show_messages(result.all_messages())
