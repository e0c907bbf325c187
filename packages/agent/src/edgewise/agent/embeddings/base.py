"""`EmbeddingModel`: what an embedding model implements (subclass it for a model of your own)."""

from __future__ import annotations as _annotations

from abc import abstractmethod
from collections.abc import Sequence

from ..models._task_model import TaskModel
from .result import EmbeddingResult, EmbedInputType
from .settings import EmbeddingSettings

__all__ = ('EmbeddingModel',)


class EmbeddingModel(TaskModel[EmbeddingSettings]):
    """An embedding model: turns texts into vectors (`embed`), and may say how many tokens it takes.

    Subclasses give `model_name`, `system` and `embed`, and call `prepare_embed` at the start of `embed`. `settings`
    are the defaults of the model's requests, and `base_url` the provider's API (`None` where there is none).
    """

    @abstractmethod
    async def embed(
        self, inputs: str | Sequence[str], *, input_type: EmbedInputType, settings: EmbeddingSettings | None = None
    ) -> EmbeddingResult:
        """The vectors of `inputs` (one text or several), embedded as queries or as documents."""
        raise NotImplementedError

    def prepare_embed(
        self, inputs: str | Sequence[str], settings: EmbeddingSettings | None = None
    ) -> tuple[list[str], EmbeddingSettings]:
        """The inputs as a list, and `settings` over the model's defaults."""
        listed = [inputs] if isinstance(inputs, str) else list(inputs)
        return listed, self.merged_settings(settings)

    async def max_input_tokens(self) -> int | None:
        """How many tokens one input may have, or `None` if that is not known."""
        return None

    async def count_tokens(self, text: str) -> int:
        """How many tokens `text` is to this model.

        Raises:
            NotImplementedError: the model cannot count tokens.
        """
        raise NotImplementedError(f'{type(self).__name__} cannot count tokens.')
