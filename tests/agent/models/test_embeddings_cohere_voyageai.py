"""Cohere's and VoyageAI's embedding models over a real HTTP server on 127.0.0.1: the request bodies, the settings
that shape them, usage, token counts, errors, keys and names."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from edgewise.agent import Embedder
from edgewise.agent.embeddings import infer_embedding_model
from edgewise.agent.embeddings.cohere import (
    CohereEmbeddingModel,
    CohereEmbeddingSettings,
)
from edgewise.agent.embeddings.voyageai import VoyageAIEmbeddingModel, VoyageAIEmbeddingSettings
from edgewise.agent.exceptions import ModelHTTPError, UnexpectedModelBehavior, UserError
from edgewise.agent.providers.cohere import CohereProvider
from edgewise.agent.providers.openai import OpenAIProvider
from edgewise.agent.providers.voyageai import VoyageAIProvider

from .conftest import LocalServer, Reply

SECRET = 'co-secret-key'


def _cohere_reply(*vectors: list[float], images: int = 0) -> dict[str, Any]:
    return {
        'id': 'emb-1',
        'embeddings': {'float': list(vectors)},
        'texts': ['ignored'],
        'meta': {'api_version': {'version': '2'}, 'billed_units': {'input_tokens': 4, 'image_tokens': images}},
        'response_type': 'embeddings_by_type',
    }


def _voyage_reply(*vectors: list[float], total_tokens: Any = 3) -> dict[str, Any]:
    data = [{'object': 'embedding', 'embedding': v, 'index': i} for i, v in enumerate(vectors)]
    return {
        'object': 'list',
        'data': list(reversed(data)),
        'model': 'voyage-3.5',
        'usage': {'total_tokens': total_tokens},
    }


@pytest.fixture
def cohere_env(monkeypatch: pytest.MonkeyPatch, local_server: LocalServer) -> LocalServer:
    monkeypatch.setenv('CO_API_KEY', SECRET)
    monkeypatch.setenv('CO_BASE_URL', local_server.url.removesuffix('/v1'))
    return local_server


@pytest.fixture
async def cohere_api(cohere_env: LocalServer) -> AsyncIterator[CohereProvider]:
    """What `provider='cohere'` makes (from the environment), its client closed after the test."""
    async with CohereProvider() as provider:
        yield provider


@pytest.mark.anyio
async def test_cohere_embeds_queries_and_documents_on_the_v2_api(
    cohere_env: LocalServer, cohere_api: CohereProvider
) -> None:
    cohere_env.script(
        Reply(200, _cohere_reply([0.1, 0.2])),
        Reply(200, _cohere_reply([0.3], [0.4], images=2)),
    )
    model = CohereEmbeddingModel('embed-v4.0', provider=cohere_api)
    query = await Embedder(model).embed_query(
        'Hello, world!',
        settings=CohereEmbeddingSettings(
            truncate=True, dimensions=256, cohere_max_tokens=100, extra_headers={'x-trace': 't'}
        ),
    )
    documents = await model.embed(['a', 'b'], input_type='document', settings={'extra_body': {'priority': 1}})
    assert (query.embeddings, query.provider_name, query.provider_response_id) == ([[0.1, 0.2]], 'cohere', 'emb-1')
    assert (query.usage.input_tokens, query.usage.details) == (4, {})
    assert (documents.embeddings, documents.usage.input_tokens, documents.usage.details) == (
        [[0.3], [0.4]],
        4,
        {'image_tokens': 2},
    )
    first, second = cohere_env.received
    assert first['path'] == '/v2/embed'
    assert first['headers']['authorization'] == f'Bearer {SECRET}'
    assert first['headers']['x-trace'] == 't'
    assert first['body'] == {
        'model': 'embed-v4.0',
        'texts': ['Hello, world!'],
        'input_type': 'search_query',
        'embedding_types': ['float'],
        'truncate': 'END',
        'output_dimension': 256,
        'max_tokens': 100,
    }
    assert second['body'] == {
        'model': 'embed-v4.0',
        'texts': ['a', 'b'],
        'input_type': 'search_document',
        'embedding_types': ['float'],
        'truncate': 'NONE',
        'priority': 1,
    }
    assert model.base_url == cohere_env.url.removesuffix('/v1')
    assert SECRET not in repr(model)


@pytest.mark.anyio
async def test_cohere_own_settings_win_over_the_shared_ones(
    cohere_env: LocalServer, cohere_api: CohereProvider
) -> None:
    cohere_env.script(Reply(200, _cohere_reply([0.1])))
    settings = CohereEmbeddingSettings(truncate=True, cohere_truncate='START', cohere_input_type='clustering')
    model = CohereEmbeddingModel('embed-english-v3.0', provider=cohere_api, settings=settings)
    await model.embed('x', input_type='query')
    body = cohere_env.received[0]['body']
    assert (body['truncate'], body['input_type']) == ('START', 'clustering')


@pytest.mark.anyio
async def test_cohere_counts_tokens_with_its_tokenizer(cohere_env: LocalServer, cohere_api: CohereProvider) -> None:
    cohere_env.script(
        Reply(200, {'tokens': [9707, 11, 1879, 0], 'token_strings': ['Hello', ',', ' world', '!']}),
        Reply(200, {'meta': {}}),
    )
    model = CohereEmbeddingModel('embed-v4.0', provider=cohere_api)
    assert await Embedder(model).count_tokens('Hello, world!') == 4
    with pytest.raises(UnexpectedModelBehavior, match='cohere tokenize endpoint: no `tokens`'):
        await model.count_tokens('x')
    request = cohere_env.received[0]
    assert (request['path'], request['body']) == ('/v1/tokenize', {'model': 'embed-v4.0', 'text': 'Hello, world!'})
    assert await model.max_input_tokens() == 128_000
    assert await CohereEmbeddingModel('embed-english-v3.0', provider=cohere_api).max_input_tokens() == 512
    assert await CohereEmbeddingModel('someday-model', provider=cohere_api).max_input_tokens() is None


@pytest.mark.anyio
async def test_cohere_errors_and_bad_answers(cohere_env: LocalServer, cohere_api: CohereProvider) -> None:
    cohere_env.script(
        Reply(404, {'id': 'e-1', 'message': "model 'nonexistent' not found"}),
        Reply(200, {'id': 'x', 'embeddings': {'int8': [[1]]}}),
        Reply(200, _cohere_reply([0.1])),
        Reply(200, {'id': 'x', 'embeddings': {'float': [[0.5]]}}),
    )
    model = CohereEmbeddingModel('nonexistent', provider=cohere_api)
    with pytest.raises(ModelHTTPError) as error:
        await model.embed('x', input_type='query')
    assert error.value.status_code == 404
    assert error.value.body == {'id': 'e-1', 'message': "model 'nonexistent' not found"}
    assert SECRET not in str(error.value)
    with pytest.raises(UnexpectedModelBehavior, match='no `embeddings` of type `float`'):
        await model.embed('x', input_type='query')
    with pytest.raises(UnexpectedModelBehavior, match='1 embeddings for 2 inputs'):
        await model.embed(['x', 'y'], input_type='query')
    unbilled = await model.embed('x', input_type='query')
    assert unbilled.usage.input_tokens == 0  # an answer without `meta`


def test_cohere_needs_a_key_and_takes_a_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv('CO_API_KEY', raising=False)
    monkeypatch.delenv('CO_BASE_URL', raising=False)
    with pytest.raises(UserError, match='Set the `CO_API_KEY` environment variable or pass it via `CohereProvider'):
        CohereEmbeddingModel('embed-v4.0')
    monkeypatch.setenv('CO_API_KEY', SECRET)
    model = infer_embedding_model('cohere:embed-v4.0')
    assert isinstance(model, CohereEmbeddingModel)
    assert (model.model_name, model.system, model.base_url) == ('embed-v4.0', 'cohere', 'https://api.cohere.com')
    elsewhere = CohereEmbeddingModel('embed-v4.0', provider=OpenAIProvider(base_url='http://127.0.0.1:9', api_key='k'))
    assert elsewhere.base_url == 'http://127.0.0.1:9'


@pytest.mark.anyio
async def test_voyageai_embeds_with_its_input_types(local_server: LocalServer) -> None:
    local_server.script(
        Reply(200, _voyage_reply([0.1, 0.2], [0.3, 0.4])),
        Reply(200, _voyage_reply([0.5])),
        Reply(200, _voyage_reply([0.6], total_tokens=None)),
    )
    provider = VoyageAIProvider(api_key=SECRET, base_url=local_server.url)
    model = VoyageAIEmbeddingModel('voyage-3.5', provider=provider)
    async with provider:
        documents = await Embedder(model).embed_documents(['one', 'two'])
        await model.embed('q', input_type='query', settings=VoyageAIEmbeddingSettings(truncate=True, dimensions=512))
        raw = await model.embed('r', input_type='query', settings=VoyageAIEmbeddingSettings(voyageai_input_type='none'))
    assert documents.embeddings == [[0.1, 0.2], [0.3, 0.4]]  # in the order of the inputs
    assert (documents.usage.input_tokens, documents.provider_name, documents.model_name) == (
        3,
        'voyageai',
        'voyage-3.5',
    )
    assert raw.usage.input_tokens == 0
    first, second, third = local_server.received
    assert first['path'] == '/v1/embeddings'
    assert first['headers']['authorization'] == f'Bearer {SECRET}'
    assert first['body'] == {
        'input': ['one', 'two'],
        'model': 'voyage-3.5',
        'input_type': 'document',
        'truncation': False,
    }
    assert second['body'] == {
        'input': ['q'],
        'model': 'voyage-3.5',
        'input_type': 'query',
        'truncation': True,
        'output_dimension': 512,
    }
    assert third['body']['input_type'] is None
    assert SECRET not in repr(model) + repr(provider)


@pytest.mark.anyio
async def test_voyageai_errors_limits_and_keys(local_server: LocalServer, monkeypatch: pytest.MonkeyPatch) -> None:
    local_server.script(Reply(400, {'detail': 'Model nonexistent is not supported.'}), Reply(200, {'object': 'list'}))
    provider = VoyageAIProvider(api_key=SECRET, base_url=local_server.url)
    model = VoyageAIEmbeddingModel('nonexistent', provider=provider)
    async with provider:
        with pytest.raises(ModelHTTPError) as error:
            await model.embed('x', input_type='query')
        with pytest.raises(UnexpectedModelBehavior, match='voyageai embeddings endpoint: no `data`'):
            await model.embed('x', input_type='query')
    assert (error.value.status_code, error.value.body) == (400, {'detail': 'Model nonexistent is not supported.'})
    with pytest.raises(NotImplementedError, match='cannot count tokens'):
        await model.count_tokens('x')
    assert await model.max_input_tokens() is None
    assert await VoyageAIEmbeddingModel('voyage-law-2', provider=provider).max_input_tokens() == 16_000
    assert await VoyageAIEmbeddingModel('voyage-4', provider=provider).max_input_tokens() == 32_000
    monkeypatch.delenv('VOYAGE_API_KEY', raising=False)
    with pytest.raises(
        UserError, match='Set the `VOYAGE_API_KEY` environment variable or pass it via `VoyageAIProvider'
    ):
        infer_embedding_model('voyageai:voyage-3.5')
    monkeypatch.setenv('VOYAGE_API_KEY', SECRET)
    inferred = infer_embedding_model('voyageai:voyage-3.5')
    assert isinstance(inferred, VoyageAIEmbeddingModel)
    assert (inferred.system, inferred.base_url) == ('voyageai', 'https://api.voyageai.com/v1')
