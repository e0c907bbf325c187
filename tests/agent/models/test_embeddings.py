"""`edgewise.agent.embeddings`: `Embedder` with the test model, OpenAI's and Gemini's endpoints over a real server on
127.0.0.1, a wrapped model, settings, names, sync forms and spans."""

from __future__ import annotations

import sys
import types
from typing import Any

import pytest

from edgewise.agent import Embedder, EmbeddingModel, EmbeddingResult, EmbeddingSettings
from edgewise.agent.embeddings import (
    TestEmbeddingModel,
    WrapperEmbeddingModel,
    infer_embedding_model,
    merge_embedding_settings,
)
from edgewise.agent.embeddings.google import GoogleEmbeddingModel, GoogleEmbeddingSettings
from edgewise.agent.embeddings.openai import OpenAIEmbeddingModel
from edgewise.agent.exceptions import ModelHTTPError, UnexpectedModelBehavior, UserError
from edgewise.agent.providers.google import GoogleProvider
from edgewise.agent.providers.openai import OpenAIProvider

from .conftest import LocalServer, Reply

SECRET = 'sk-embeddings-secret'


def _openai_reply(*vectors: list[float], usage: dict[str, Any] | None = None) -> dict[str, Any]:
    # The endpoint may give the items in any order; `index` says whose each is.
    data = [{'object': 'embedding', 'index': i, 'embedding': v} for i, v in enumerate(vectors)]
    reply: dict[str, Any] = {'object': 'list', 'data': list(reversed(data)), 'model': 'text-embedding-3-small-v2'}
    if usage is not None:
        reply['usage'] = usage
    return reply


@pytest.mark.anyio
async def test_the_test_model_through_an_embedder() -> None:
    model = TestEmbeddingModel(dimensions=4, settings={'truncate': True})
    embedder = Embedder(model, settings={'extra_headers': {'x-a': '1'}})
    result = await embedder.embed_query('What is AI?')
    assert result.embeddings == [[1.0] * 4]
    assert result['What is AI?'] == result[0] == [1.0] * 4
    assert (result.input_type, result.model_name, result.provider_name) == ('query', 'test', 'test')
    assert result.usage.input_tokens == 3
    assert model.last_settings == {'truncate': True, 'extra_headers': {'x-a': '1'}}
    docs = await embedder.embed_documents(['one', 'two words'], settings={'dimensions': 2})
    assert (docs.embeddings, docs.input_type, docs.usage.input_tokens) == ([[1.0, 1.0], [1.0, 1.0]], 'document', 3)
    assert await embedder.max_input_tokens() == 1024
    assert await embedder.count_tokens('a b c') == 3
    with pytest.raises(ValueError, match='not in list'):
        result['not an input']


def test_the_sync_forms() -> None:
    embedder = Embedder(TestEmbeddingModel(dimensions=2))
    assert embedder.embed_query_sync('q').embeddings == [[1.0, 1.0]]
    assert embedder.embed_documents_sync(['d']).input_type == 'document'
    assert embedder.embed_sync('x', input_type='query').inputs == ['x']
    assert embedder.max_input_tokens_sync() == 1024
    assert embedder.count_tokens_sync('') == 0


@pytest.mark.anyio
async def test_override_and_names(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('OPENAI_API_KEY', 'k')
    monkeypatch.setenv('GEMINI_API_KEY', 'g')
    monkeypatch.setenv('DEEPSEEK_API_KEY', 'd')
    embedder = Embedder('openai:text-embedding-3-small')
    assert embedder.model == 'openai:text-embedding-3-small'  # found on first use
    test_model = TestEmbeddingModel()
    with embedder.override(model=test_model):
        await embedder.embed_query('test')
    assert test_model.last_settings == {}
    assert isinstance(embedder.model, str)
    with embedder.override():  # nothing to override
        assert isinstance(embedder._get_model(), OpenAIEmbeddingModel)
    assert isinstance(embedder.model, OpenAIEmbeddingModel)
    assert isinstance(Embedder('google:gemini-embedding-001', defer_model_check=False).model, GoogleEmbeddingModel)
    ollama = infer_embedding_model('deepseek:some-embedder')
    assert isinstance(ollama, OpenAIEmbeddingModel)
    assert ollama.system == 'deepseek'
    assert isinstance(infer_embedding_model('test'), TestEmbeddingModel)
    assert infer_embedding_model(test_model) is test_model
    with pytest.raises(ValueError, match='provider prefix'):
        infer_embedding_model('text-embedding-3-small')
    with pytest.raises(UserError, match="'sentence-transformers' are not available"):
        infer_embedding_model('sentence-transformers:all-MiniLM-L6-v2')
    with pytest.raises(UserError, match='Unknown embeddings model'):
        infer_embedding_model('nowhere:model')


@pytest.mark.anyio
async def test_openai_embeddings_over_http(local_server: LocalServer) -> None:
    local_server.script(
        Reply(200, _openai_reply([0.1, 0.2], [0.3, 0.4], usage={'prompt_tokens': 7, 'total_tokens': 7})),
        Reply(200, _openai_reply([0.5, 0.6])),
    )
    provider = OpenAIProvider(base_url=local_server.url, api_key=SECRET)
    model = OpenAIEmbeddingModel('text-embedding-3-small', provider=provider, settings={'dimensions': 2})
    async with provider:
        result = await Embedder(model).embed_documents(
            ['first', 'second'], settings={'extra_headers': {'x-trace': 't1'}, 'extra_body': {'user': 'u-1'}}
        )
        single = await model.embed('third', input_type='query')
    assert result.embeddings == [[0.1, 0.2], [0.3, 0.4]]  # in the order of the inputs
    assert (result.model_name, result.provider_name, result.usage.input_tokens) == (
        'text-embedding-3-small-v2',
        'openai',
        7,
    )
    assert single.usage.input_tokens == 0  # a server that leaves usage out
    first, _ = local_server.received
    assert first['path'] == '/v1/embeddings'
    assert first['body'] == {
        'input': ['first', 'second'],
        'model': 'text-embedding-3-small',
        'encoding_format': 'float',
        'dimensions': 2,
        'user': 'u-1',
    }
    assert first['headers']['authorization'] == f'Bearer {SECRET}'
    assert first['headers']['x-trace'] == 't1'
    assert model.base_url == local_server.url
    assert await model.max_input_tokens() == 8192


@pytest.mark.anyio
async def test_openai_embedding_errors_and_bad_answers(local_server: LocalServer) -> None:
    local_server.script(
        Reply(400, {'error': {'message': 'bad input', 'type': 'invalid_request_error'}}),
        Reply(200, {'object': 'list'}),
        Reply(200, _openai_reply([0.1])),
    )
    provider = OpenAIProvider(base_url=local_server.url, api_key=SECRET)
    model = OpenAIEmbeddingModel('m', provider=provider)
    async with provider:
        with pytest.raises(ModelHTTPError) as error:
            await model.embed('x', input_type='query')
        assert error.value.status_code == 400
        assert SECRET not in str(error.value)
        with pytest.raises(UnexpectedModelBehavior, match='no `data`'):
            await model.embed('x', input_type='query')
        with pytest.raises(UnexpectedModelBehavior, match='1 embeddings for 2 inputs'):
            await model.embed(['x', 'y'], input_type='query')


@pytest.mark.anyio
async def test_counting_openai_tokens_needs_tiktoken(monkeypatch: pytest.MonkeyPatch) -> None:
    model = OpenAIEmbeddingModel('text-embedding-3-small', provider=OpenAIProvider(api_key='k'))
    monkeypatch.setitem(sys.modules, 'tiktoken', None)  # not installed
    with pytest.raises(UserError, match='pip install tiktoken'):
        await model.count_tokens('hello')

    class Encoding:
        def encode(self, text: str) -> list[int]:
            return list(range(len(text.split())))

    def encoding_for_model(name: str) -> Encoding:
        if name != 'text-embedding-3-small':
            raise KeyError(name)
        return Encoding()

    fake = types.ModuleType('tiktoken')
    fake.encoding_for_model = encoding_for_model  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, 'tiktoken', fake)
    assert await model.count_tokens('three short words') == 3
    with pytest.raises(ValueError, match='not supported by tiktoken'):
        await OpenAIEmbeddingModel('other', provider=OpenAIProvider(api_key='k')).count_tokens('x')
    other = OpenAIEmbeddingModel('m', provider=OpenAIProvider(base_url='http://127.0.0.1:1/v1'))
    assert other.system == 'openai'  # OpenAIProvider with another base URL is still named 'openai'


@pytest.mark.anyio
async def test_gemini_embeddings_over_http(local_server: LocalServer) -> None:
    reply = {'embeddings': [{'values': [0.1, 0.2]}, {'values': [0.3, 0.4]}]}
    local_server.script(Reply(200, reply), Reply(200, reply), Reply(200, reply), Reply(200, {'nothing': []}))
    provider = GoogleProvider(api_key=SECRET, base_url=local_server.url.removesuffix('/v1'))
    older = GoogleEmbeddingModel('gemini-embedding-001', provider=provider)
    newer = GoogleEmbeddingModel('models/gemini-embedding-2', provider=provider)
    async with provider:
        result = await older.embed(
            ['a', 'b'], input_type='document', settings=GoogleEmbeddingSettings(dimensions=2, google_title='T')
        )
        await newer.embed(['a', 'b'], input_type='document', settings=GoogleEmbeddingSettings(google_title='Doc'))
        await newer.embed(['a', 'b'], input_type='query', settings=GoogleEmbeddingSettings(google_task='clustering'))
        with pytest.raises(UnexpectedModelBehavior, match='no `embeddings`'):
            await older.embed('a', input_type='query')
    assert result.embeddings == [[0.1, 0.2], [0.3, 0.4]]
    assert (result.provider_name, result.usage.input_tokens) == ('google', 0)
    first, second, third, _ = local_server.received
    assert first['path'] == '/v1beta/models/gemini-embedding-001:batchEmbedContents'
    assert first['headers']['x-goog-api-key'] == SECRET
    assert first['body']['requests'][0] == {
        'model': 'models/gemini-embedding-001',
        'outputDimensionality': 2,
        'taskType': 'RETRIEVAL_DOCUMENT',
        'title': 'T',
        'content': {'parts': [{'text': 'a'}]},
    }
    # gemini-embedding-2 is told its task by a prefix on each text.
    assert [r['content']['parts'][0]['text'] for r in second['body']['requests']] == [
        'title: Doc | text: a',
        'title: Doc | text: b',
    ]
    assert 'taskType' not in second['body']['requests'][0]
    assert third['body']['requests'][0]['content']['parts'][0]['text'] == 'task: clustering | query: a'
    assert await older.max_input_tokens() == 2048


@pytest.mark.anyio
async def test_gemini_task_settings_of_the_other_kind_warn(local_server: LocalServer) -> None:
    reply = {'embeddings': [{'values': [0.1]}]}
    local_server.script(Reply(200, reply), Reply(200, reply), Reply(200, reply))
    provider = GoogleProvider(api_key=SECRET, base_url=local_server.url.removesuffix('/v1'))
    async with provider:
        with pytest.warns(UserWarning, match='`google_task` is only supported by `gemini-embedding-2`'):
            await GoogleEmbeddingModel('gemini-embedding-001', provider=provider).embed(
                'a',
                input_type='query',
                settings=GoogleEmbeddingSettings(google_task='clustering', google_task_type='CLUSTERING'),
            )
        with pytest.warns(UserWarning, match='`google_task_type` is not supported by `gemini-embedding-2`'):
            await GoogleEmbeddingModel('gemini-embedding-2', provider=provider).embed(
                'a', input_type='query', settings=GoogleEmbeddingSettings(google_task_type='CLUSTERING')
            )
        await GoogleEmbeddingModel('gemini-embedding-2', provider=provider).embed(
            'a', input_type='query', settings=GoogleEmbeddingSettings(google_task='raw')
        )
    first, _, raw = local_server.received
    assert first['body']['requests'][0]['taskType'] == 'CLUSTERING'
    assert raw['body']['requests'][0]['content']['parts'][0]['text'] == 'a'


@pytest.mark.anyio
async def test_a_wrapped_model_passes_everything_through() -> None:
    class Counting(WrapperEmbeddingModel):
        calls = 0

        async def embed(self, inputs: Any, *, input_type: Any, settings: EmbeddingSettings | None = None) -> Any:
            self.calls += 1
            return await super().embed(inputs, input_type=input_type, settings=settings)

    inner = TestEmbeddingModel('inner', provider_name='p', settings={'dimensions': 3})
    wrapped = Counting(inner)
    assert (wrapped.model_name, wrapped.system, wrapped.settings, wrapped.base_url) == (
        'inner',
        'p',
        {'dimensions': 3},
        None,
    )
    assert wrapped.last_settings is None  # other attributes come from the wrapped model
    result = await Embedder(wrapped).embed_query('q')
    assert (result.embeddings, wrapped.calls) == ([[1.0, 1.0, 1.0]], 1)
    assert await wrapped.max_input_tokens() == 1024
    assert await wrapped.count_tokens('a b') == 2
    assert isinstance(Counting('test').wrapped, TestEmbeddingModel)
    with pytest.raises(AttributeError):
        WrapperEmbeddingModel.__new__(WrapperEmbeddingModel).wrapped  # noqa: B018


@pytest.mark.anyio
async def test_a_model_of_your_own(capfire: Any) -> None:
    class Hashing(EmbeddingModel):
        @property
        def model_name(self) -> str:
            return 'hashing'

        @property
        def system(self) -> str:
            return 'local'

        async def embed(self, inputs: Any, *, input_type: Any, settings: EmbeddingSettings | None = None) -> Any:
            texts, _ = self.prepare_embed(inputs, settings)
            return EmbeddingResult(
                [[float(len(t))] for t in texts], inputs=texts, input_type=input_type, model_name='hashing',
                provider_name='local',
            )  # fmt: skip

    model = Hashing()
    assert (model.settings, model.base_url, await model.max_input_tokens()) == (None, None, None)
    with pytest.raises(NotImplementedError, match='Hashing cannot count tokens'):
        await model.count_tokens('x')
    assert (await Embedder(model).embed_query(['ab', 'abc'])).embeddings == [[2.0], [3.0]]
    assert [s['name'] for s in capfire.exporter.exported_spans_as_dict()] == []  # embedders trace when asked to
    await Embedder(model, instrument=True).embed_query('a')
    Embedder.instrument_all(True)
    try:
        await Embedder(model).embed_query('a')
    finally:
        Embedder.instrument_all(False)
    assert [s['name'] for s in capfire.exporter.exported_spans_as_dict()] == ['embeddings {model_name}'] * 2


def test_a_results_cost_comes_from_genai_prices() -> None:
    result = EmbeddingResult(
        [[0.0]], inputs=['x'], input_type='query', model_name='text-embedding-3-small', provider_name='openai'
    )
    result.usage.input_tokens = 1_000_000
    assert float(result.cost().total_price) == pytest.approx(0.02)


def test_merging_settings() -> None:
    assert merge_embedding_settings(None, None) is None
    assert merge_embedding_settings({'dimensions': 2}, None) == {'dimensions': 2}
    assert merge_embedding_settings({'dimensions': 2, 'truncate': True}, {'dimensions': 3}) == {
        'dimensions': 3,
        'truncate': True,
    }
