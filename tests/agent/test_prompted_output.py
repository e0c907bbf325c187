"""Prompted output: the output instructions travel on the request parameters and each model adds them to the
instructions it sends; the message history keeps only the agent's own instructions."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from edgewise.agent import Agent, NativeOutput, PromptedOutput
from edgewise.agent.messages import ModelMessage, ModelRequest, ModelResponse, TextPart
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.models._anthropic_mapping import anthropic_request_body
from edgewise.agent.models._google_mapping import google_request_body
from edgewise.agent.models._openai_responses_mapping import responses_request_body
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.openai import OpenAIChatModel
from edgewise.agent.models.test import TestModel
from edgewise.agent.output import OutputObjectDefinition
from edgewise.agent.profiles import ModelProfile
from edgewise.agent.providers.openai import OpenAIProvider

pytestmark = pytest.mark.anyio

CITY_SCHEMA = '{"properties": {"name": {"type": "string"}}, "required": ["name"], "title": "City", "type": "object"}'


class City(BaseModel):
    name: str


def recording(seen: list[AgentInfo]) -> FunctionModel:
    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(info)
        return ModelResponse(parts=[TextPart('{"name": "Oslo"}')])

    return FunctionModel(answer)


async def test_output_instructions_reach_the_model_after_the_agent_instructions_but_stay_out_of_the_history() -> None:
    seen: list[AgentInfo] = []
    agent = Agent(
        recording(seen), instructions='Be brief.', output_type=PromptedOutput(City, template='JSON: {schema}')
    )
    result = await agent.run('Capital of Norway?')
    assert result.output == City(name='Oslo')
    params = seen[0].model_request_parameters
    assert (params.prompted_output_template, params.prompted_output_instructions) == (
        'JSON: {schema}',
        'JSON: ' + CITY_SCHEMA,
    )
    assert seen[0].instructions == 'Be brief.\n\nJSON: ' + CITY_SCHEMA
    request = result.all_messages()[0]
    assert isinstance(request, ModelRequest)
    assert request.instructions == 'Be brief.'


async def test_the_default_template_is_the_profiles_and_names_the_output() -> None:
    seen: list[AgentInfo] = []
    await Agent(recording(seen), output_type=PromptedOutput(City, name='Town', description='Where people live')).run(
        'x'
    )
    schema = CITY_SCHEMA.replace('"City"', '"Town"')[:-1] + ', "description": "Where people live"}'
    assert seen[0].instructions == (
        "Always respond with a JSON object that's compatible with this schema:\n\n"
        + schema
        + "\n\nDon't include any text or Markdown fencing before or after."
    )


async def test_a_template_without_the_schema_placeholder_gets_the_schema_appended() -> None:
    seen: list[AgentInfo] = []
    await Agent(recording(seen), output_type=PromptedOutput(City, template='Answer in JSON.')).run('x')
    assert seen[0].instructions == 'Answer in JSON.\n\n' + CITY_SCHEMA


async def test_template_false_sends_no_output_instructions() -> None:
    seen: list[AgentInfo] = []
    result = await Agent(recording(seen), output_type=PromptedOutput(City, template=False)).run('x')
    assert result.output == City(name='Oslo')
    params = seen[0].model_request_parameters
    assert (params.prompted_output_template, params.prompted_output_instructions, seen[0].instructions) == (
        False,
        None,
        None,
    )


async def test_native_output_gets_the_schema_in_the_instructions_only_when_the_profile_asks() -> None:
    profiles = [
        ModelProfile(supports_json_schema_output=True),
        ModelProfile(supports_json_schema_output=True, native_output_requires_schema_in_instructions=True),
    ]
    got: list[str | None] = []
    for profile in profiles:
        model = TestModel(custom_output_args={'name': 'Oslo'}, profile=profile)
        assert (await Agent(model, output_type=NativeOutput(City)).run('x')).output == City(name='Oslo')
        assert model.last_model_request_parameters is not None
        got.append(model.last_model_request_parameters.prompted_output_instructions)
    assert got[0] is None
    assert CITY_SCHEMA in (got[1] or '')


async def test_runs_without_prompted_output_carry_no_template() -> None:
    model = TestModel()
    for output_type in (str, City):
        await Agent(model, output_type=output_type).run('x')
        assert model.last_model_request_parameters is not None
        assert model.last_model_request_parameters.prompted_output_template is None


def test_every_provider_sends_the_joined_instructions() -> None:
    messages: list[ModelMessage] = [ModelRequest.user_text_prompt('hi', instructions='Be brief.')]
    params = ModelRequestParameters(
        output_mode='prompted',
        output_object=OutputObjectDefinition(json_schema={'type': 'object'}),
        prompted_output_template='JSON: {schema}',
    )
    joined = 'Be brief.\n\nJSON: {"type": "object"}'
    profile = ModelProfile(supports_json_object_output=True)
    chat = OpenAIChatModel('gpt-4o', provider=OpenAIProvider(api_key='sk-test'))
    chat_body: dict[str, Any] = chat._body(messages, {}, params, stream=False)  # pyright: ignore[reportPrivateUsage]
    responses_body = responses_request_body('gpt-4o', messages, None, params, profile)
    assert chat_body['messages'][0] == {'role': 'system', 'content': joined}
    assert responses_body.get('instructions', responses_body['input'][0].get('content')) == joined
    assert anthropic_request_body('claude', messages, None, params, profile)['system'] == joined
    assert google_request_body(messages, None, params, profile)['systemInstruction']['parts'] == [{'text': joined}]
