"""`BedrockEmbeddingModel` against the local Bedrock (signed `InvokeModel` requests): each family's body, batching and
concurrency, token counts from the response header, and errors."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, cast

import pytest

from edgewise.agent.embeddings import Embedder, infer_embedding_model
from edgewise.agent.embeddings.bedrock import BedrockEmbeddingModel, BedrockEmbeddingSettings
from edgewise.agent.exceptions import ModelRateLimitError, UnexpectedModelBehavior, UserError
from edgewise.agent.providers.bedrock import BedrockProvider

from ._aws import ACCESS_KEY, SECRET_KEY, Answer, FakeBedrock, bedrock_handler
from .conftest import serve_http

pytestmark = pytest.mark.anyio


@pytest.fixture
def bedrock() -> Iterator[FakeBedrock]:
    server = FakeBedrock()
    with serve_http(bedrock_handler(server)) as port:
        server.url = f'http://127.0.0.1:{port}'
        yield server


def model_for(server: FakeBedrock, model_id: str, **settings: Any) -> BedrockEmbeddingModel:
    provider = BedrockProvider(
        aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY, region_name='us-east-1',
        base_url=server.url, max_retries=0,
    )  # fmt: skip
    return BedrockEmbeddingModel(model_id, provider=provider, settings=cast(BedrockEmbeddingSettings, settings))


def counted(body: dict[str, Any], tokens: int) -> Answer:
    return Answer(body=body, headers={'x-amzn-bedrock-input-token-count': str(tokens)})


async def test_cohere_embeds_every_text_in_one_signed_request(bedrock: FakeBedrock) -> None:
    bedrock.script(counted({'id': 'emb-1', 'embeddings': {'float': [[0.1, 0.2], [0.3, 0.4]]}}, 7))
    model = model_for(bedrock, 'cohere.embed-v4:0', dimensions=2, bedrock_cohere_max_tokens=100, truncate=True)
    async with model._provider:
        result = await model.embed(['a', 'b'], input_type='document')
    (received,) = bedrock.received
    assert received['path'] == '/model/cohere.embed-v4%3A0/invoke'
    assert received['auth'] == 'us-east-1/bedrock'
    assert received['body'] == {
        'texts': ['a', 'b'], 'input_type': 'search_document', 'max_tokens': 100, 'output_dimension': 2,
        'truncate': 'END',
    }  # fmt: skip
    assert result.embeddings == [[0.1, 0.2], [0.3, 0.4]]
    assert (result.usage.input_tokens, result.provider_response_id, result.provider_name) == (7, 'emb-1', 'bedrock')
    assert await model.max_input_tokens() == 128000


async def test_cohere_v3_takes_no_limits_and_its_list_answer(bedrock: FakeBedrock) -> None:
    bedrock.script(Answer(body={'embeddings': [[1.0]]}))
    model = model_for(bedrock, 'cohere.embed-english-v3', dimensions=2, bedrock_cohere_truncate='START')
    async with model._provider:
        result = await model.embed('q', input_type='query')
    assert bedrock.received[0]['body'] == {'texts': ['q'], 'input_type': 'search_query', 'truncate': 'START'}
    assert (result.embeddings, result.usage.input_tokens) == ([[1.0]], 0)


async def test_titan_embeds_one_text_per_request_and_adds_their_token_counts(bedrock: FakeBedrock) -> None:
    bedrock.script(*(counted({'embedding': [float(i)]}, 3) for i in range(3)))
    model = model_for(bedrock, 'us.amazon.titan-embed-text-v2:0', dimensions=256, bedrock_max_concurrency=2)
    async with model._provider:
        result = await model.embed(['x', 'y', 'z'], input_type='document')
    bodies = sorted((r['body'] for r in bedrock.received), key=lambda b: b['inputText'])
    assert bodies == [{'inputText': t, 'dimensions': 256, 'normalize': True} for t in ('x', 'y', 'z')]
    # One vector per text (the scripted answers go out in arrival order, so which text gets which is not fixed).
    assert sorted(list(vector) for vector in result.embeddings) == [[0.0], [1.0], [2.0]]
    assert result.usage.input_tokens == 9
    assert await model.max_input_tokens() == 8192


async def test_titan_v1_takes_the_text_alone(bedrock: FakeBedrock) -> None:
    bedrock.script(Answer(body={'embedding': [0.5]}))
    model = model_for(bedrock, 'amazon.titan-embed-text-v1', dimensions=8, bedrock_titan_normalize=False)
    async with model._provider:
        await model.embed('x', input_type='query')
    assert bedrock.received[0]['body'] == {'inputText': 'x'}


async def test_nova_embeds_for_a_purpose(bedrock: FakeBedrock) -> None:
    bedrock.script(Answer(body={'embeddings': [{'embeddingType': 'TEXT', 'embedding': [0.25]}]}))
    model = model_for(
        bedrock, 'amazon.nova-2-multimodal-embeddings-v1:0', dimensions=3, bedrock_inference_profile='us.nova-emb',
        extra_body={'extra': 1},
    )  # fmt: skip
    async with model._provider:
        result = await model.embed('find me', input_type='query')
    (received,) = bedrock.received
    assert received['path'] == '/model/us.nova-emb/invoke'
    assert received['body'] == {
        'taskType': 'SINGLE_EMBEDDING',
        'singleEmbeddingParams': {
            'embeddingPurpose': 'GENERIC_RETRIEVAL',
            'text': {'value': 'find me', 'truncationMode': 'NONE'},
            'embeddingDimension': 3,
        },
        'extra': 1,
    }
    assert result.embeddings == [[0.25]]


async def test_a_throttled_request_is_the_rate_limit_error_once_whatever_the_inputs(bedrock: FakeBedrock) -> None:
    throttled = Answer(status=429, body={'message': 'slow'}, headers={'x-amzn-errortype': 'ThrottlingException'})
    bedrock.script(throttled, throttled)
    model = model_for(bedrock, 'amazon.titan-embed-text-v2:0', bedrock_max_concurrency=1)
    async with model._provider:
        with pytest.raises(ModelRateLimitError):
            await model.embed(['a', 'b'], input_type='document')


async def test_bad_answers_and_settings_are_clear_errors(bedrock: FakeBedrock) -> None:
    bedrock.script(Answer(body={'nothing': True}), Answer(body={'embeddings': [[1.0]]}))
    titan = model_for(bedrock, 'amazon.titan-embed-text-v2:0')
    cohere = model_for(bedrock, 'cohere.embed-v4:0')
    async with titan._provider, cohere._provider:
        with pytest.raises(UnexpectedModelBehavior, match='no embeddings'):
            await titan.embed('a', input_type='document')
        with pytest.raises(UnexpectedModelBehavior, match='1 embeddings for 2 inputs'):
            await cohere.embed(['a', 'b'], input_type='document')
        with pytest.raises(UserError, match='bedrock_max_concurrency must be >= 1, got 0'):
            await titan.embed('a', input_type='document', settings=BedrockEmbeddingSettings(bedrock_max_concurrency=0))


def test_names_resolve_and_unknown_families_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('AWS_BEARER_TOKEN_BEDROCK', 'key')
    monkeypatch.setenv('AWS_REGION', 'eu-west-1')
    model = infer_embedding_model('bedrock:cohere.embed-multilingual-v3')
    assert isinstance(model, BedrockEmbeddingModel)
    assert (model.system, model.model_name) == ('bedrock', 'cohere.embed-multilingual-v3')
    assert model.base_url == 'https://bedrock-runtime.eu-west-1.amazonaws.com'
    assert isinstance(
        Embedder('bedrock:amazon.titan-embed-text-v2:0', defer_model_check=False).model, BedrockEmbeddingModel
    )
    with pytest.raises(UserError, match=r'Unsupported Bedrock embedding model: meta\.llama3'):
        BedrockEmbeddingModel('meta.llama3', provider=BedrockProvider(api_key='k', region_name='us-east-1'))


async def test_nova_documents_default_to_indexing_and_a_bad_token_header_counts_none(bedrock: FakeBedrock) -> None:
    answer = Answer(
        body={'embeddings': [{'embedding': [1.0]}]}, headers={'x-amzn-bedrock-input-token-count': 'unknown'}
    )
    bedrock.script(answer)
    model = model_for(bedrock, 'amazon.nova-2-multimodal-embeddings-v1:0', bedrock_nova_truncate='START')
    async with model._provider:
        result = await model.embed('doc', input_type='document')
    assert bedrock.received[0]['body']['singleEmbeddingParams'] == {
        'embeddingPurpose': 'GENERIC_INDEX',
        'text': {'value': 'doc', 'truncationMode': 'START'},
    }
    assert result.usage.input_tokens == 0
