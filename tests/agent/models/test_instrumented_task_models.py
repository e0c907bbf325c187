"""`InstrumentedEmbeddingModel` and `InstrumentedImageGenerationModel`: a span per request, read back from logfire's
test exporter (OpenAI embeddings over a real server on 127.0.0.1, the test image model)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from logfire.testing import CaptureLogfire

from edgewise.agent import (
    CostCalculationFailedWarning,
    Embedder,
    EmbeddingModel,
    EmbeddingResult,
    EmbeddingSettings,
    ImageGenerator,
)
from edgewise.agent.embeddings import TestEmbeddingModel
from edgewise.agent.embeddings.instrumented import InstrumentedEmbeddingModel, instrument_embedding_model
from edgewise.agent.embeddings.openai import OpenAIEmbeddingModel
from edgewise.agent.exceptions import ModelHTTPError
from edgewise.agent.images.instrumented import InstrumentedImageGenerationModel, instrument_image_generation_model
from edgewise.agent.images.test import TestImageGenerationModel
from edgewise.agent.models.instrumented import InstrumentationSettings
from edgewise.agent.providers.openai import OpenAIProvider
from edgewise.agent.usage import RequestUsage

from .conftest import LocalServer, Reply

pytestmark = pytest.mark.anyio

SECRET = 'sk-instrumented-secret'


def _spans(capfire: CaptureLogfire) -> list[dict[str, Any]]:
    """The spans of the instrumented models (not those of the HTTP requests inside them)."""
    spans = capfire.exporter.exported_spans_as_dict()
    return [span for span in spans if span['name'].startswith(('embeddings ', 'image_generation '))]


def _openai(local_server: LocalServer) -> tuple[OpenAIProvider, OpenAIEmbeddingModel]:
    provider = OpenAIProvider(base_url=local_server.url, api_key=SECRET)
    return provider, OpenAIEmbeddingModel('text-embedding-3-small', provider=provider)


async def test_an_embedding_request_has_a_span_with_the_request_and_its_result(
    local_server: LocalServer, capfire: CaptureLogfire
) -> None:
    reply = {
        'object': 'list',
        'model': 'text-embedding-3-small-v2',
        'data': [{'object': 'embedding', 'index': 0, 'embedding': [0.5, 0.25]}],
        'usage': {'prompt_tokens': 3, 'total_tokens': 3},
    }
    local_server.script(Reply(200, reply))
    provider, wrapped = _openai(local_server)
    model = InstrumentedEmbeddingModel(wrapped)
    async with provider:
        result = await model.embed(
            'What is AI?', input_type='query', settings={'dimensions': 2, 'extra_headers': {'x-secret': 'hidden'}}
        )
    assert result.embeddings == [[0.5, 0.25]]
    [span] = _spans(capfire)
    attributes = span['attributes']
    assert span['name'] == 'embeddings {model_name}'
    assert attributes['logfire.msg'] == 'embeddings text-embedding-3-small'
    port = int(local_server.url.rsplit(':', 1)[1].split('/')[0])
    assert {key: attributes[key] for key in attributes if not key.startswith('logfire.') and key != 'code.lineno'} | {
        'code.filepath': None,
        'code.function': None,
    } == {
        'code.filepath': None,
        'code.function': None,
        'model_name': 'text-embedding-3-small',
        'gen_ai.operation.name': 'embeddings',
        'gen_ai.provider.name': 'openai',
        'gen_ai.system': 'openai',
        'gen_ai.request.model': 'text-embedding-3-small',
        'server.address': '127.0.0.1',
        'server.port': port,
        'input_type': 'query',
        'inputs_count': 1,
        'inputs': '["What is AI?"]',
        'embedding_settings': '{"dimensions": 2}',
        'gen_ai.response.model': 'text-embedding-3-small-v2',
        'gen_ai.usage.input_tokens': 3,
        'gen_ai.embeddings.dimension.count': 2,
        'embeddings': '[[0.5, 0.25]]',
        **({'operation.cost': attributes['operation.cost']} if 'operation.cost' in attributes else {}),
    }
    assert 'hidden' not in json.dumps(span)
    assert SECRET not in json.dumps(span)


async def test_without_content_the_inputs_and_vectors_are_left_out(capfire: CaptureLogfire) -> None:
    model = InstrumentedEmbeddingModel(TestEmbeddingModel(dimensions=3), InstrumentationSettings(include_content=False))
    result = await model.embed(['one', 'two'], input_type='document')
    assert result.embeddings == [[1.0] * 3] * 2
    [span] = _spans(capfire)
    attributes = span['attributes']
    assert (attributes['inputs_count'], attributes['gen_ai.embeddings.dimension.count']) == (2, 3)
    assert (attributes['gen_ai.provider.name'], attributes['gen_ai.response.model']) == ('test', 'test')
    assert attributes['gen_ai.response.id'] == result.provider_response_id
    assert not {'inputs', 'embeddings', 'embedding_settings', 'server.address'} & set(attributes)


async def test_a_failed_embedding_request_ends_its_span_with_the_error(
    local_server: LocalServer, capfire: CaptureLogfire
) -> None:
    local_server.script(Reply(400, {'error': {'message': 'bad input'}}))
    provider, wrapped = _openai(local_server)
    async with provider:
        with pytest.raises(ModelHTTPError):
            await InstrumentedEmbeddingModel(wrapped).embed('x', input_type='query')
    [span] = _spans(capfire)
    assert span['attributes']['logfire.level_num'] == 17  # error
    assert [event['name'] for event in span['events']] == ['exception']
    assert 'gen_ai.usage.input_tokens' not in span['attributes']  # no result to record


def test_instrumenting_an_embedding_model() -> None:
    model = TestEmbeddingModel()
    assert instrument_embedding_model(model, False) is model
    instrumented = instrument_embedding_model(model, True)
    assert isinstance(instrumented, InstrumentedEmbeddingModel)
    assert instrumented.wrapped is model
    assert instrument_embedding_model(instrumented, True) is instrumented
    settings = InstrumentationSettings(include_content=False)
    with_settings = instrument_embedding_model(model, settings)
    assert isinstance(with_settings, InstrumentedEmbeddingModel)
    assert with_settings.instrumentation_settings is settings
    assert InstrumentedEmbeddingModel('test').model_name == 'test'


async def test_an_image_request_has_a_span_with_the_request_and_its_images(capfire: CaptureLogfire) -> None:
    model = InstrumentedImageGenerationModel(TestImageGenerationModel('painter'))
    result = await model.generate('a red square', settings={'aspect_ratio': '1:1'})
    [image] = result.images
    [span] = _spans(capfire)
    attributes = span['attributes']
    assert (span['name'], attributes['logfire.msg']) == ('image_generation {model_name}', 'image_generation painter')
    assert {key: attributes.get(key) for key in (
        'gen_ai.operation.name', 'gen_ai.output.type', 'gen_ai.provider.name', 'gen_ai.request.model',
        'prompt', 'prompt_length', 'input_image_count', 'image_generation_settings', 'gen_ai.response.model',
        'gen_ai.response.id', 'image_count', 'image.0.media_type', 'gen_ai.usage.input_tokens',
    )} == {
        'gen_ai.operation.name': 'image_generation',
        'gen_ai.output.type': 'image',
        'gen_ai.provider.name': 'test',
        'gen_ai.request.model': 'painter',
        'prompt': 'a red square',
        'prompt_length': 12,
        'input_image_count': 0,
        'image_generation_settings': '{"aspect_ratio": "1:1"}',
        'gen_ai.response.model': 'painter',
        'gen_ai.response.id': result.provider_response_id,
        'image_count': 1,
        'image.0.media_type': image.content.media_type,
        'gen_ai.usage.input_tokens': result.usage.input_tokens,
    }  # fmt: skip


async def test_without_content_the_prompt_is_left_out(capfire: CaptureLogfire) -> None:
    options = InstrumentationSettings(include_content=False)
    model = InstrumentedImageGenerationModel(TestImageGenerationModel(), options=options)
    await model.generate('secret plans')
    [span] = _spans(capfire)
    assert 'prompt' not in span['attributes']
    assert span['attributes']['prompt_length'] == 12


def test_instrumenting_an_image_model() -> None:
    model = TestImageGenerationModel()
    assert instrument_image_generation_model(model, False) is model
    instrumented = instrument_image_generation_model(model, True)
    assert isinstance(instrumented, InstrumentedImageGenerationModel)
    assert instrumented.wrapped is model
    assert instrument_image_generation_model(instrumented, True) is instrumented
    settings = InstrumentationSettings(include_content=False)
    with_settings = instrument_image_generation_model(model, settings)
    assert isinstance(with_settings, InstrumentedImageGenerationModel)
    assert with_settings.instrumentation_settings is settings


class _Priced(EmbeddingModel):
    """An embedding model of a name genai-prices knows, at a URL of its own (or a broken one)."""

    def __init__(self, base_url: str | None, fail_pricing: bool = False) -> None:
        super().__init__()
        self._base_url = base_url
        self._fail_pricing = fail_pricing

    @property
    def model_name(self) -> str:
        return 'text-embedding-3-small'

    @property
    def system(self) -> str:
        return 'openai'

    @property
    def base_url(self) -> str | None:
        return self._base_url

    async def embed(self, inputs: Any, *, input_type: Any, settings: EmbeddingSettings | None = None) -> Any:
        texts, _ = self.prepare_embed(inputs, settings)
        result_type = _BrokenPrices if self._fail_pricing else EmbeddingResult
        usage = RequestUsage(input_tokens=1_000_000, output_tokens=5 if self._fail_pricing else 0)
        return result_type(
            [[1.0]] * len(texts), inputs=texts, input_type=input_type, model_name=self.model_name,
            provider_name='openai', usage=usage,
        )  # fmt: skip


class _BrokenPrices(EmbeddingResult):
    def cost(self) -> Any:
        raise RuntimeError('price table broken')


async def test_the_cost_and_server_come_from_the_model_when_known(capfire: CaptureLogfire) -> None:
    await InstrumentedEmbeddingModel(_Priced('https://embed.example.com/v1')).embed('x', input_type='query')
    await InstrumentedEmbeddingModel(_Priced('http://host:abc/')).embed('x', input_type='query')
    await InstrumentedEmbeddingModel(_Priced('local')).embed('x', input_type='query')
    priced, broken_url, no_host = (span['attributes'] for span in _spans(capfire))
    assert priced['operation.cost'] == pytest.approx(0.02)  # $0.02 per million tokens
    assert (priced['server.address'], 'server.port' in priced) == ('embed.example.com', False)
    assert 'server.address' not in broken_url
    assert 'server.address' not in no_host
    assert 'gen_ai.usage.output_tokens' not in priced


async def test_a_failure_to_price_warns_and_leaves_the_cost_out(capfire: CaptureLogfire) -> None:
    with pytest.warns(CostCalculationFailedWarning, match='Failed to get cost from response: RuntimeError: price'):
        await InstrumentedEmbeddingModel(_Priced(None, fail_pricing=True)).embed('x', input_type='query')
    [span] = _spans(capfire)
    assert 'operation.cost' not in span['attributes']
    assert span['attributes']['gen_ai.usage.output_tokens'] == 5


async def test_nothing_is_recorded_when_tracing_is_off(
    capfire: CaptureLogfire, monkeypatch: pytest.MonkeyPatch
) -> None:
    from edgewise.agent import _instrument

    monkeypatch.setattr(_instrument, 'TRACING', False)
    result = await InstrumentedEmbeddingModel(TestEmbeddingModel()).embed('x', input_type='query')
    assert result.embeddings
    assert _spans(capfire) == []


async def test_an_instrumented_embedder_around_an_instrumented_model_makes_one_span(capfire: CaptureLogfire) -> None:
    embedder = Embedder(InstrumentedEmbeddingModel(TestEmbeddingModel()), instrument=True)
    await embedder.embed_query('x')
    generator = ImageGenerator(InstrumentedImageGenerationModel(TestImageGenerationModel()), instrument=True)
    await generator.generate('a dot')
    spans = _spans(capfire)
    assert [span['attributes']['logfire.msg'] for span in spans] == ['embeddings test', 'image_generation test']
    assert all('gen_ai.operation.name' in span['attributes'] for span in spans)  # the models' spans
