"""Image output: `output_type=BinaryImage` (alone or beside other types), run, streamed and checked against the
model's profile; and the output mode a model's profile picks for plain structured types."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from inline_snapshot import snapshot
from pydantic import BaseModel

from edgewise.agent import (
    Agent,
    BinaryImage,
    ModelRetry,
    NativeOutput,
    PromptedOutput,
    RunContext,
    ToolOutput,
    UnexpectedModelBehavior,
    UserError,
)
from edgewise.agent._message_flow.streamed_parts import PartsManager
from edgewise.agent.messages import (
    FilePart,
    FinalResultEvent,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    PartEndEvent,
    PartStartEvent,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    UserPromptPart,
)
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.test import TEST_PROFILE, TestModel
from edgewise.agent.output import OutputObjectDefinition
from edgewise.agent.profiles import DEFAULT_PROFILE, ModelProfile, merge_profile
from edgewise.agent.usage import RequestUsage

from ._helpers import CONVERSATION_ID, NOW, RUN_ID, scripted

pytestmark = pytest.mark.anyio

DRAWS = ModelProfile(supports_image_output=True)
CAT = BinaryImage(b'cat-pixels', media_type='image/png')
DOG = BinaryImage(b'dog-pixels', media_type='image/webp')


class Pet(BaseModel):
    name: str


# Output types of several kinds, typed loosely (an agent's output type is inferred from one kind only).
TEXT_OR_IMAGE: Any = str | BinaryImage
PET_OR_IMAGE: Any = [Pet, BinaryImage]
IMAGE_OR_NONE: Any = BinaryImage | None


def drawing(*responses: list[Any]) -> FunctionModel:
    """A model that can draw, answering with these parts, one response per request."""
    model = scripted(*responses)
    return FunctionModel(model.function, profile=DRAWS)


async def test_an_image_in_the_response_is_the_output() -> None:
    agent = Agent(drawing([FilePart(CAT)]), output_type=BinaryImage)
    result = await agent.run('Draw a cat')
    assert result.output == CAT
    assert result.all_messages() == snapshot(
        [
            ModelRequest(
                parts=[UserPromptPart(content='Draw a cat', timestamp=NOW)],
                timestamp=NOW,
                run_id=RUN_ID,
                conversation_id=CONVERSATION_ID,
            ),
            ModelResponse(
                parts=[FilePart(content=BinaryImage(data=b'cat-pixels', media_type='image/png'))],
                usage=RequestUsage(input_tokens=53, output_tokens=10),
                model_name='function:script:',
                timestamp=NOW,
                run_id=RUN_ID,
                conversation_id=CONVERSATION_ID,
            ),
        ]
    )


async def test_the_model_is_told_an_image_is_an_output() -> None:
    seen: list[Any] = []

    def draw(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        params = info.model_request_parameters
        seen.append((params.output_mode, params.allow_text_output, params.allow_image_output))
        return ModelResponse(parts=[FilePart(CAT) if params.allow_image_output else TextPart('No image.')])

    for output_type in (BinaryImage, TEXT_OR_IMAGE, PET_OR_IMAGE, str):
        await Agent(FunctionModel(draw, profile=DRAWS), output_type=output_type).run('Draw')
    assert seen == [('image', False, True), ('text', True, True), ('tool', False, True), ('text', True, False)]


async def test_output_validators_see_and_replace_the_image() -> None:
    agent = Agent(drawing([FilePart(CAT)]), output_type=BinaryImage)

    @agent.output_validator
    def grayscale(ctx: RunContext[None], image: BinaryImage) -> BinaryImage:
        return BinaryImage(image.data.upper(), media_type=image.media_type)

    result = await agent.run('Draw a cat')
    assert result.output == BinaryImage(b'CAT-PIXELS', media_type='image/png')
    assert result.all_messages()[-1].parts == [FilePart(CAT)]  # the model's own image stays in the history


async def test_model_retry_from_an_output_validator_asks_for_another_image() -> None:
    agent = Agent(drawing([FilePart(CAT)], [FilePart(DOG)]), output_type=BinaryImage)
    retries: list[int] = []

    @agent.output_validator
    def only_webp(ctx: RunContext[None], image: BinaryImage) -> BinaryImage:
        retries.append(ctx.retry)
        if image.media_type != 'image/webp':
            raise ModelRetry('Send a WebP image.')
        return image

    result = await agent.run('Draw')
    assert result.output == DOG
    assert retries == [0, 1]
    assert [type(m).__name__ for m in result.all_messages()] == [
        'ModelRequest',
        'ModelResponse',
        'ModelRequest',
        'ModelResponse',
    ]
    retry = result.all_messages()[2].parts[0]
    assert isinstance(retry, RetryPromptPart)
    assert retry.content == 'Send a WebP image.'


async def test_model_retry_every_time_exhausts_the_output_retries() -> None:
    agent = Agent(drawing([FilePart(CAT)], [FilePart(CAT)]), output_type=BinaryImage)

    @agent.output_validator
    def never(ctx: RunContext[None], image: BinaryImage) -> BinaryImage:
        raise ModelRetry('No.')

    with pytest.raises(UnexpectedModelBehavior, match=r'Exceeded maximum output retries \(1\)'):
        await agent.run('Draw')


async def test_text_where_only_an_image_will_do_is_retried() -> None:
    agent = Agent(drawing([TextPart('I cannot draw.')], [FilePart(CAT)]), output_type=BinaryImage)
    result = await agent.run('Draw')
    assert result.output == CAT
    retry = result.all_messages()[2].parts[0]
    assert isinstance(retry, RetryPromptPart)
    assert retry.content == 'Please return an image.'


async def test_a_response_with_no_output_lists_every_way_to_answer() -> None:
    agent = Agent(drawing([TextPart('')], [FilePart(CAT)]), output_type=PET_OR_IMAGE)
    result = await agent.run('Draw')
    retry = result.all_messages()[2].parts[0]
    assert isinstance(retry, RetryPromptPart)
    assert retry.content == 'Please return text or include your response in a tool call or return an image.'


async def test_with_text_allowed_an_image_wins_over_text() -> None:
    agent = Agent(drawing([TextPart('Here it is:'), FilePart(CAT)], [TextPart('Just words.')]))
    both = agent.run('Draw', output_type=TEXT_OR_IMAGE)
    assert (await both).output == CAT
    assert (await agent.run('Draw', output_type=TEXT_OR_IMAGE)).output == 'Just words.'


async def test_beside_a_structured_type_a_tool_call_or_an_image_is_the_output() -> None:
    agent = Agent(drawing([ToolCallPart('final_result', {'name': 'Rex'})], [FilePart(DOG)]), output_type=PET_OR_IMAGE)
    assert (await agent.run('Pet?')).output == Pet(name='Rex')
    assert (await agent.run('Pet?')).output == DOG


async def test_beside_native_output_json_text_or_an_image_is_the_output() -> None:
    profile = ModelProfile(supports_image_output=True, supports_json_schema_output=True)
    model = FunctionModel(scripted([TextPart('{"name": "Tom"}')], [FilePart(CAT)]).function, profile=profile)
    native_or_image: Any = [NativeOutput(Pet), BinaryImage]
    agent = Agent(model, output_type=native_or_image)
    assert (await agent.run('Pet?')).output == Pet(name='Tom')
    assert (await agent.run('Pet?')).output == CAT


@pytest.mark.parametrize('marker', [NativeOutput, PromptedOutput])
def test_an_image_inside_native_or_prompted_output_is_refused(marker: type[Any]) -> None:
    name = marker.__name__
    with pytest.raises(UserError) as info:
        Agent(TestModel(), output_type=marker([Pet, BinaryImage]))
    assert str(info.value) == (
        f'`{name}` cannot contain `BinaryImage`. Include it alongside the {name[:-6].lower()} output marker '
        f'instead: `output_type=[{name}(...), BinaryImage]`'
    )


async def test_none_beside_an_image_makes_an_empty_response_none() -> None:
    agent = Agent(drawing([]), output_type=IMAGE_OR_NONE)
    assert (await agent.run('Draw')).output is None


@pytest.mark.parametrize('model', [TestModel(), FunctionModel(lambda m, i: ModelResponse(parts=[]))])
async def test_a_model_that_cannot_draw_is_refused_before_any_request(model: Any) -> None:
    agent = Agent(model, output_type=BinaryImage)
    with pytest.raises(UserError, match=r'^Image output is not supported by this model\.$'):
        await agent.run('Draw')
    with pytest.raises(UserError, match='Image output is not supported'):
        await agent.run('Draw', output_type=TEXT_OR_IMAGE)


async def test_test_model_draws_a_png_when_only_an_image_will_do() -> None:
    model = TestModel(profile=DRAWS)
    result = await Agent(model, output_type=BinaryImage).run('Draw')
    assert result.output.media_type == 'image/png'
    assert result.output.data.startswith(b'\x89PNG\r\n\x1a\n')
    # Where text or an output tool will do, it answers as before.
    assert (await Agent(model, output_type=TEXT_OR_IMAGE).run('Draw')).output == 'success (no tool calls)'
    assert (await Agent(model, output_type=PET_OR_IMAGE).run('Draw')).output == Pet(name='a')


async def test_test_model_streams_its_png() -> None:
    async with Agent(TestModel(profile=DRAWS), output_type=BinaryImage).run_stream('Draw') as stream:
        output = await stream.get_output()
    assert output.data.startswith(b'\x89PNG')
    assert stream.all_messages()[-1].parts == [FilePart(output)]


def streaming_drawer(*items: Any) -> FunctionModel:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        for item in items:
            yield item

    return FunctionModel(stream_function=stream, profile=DRAWS)


async def test_run_stream_gives_the_image_validated() -> None:
    agent = Agent(streaming_drawer('Here:', {1: FilePart(CAT)}), output_type=TEXT_OR_IMAGE)
    seen: list[bool] = []

    @agent.output_validator
    def mark(ctx: RunContext[None], output: str | BinaryImage) -> str | BinaryImage:
        seen.append(ctx.partial_output)
        return BinaryImage(b'checked', media_type='image/png') if isinstance(output, BinaryImage) else output

    async with agent.run_stream('Draw') as stream:
        outputs = [output async for output in stream.stream_output(debounce_by=None)]
    assert outputs[-1] == BinaryImage(b'checked', media_type='image/png')
    assert seen[-1] is False
    assert stream.all_messages()[-1].parts == [TextPart('Here:'), FilePart(CAT)]


async def test_the_image_part_starts_the_final_result_when_streaming() -> None:
    agent = Agent(streaming_drawer({0: FilePart(CAT)}), output_type=BinaryImage)
    async with agent.iter('Draw') as run:
        async for node in run:
            if Agent.is_model_request_node(node):
                async with node.stream(run.ctx) as response:
                    events = [event async for event in response]
                    assert await response.get_output() == CAT
    assert events == [
        PartStartEvent(index=0, part=FilePart(CAT)),
        FinalResultEvent(tool_name=None, tool_call_id=None),
        PartEndEvent(index=0, part=FilePart(CAT)),
    ]
    assert run.result is not None
    assert run.result.output == CAT


async def test_an_image_is_no_final_result_when_it_is_no_output() -> None:
    agent = Agent(streaming_drawer({0: FilePart(CAT)}, 'Done.'))
    async with agent.iter('Draw') as run:
        async for node in run:
            if Agent.is_model_request_node(node):
                async with node.stream(run.ctx) as response:
                    events = [event async for event in response]
    finals = [i for i, event in enumerate(events) if isinstance(event, FinalResultEvent)]
    assert finals == [3]  # after the text part's start, not the image's
    assert run.result is not None
    assert run.result.output == 'Done.'


async def test_streamed_model_retry_from_a_validator_asks_again() -> None:
    # Unlike pydantic-ai (which raises), Edgewise retries an output that fails once `run_stream`'s block is entered.
    answers = iter([CAT, DOG])

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        yield {0: FilePart(next(answers))}

    agent = Agent(FunctionModel(stream_function=stream, profile=DRAWS), output_type=BinaryImage)

    @agent.output_validator
    def only_webp(ctx: RunContext[None], image: BinaryImage) -> BinaryImage:
        if image.media_type != 'image/webp':
            raise ModelRetry('Send a WebP image.')
        return image

    async with agent.run_stream('Draw') as result:
        assert await result.get_output() == DOG


def test_output_json_schema_of_an_image() -> None:
    schema = Agent(TestModel(), output_type=BinaryImage).output_json_schema()
    assert schema['title'] == 'BinaryImage'
    assert schema['required'] == ['data', 'media_type', 'identifier']
    union = Agent(TestModel(), output_type=TEXT_OR_IMAGE).output_json_schema()
    assert union['anyOf'][0] == {'type': 'string'}
    assert union['anyOf'][1] == schema


def test_handle_part_replaces_the_part_of_the_same_id() -> None:
    parts = PartsManager()
    assert parts.handle_part(vendor_part_id='img', part=FilePart(CAT)) == PartStartEvent(index=0, part=FilePart(CAT))
    assert parts.handle_part(vendor_part_id='img', part=FilePart(DOG)) == PartStartEvent(index=0, part=FilePart(DOG))
    assert parts.handle_part(vendor_part_id=None, part=FilePart(CAT)) == PartStartEvent(index=1, part=FilePart(CAT))
    assert parts.handle_part(vendor_part_id=None, part=FilePart(CAT)).index == 2
    assert parts.get_parts() == [FilePart(DOG), FilePart(CAT), FilePart(CAT)]


# -- the output mode of plain structured types, from the model's profile -----------------------------------------


async def test_plain_types_use_the_profile_default_output_mode() -> None:
    json_text = '{"name": "Rex"}'
    tool = TestModel(profile=ModelProfile(default_structured_output_mode='tool'))
    native = TestModel(
        profile=ModelProfile(supports_json_schema_output=True, default_structured_output_mode='native'),
        custom_output_text=json_text,
    )
    prompted = TestModel(profile=ModelProfile(default_structured_output_mode='prompted'), custom_output_text=json_text)
    expected_object = OutputObjectDefinition(
        json_schema={
            'properties': {'name': {'type': 'string'}},
            'required': ['name'],
            'title': 'Pet',
            'type': 'object',
        },
        name='Pet',
    )
    found = []
    for model in (tool, native, prompted):
        assert (await Agent(model, output_type=Pet).run('Pet?')).output.name in ('a', 'Rex')
        params = model.last_model_request_parameters
        assert params is not None
        found.append((params.output_mode, params.allow_text_output, len(params.output_tools), params.output_object))
    assert found == [
        ('tool', False, 1, None),
        ('native', True, 0, expected_object),
        ('prompted', True, 0, expected_object),
    ]


async def test_prompted_by_default_uses_the_profile_template() -> None:
    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        assert info.instructions == (
            'Reply in JSON: {"properties": {"name": {"type": "string"}}, "required": ["name"], '
            '"title": "Pet", "type": "object"}'
        )
        return ModelResponse(parts=[TextPart('{"name": "Tom"}')])

    profile = ModelProfile(
        default_structured_output_mode='prompted', prompted_output_template='Reply in JSON: {schema}'
    )
    assert (await Agent(FunctionModel(answer, profile=profile), output_type=Pet).run('Pet?')).output == Pet(name='Tom')


async def test_marked_output_keeps_its_mode_whatever_the_profile() -> None:
    model = TestModel(profile=ModelProfile(supports_json_schema_output=True, default_structured_output_mode='native'))
    marked: list[Any] = [ToolOutput(Pet), [str, Pet]]
    for output_type in marked:
        await Agent(model, output_type=output_type).run('Pet?')
        assert model.last_model_request_parameters is not None
        assert model.last_model_request_parameters.output_mode == 'tool'


async def test_output_modes_the_profile_cannot_do_are_refused() -> None:
    limited = ModelProfile(supports_tools=False, supports_json_schema_output=False)
    model = FunctionModel(lambda m, i: ModelResponse(parts=[]), profile=limited)
    cases: list[tuple[Any, str]] = [
        (NativeOutput(Pet), 'Native structured output is not supported by this model.'),
        (ToolOutput(Pet), 'Tool output is not supported by this model.'),
        (Pet, 'Tool output is not supported by this model.'),
        (BinaryImage, 'Image output is not supported by this model.'),
    ]
    for output_type, message in cases:
        with pytest.raises(UserError) as info:
            await Agent(model, output_type=output_type).run('x')
        assert str(info.value) == message


async def test_function_model_takes_native_output_by_default() -> None:
    model = FunctionModel(lambda m, i: ModelResponse(parts=[TextPart('{"name": "Tom"}')]))
    assert model.profile.get('supports_json_schema_output', False)
    assert not model.profile.get('supports_image_output', False)
    assert (await Agent(model, output_type=NativeOutput(Pet)).run('x')).output == Pet(name='Tom')


def test_a_profile_function_gets_the_resolved_profile_once() -> None:
    seen: list[ModelProfile] = []

    def drawing(resolved: ModelProfile) -> ModelProfile:
        seen.append(resolved)
        return merge_profile(resolved, DRAWS)

    painter = TestModel(model_name='painter', profile=drawing)
    assert painter.profile is painter.profile
    assert painter.profile['supports_image_output'] is True
    # The test model's own profile under the callable: native output works.
    assert painter.profile['supports_json_schema_output'] is True
    assert seen == [{**DEFAULT_PROFILE, **TEST_PROFILE}]
    # A dict is merged over the model's default profile instead of replacing it.
    other = TestModel(model_name='other', profile=DRAWS)
    assert other.profile == {**DEFAULT_PROFILE, **TEST_PROFILE, 'supports_image_output': True}


def test_a_callable_profile_returning_no_dict_is_a_type_error() -> None:
    # In pydantic-ai 1.x the callable took the model name and could return None.
    model = TestModel(profile=lambda name: None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match='must return a `ModelProfile` dict, got NoneType'):
        _ = model.profile
