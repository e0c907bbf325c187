"""The model families of the OpenAI-compatible providers' names: which profile a model name takes, by the `vendor/`
part of names such as `meta-llama/llama-3` (`VENDOR_FAMILIES`) or by the start of the name (`PREFIX_FAMILIES`).

A provider picks the entries its service uses (`vendors(...)`, `prefixes(...)`), so that one vendor or prefix means
the same family everywhere; an entry it reads otherwise is passed by keyword, beside the picked ones.
"""

from __future__ import annotations as _annotations

from collections.abc import Callable, Mapping

from ..profiles import ModelProfile
from ..profiles.amazon import amazon_model_profile
from ..profiles.anthropic import anthropic_model_profile
from ..profiles.cohere import cohere_model_profile
from ..profiles.deepseek import deepseek_model_profile
from ..profiles.google import google_model_profile
from ..profiles.grok import grok_model_profile
from ..profiles.groq import groq_model_profile
from ..profiles.harmony import harmony_model_profile
from ..profiles.meta import meta_model_profile
from ..profiles.mistral import mistral_model_profile
from ..profiles.moonshotai import moonshotai_model_profile
from ..profiles.openai import openai_model_profile
from ..profiles.qwen import qwen_model_profile
from ..profiles.zai import zai_model_profile

Family = Callable[[str], ModelProfile | None]
"""A model family's profile function: the profile of a model name, `None` when the family has nothing to say."""

VENDOR_FAMILIES: Mapping[str, Family] = {
    'alibaba': qwen_model_profile,
    'amazon': amazon_model_profile,
    'anthropic': anthropic_model_profile,
    'bedrock': amazon_model_profile,
    'cohere': cohere_model_profile,
    'deepseek': deepseek_model_profile,
    'deepseek-ai': deepseek_model_profile,
    'google': google_model_profile,
    'groq': groq_model_profile,
    'meta': meta_model_profile,
    'meta-llama': meta_model_profile,
    'meta-models': meta_model_profile,
    'mistral': mistral_model_profile,
    'mistralai': mistral_model_profile,
    'moonshotai': moonshotai_model_profile,
    'openai': openai_model_profile,
    'qwen': qwen_model_profile,
    'vertex': google_model_profile,
    'x-ai': grok_model_profile,
    'xai': grok_model_profile,
    'z-ai': zai_model_profile,
    'zai': zai_model_profile,
    'zai-org': zai_model_profile,
}
"""The family of a `vendor/model` name, by its vendor (in lower case)."""

PREFIX_FAMILIES: Mapping[str, Family] = {
    'c4ai-command': cohere_model_profile,
    'command': cohere_model_profile,
    'compound-': groq_model_profile,
    'deepseek': deepseek_model_profile,
    'deepseek-': deepseek_model_profile,
    'gemma': google_model_profile,
    'glm': zai_model_profile,
    'gpt': harmony_model_profile,
    'gpt-oss': harmony_model_profile,
    'llama': meta_model_profile,
    'llama-': meta_model_profile,
    'meta-': meta_model_profile,
    'meta-llama-': meta_model_profile,
    'meta-llama/': meta_model_profile,
    'mistral': mistral_model_profile,
    'moonshotai/': moonshotai_model_profile,
    'qwen': qwen_model_profile,
    'qwq': qwen_model_profile,
    'zai': zai_model_profile,
}
"""The family of a model name, by how it starts (in lower case). A provider's picks are tried in the order given."""


def vendors(*names: str, **others: Family) -> dict[str, Family]:
    """The vendor table of a provider: the named entries of `VENDOR_FAMILIES`, then `others`."""
    return {name: VENDOR_FAMILIES[name] for name in names} | others


def prefixes(*names: str, **others: Family) -> dict[str, Family]:
    """The prefix table of a provider: the named entries of `PREFIX_FAMILIES`, in that order, then `others`."""
    return {name: PREFIX_FAMILIES[name] for name in names} | others
