"""`GoogleEmbeddingModel`: Gemini's embedding models on the Gemini API (`batchEmbedContents`), over httpx."""

from __future__ import annotations as _annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..models._model import check_allow_model_requests
from ..models._task_model import ProviderBacked
from ..models.google import API_VERSION
from ..providers import Provider
from ..usage import RequestUsage
from ._request import post_embeddings
from .base import EmbeddingModel
from .result import EmbeddingResult, EmbedInputType
from .settings import EmbeddingSettings

__all__ = ('GoogleEmbeddingModel', 'GoogleEmbeddingModelName', 'GoogleEmbeddingSettings', 'GoogleEmbeddingTask')

GoogleEmbeddingModelName = str | Literal['gemini-embedding-2', 'gemini-embedding-001']
"""The name of a Gemini embedding model."""

GoogleEmbeddingTask = Literal[
    'search result',
    'question answering',
    'fact checking',
    'code retrieval',
    'classification',
    'clustering',
    'sentence similarity',
    'raw',
]
"""What `gemini-embedding-2` embeds for, said by a prefix on each text: a retrieval task (`'search result'`, the
default; `'question answering'`, `'fact checking'`, `'code retrieval'`) prefixes queries and documents differently,
a symmetric one (`'classification'`, `'clustering'`, `'sentence similarity'`) both alike; `'raw'` sends the text as
it is."""

_SYMMETRIC: frozenset[str] = frozenset({'classification', 'clustering', 'sentence similarity'})
_PREFIX_MODEL = 'gemini-embedding-2'
"""The model told its task by a prefix on the text; the others take a `taskType` field."""
_MAX_INPUT_TOKENS = {'gemini-embedding-001': 2048, 'gemini-embedding-2-preview': 8192, 'gemini-embedding-2': 8192}


class GoogleEmbeddingSettings(EmbeddingSettings, total=False):
    """Settings of a Gemini embedding request: the shared ones (`dimensions`, `extra_headers`, `extra_body`) and
    Google's own, prefixed `google_`."""

    google_task: GoogleEmbeddingTask
    """`gemini-embedding-2` only: the task, as a prefix on each text (default `'search result'`)."""
    google_task_type: str
    """Other models: the `taskType` (`'RETRIEVAL_QUERY'`, `'RETRIEVAL_DOCUMENT'`, `'SEMANTIC_SIMILARITY'`, ...);
    by default the retrieval type of the input type."""
    google_title: str
    """The title of the documents embedded (for retrieval documents)."""


@dataclass(init=False)
class GoogleEmbeddingModel(ProviderBacked, EmbeddingModel):
    """A Gemini embedding model on the Gemini API (`GoogleProvider`: key in `GEMINI_API_KEY` or
    `GOOGLE_API_KEY`)."""

    def __init__(
        self,
        model_name: GoogleEmbeddingModelName,
        *,
        provider: str | Provider[Any] = 'google',
        settings: EmbeddingSettings | None = None,
    ) -> None:
        """Configure the model: `model_name` such as `'gemini-embedding-001'`, the provider or its name, and the
        defaults of its requests."""
        self._bind(model_name.removeprefix('models/'), provider)
        super().__init__(settings=settings)

    async def embed(
        self, inputs: str | Sequence[str], *, input_type: EmbedInputType, settings: EmbeddingSettings | None = None
    ) -> EmbeddingResult:
        """The vectors of `inputs`, in one `batchEmbedContents` request. The Gemini API reports no token usage, so
        the result's usage has none.

        Raises:
            ModelHTTPError: the API answered with an error (after retries).
            ModelAPIError: the API could not be reached (after retries).
        """
        check_allow_model_requests()
        texts, merged = self.prepare_embed(inputs, settings)
        google: GoogleEmbeddingSettings = merged  # type: ignore[assignment]
        name = f'models/{self._model_name}'
        common: dict[str, Any] = {'model': name}
        if dimensions := google.get('dimensions'):
            common['outputDimensionality'] = dimensions
        if self._model_name == _PREFIX_MODEL:
            sent = self._prefixed(texts, input_type, google)
        else:
            sent = texts
            if google.get('google_task') is not None:
                warnings.warn(
                    f'`google_task` is only supported by `{_PREFIX_MODEL}` and is ignored; `{self._model_name}` '
                    'conditions on a task via the `google_task_type` setting instead.',
                    UserWarning,
                    stacklevel=2,
                )
            task_type = google.get('google_task_type') or (
                'RETRIEVAL_DOCUMENT' if input_type == 'document' else 'RETRIEVAL_QUERY'
            )
            common['taskType'] = task_type
            if title := google.get('google_title'):
                common['title'] = title
        body: dict[str, Any] = {'requests': [{**common, 'content': {'parts': [{'text': text}]}} for text in sent]}
        _, embeddings = await post_embeddings(
            self._provider,
            f'{API_VERSION}/{name}:batchEmbedContents',
            body,
            google,
            model_name=self._model_name,
            endpoint_name='batchEmbedContents',
            vectors=lambda data: [item['values'] for item in data['embeddings']],
            missing='no `embeddings`',
            count=len(texts),
        )
        return EmbeddingResult(
            embeddings=embeddings,
            inputs=texts,
            input_type=input_type,
            usage=RequestUsage(),
            model_name=self._model_name,
            provider_name=self.system,
        )

    def _prefixed(self, texts: list[str], input_type: EmbedInputType, settings: GoogleEmbeddingSettings) -> list[str]:
        if settings.get('google_task_type') is not None:
            warnings.warn(
                f'`google_task_type` is not supported by `{_PREFIX_MODEL}` and is ignored; this model conditions on a '
                'task via the `google_task` text prefix instead.',
                UserWarning,
                stacklevel=3,
            )
        task = settings.get('google_task') or 'search result'
        if task == 'raw':
            return texts
        if input_type == 'document' and task not in _SYMMETRIC:
            title = settings.get('google_title') or 'none'
            return [f'title: {title} | text: {text}' for text in texts]
        return [f'task: {task} | query: {text}' for text in texts]

    async def max_input_tokens(self) -> int | None:
        """The model's input limit, where known."""
        return _MAX_INPUT_TOKENS.get(self._model_name)
