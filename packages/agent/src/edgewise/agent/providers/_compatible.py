"""The OpenAI-compatible providers: `OpenAIProvider` with another base URL, key variable, headers and profile.

Each class names one row of `_SPECS` (the data) over `OpenAIProvider` (the mechanism);
`COMPATIBLE_PROVIDERS` maps the names of `'<provider>:<model>'` strings to them.
"""

from __future__ import annotations as _annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

from ..profiles import ModelProfile, merge_profile
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
from ..profiles.openai import OpenAIJsonSchemaTransformer, OpenAIModelProfile, openai_model_profile
from ..profiles.qwen import qwen_model_profile
from ..profiles.zai import zai_model_profile
from .openai import OpenAIProvider, ProviderSpec

if TYPE_CHECKING:
    import httpx

__all__ = (
    'OllamaProvider',
    'OpenRouterProvider',
    'GroqProvider',
    'DeepSeekProvider',
    'TogetherProvider',
    'FireworksProvider',
    'CerebrasProvider',
    'VercelProvider',
    'GrokProvider',
    'XaiProvider',
    'MoonshotAIProvider',
    'HerokuProvider',
    'LiteLLMProvider',
    'COMPATIBLE_PROVIDERS',
)


Family = Callable[[str], ModelProfile | None]

_OPENAI_BASE: OpenAIModelProfile = {
    'json_schema_transformer': OpenAIJsonSchemaTransformer,
    'supports_inline_system_prompts': True,
}


def _profile(
    by_prefix: Mapping[str, Family] | None = None,
    by_vendor: Mapping[str, Family] | None = None,
    fallback: Family | None = None,
    **overrides: Any,
) -> Family:
    """A provider's profile function: the model family's profile (found by name prefix, or by the `vendor/`
    part of names such as `meta-llama/llama-3`) under the provider's own OpenAI-compatible settings."""

    def profile(model_name: str) -> ModelProfile | None:
        family: ModelProfile | None = None
        lowered = model_name.lower()
        if by_vendor is not None and '/' in model_name:
            vendor, _, name = lowered.partition('/')
            if (found := by_vendor.get(vendor)) is not None:
                family = found(name)
        for prefix, found in (by_prefix or {}).items():
            if lowered.startswith(prefix):
                family = found(lowered)
                break
        if family is None and fallback is not None:
            family = fallback(model_name)
        # As pydantic-ai 2.x: the family's keys over OpenAI's schema dialect, the provider's own keys over both.
        return merge_profile(_OPENAI_BASE, family, cast(ModelProfile, overrides))

    return profile


_GROK_PROFILE = _profile(fallback=grok_model_profile, openai_supports_strict_tool_definition=False)
"""Grok models, under either of their two provider names: no strict tool schemas."""

_SPECS: dict[str, ProviderSpec] = {
    spec.name: spec
    for spec in (
        ProviderSpec(
            name='ollama',
            class_name='OllamaProvider',
            default_base_url=None,
            base_url_env='OLLAMA_BASE_URL',
            api_key_envs=('OLLAMA_API_KEY',),
            api_key_required=False,
            profile=_profile(
                by_prefix={
                    'llama': meta_model_profile,
                    'gemma': google_model_profile,
                    'qwen': qwen_model_profile,
                    'qwq': qwen_model_profile,
                    'deepseek': deepseek_model_profile,
                    'mistral': mistral_model_profile,
                    'command': cohere_model_profile,
                    'gpt-oss': harmony_model_profile,
                },
                openai_chat_thinking_field='reasoning',
                openai_supports_strict_tool_definition=False,
                supports_json_schema_output=True,
                supports_json_object_output=True,
            ),
        ),
        ProviderSpec(
            name='openrouter',
            class_name='OpenRouterProvider',
            default_base_url='https://openrouter.ai/api/v1',
            api_key_envs=('OPENROUTER_API_KEY',),
            profile=_profile(
                by_vendor={
                    'google': google_model_profile,
                    'openai': openai_model_profile,
                    'anthropic': anthropic_model_profile,
                    'mistralai': mistral_model_profile,
                    'qwen': qwen_model_profile,
                    'x-ai': grok_model_profile,
                    'cohere': cohere_model_profile,
                    'amazon': amazon_model_profile,
                    'deepseek': deepseek_model_profile,
                    'meta-llama': meta_model_profile,
                    'moonshotai': moonshotai_model_profile,
                },
                openai_chat_send_back_thinking_parts='field',
                openai_chat_thinking_field='reasoning',
                supports_thinking=True,
            ),
        ),
        ProviderSpec(
            name='groq',
            class_name='GroqProvider',
            default_base_url='https://api.groq.com/openai/v1',
            base_url_env='GROQ_BASE_URL',
            base_url_suffix='/openai/v1',
            api_key_envs=('GROQ_API_KEY',),
            profile=_profile(
                by_prefix={
                    'llama': meta_model_profile,
                    'meta-llama/': meta_model_profile,
                    'gemma': google_model_profile,
                    'qwen': qwen_model_profile,
                    'deepseek': deepseek_model_profile,
                    'mistral': mistral_model_profile,
                    'moonshotai/': moonshotai_model_profile,
                    'compound-': groq_model_profile,
                    'openai/': lambda name: openai_model_profile(name.removeprefix('openai/')),
                },
                openai_chat_thinking_field='reasoning',
            ),
        ),
        ProviderSpec(
            name='deepseek',
            class_name='DeepSeekProvider',
            default_base_url='https://api.deepseek.com',
            api_key_envs=('DEEPSEEK_API_KEY',),
            profile=_profile(
                fallback=deepseek_model_profile,
                supports_json_object_output=True,
                openai_chat_thinking_field='reasoning_content',
                openai_chat_send_back_thinking_parts='field',
            ),
        ),
        ProviderSpec(
            name='together',
            class_name='TogetherProvider',
            default_base_url='https://api.together.xyz/v1',
            api_key_envs=('TOGETHER_API_KEY',),
            profile=_profile(
                by_vendor={
                    'deepseek-ai': deepseek_model_profile,
                    'google': google_model_profile,
                    'qwen': qwen_model_profile,
                    'meta-llama': meta_model_profile,
                    'mistralai': mistral_model_profile,
                }
            ),
        ),
        ProviderSpec(
            name='fireworks',
            class_name='FireworksProvider',
            default_base_url='https://api.fireworks.ai/inference/v1',
            api_key_envs=('FIREWORKS_API_KEY',),
            profile=_profile(
                by_prefix={
                    'accounts/fireworks/models/' + p: f
                    for p, f in (
                        ('llama', meta_model_profile),
                        ('qwen', qwen_model_profile),
                        ('deepseek', deepseek_model_profile),
                        ('mistral', mistral_model_profile),
                        ('gemma', google_model_profile),
                    )
                }
            ),
        ),
        ProviderSpec(
            name='cerebras',
            class_name='CerebrasProvider',
            default_base_url='https://api.cerebras.ai/v1',
            api_key_envs=('CEREBRAS_API_KEY',),
            headers={'X-Cerebras-3rd-Party-Integration': 'edgewise'},
            profile=_profile(
                by_prefix={
                    'llama': meta_model_profile,
                    'qwen': qwen_model_profile,
                    'gpt-oss': harmony_model_profile,
                    'zai': zai_model_profile,
                },
                openai_unsupported_model_settings=(
                    'frequency_penalty',
                    'logit_bias',
                    'presence_penalty',
                    'parallel_tool_calls',
                    'openai_service_tier',
                ),
            ),
        ),
        ProviderSpec(
            name='vercel',
            class_name='VercelProvider',
            default_base_url='https://ai-gateway.vercel.sh/v1',
            api_key_envs=('VERCEL_AI_GATEWAY_API_KEY', 'VERCEL_OIDC_TOKEN'),
            profile=_profile(
                by_vendor={
                    'anthropic': anthropic_model_profile,
                    'bedrock': amazon_model_profile,
                    'cohere': cohere_model_profile,
                    'deepseek': deepseek_model_profile,
                    'mistral': mistral_model_profile,
                    'openai': openai_model_profile,
                    'vertex': google_model_profile,
                    'xai': grok_model_profile,
                }
            ),
        ),
        ProviderSpec(
            name='grok',
            class_name='GrokProvider',
            default_base_url='https://api.x.ai/v1',
            api_key_envs=('GROK_API_KEY',),
            profile=_GROK_PROFILE,
        ),
        ProviderSpec(
            name='xai',
            class_name='XaiProvider',
            default_base_url='https://api.x.ai/v1',
            api_key_envs=('XAI_API_KEY',),
            profile=_GROK_PROFILE,
        ),
        ProviderSpec(
            name='moonshotai',
            class_name='MoonshotAIProvider',
            default_base_url='https://api.moonshot.ai/v1',
            api_key_envs=('MOONSHOTAI_API_KEY',),
            profile=_profile(
                fallback=moonshotai_model_profile,
                openai_supports_tool_choice_required=False,
                supports_json_object_output=True,
                openai_chat_thinking_field='reasoning_content',
                openai_chat_send_back_thinking_parts='field',
            ),
        ),
        ProviderSpec(
            name='heroku',
            class_name='HerokuProvider',
            default_base_url='https://us.inference.heroku.com/v1',
            base_url_env='HEROKU_INFERENCE_URL',
            base_url_suffix='/v1',
            api_key_envs=('HEROKU_INFERENCE_KEY',),
            profile=_profile(),
        ),
        ProviderSpec(
            name='litellm',
            class_name='LiteLLMProvider',
            default_base_url=None,
            base_url_env='LITELLM_BASE_URL',
            api_key_envs=('LITELLM_API_KEY',),
            api_key_required=False,
            profile=_profile(
                by_vendor={
                    'anthropic': anthropic_model_profile,
                    'openai': openai_model_profile,
                    'google': google_model_profile,
                    'mistralai': mistral_model_profile,
                    'mistral': mistral_model_profile,
                    'cohere': cohere_model_profile,
                    'amazon': amazon_model_profile,
                    'bedrock': amazon_model_profile,
                    'meta-llama': meta_model_profile,
                    'meta': meta_model_profile,
                    'groq': groq_model_profile,
                    'deepseek': deepseek_model_profile,
                    'moonshotai': moonshotai_model_profile,
                    'x-ai': grok_model_profile,
                    'qwen': qwen_model_profile,
                },
                fallback=openai_model_profile,
            ),
        ),
    )
}
"""What tells each OpenAI-compatible provider from OpenAI: base URL, key variables, headers, profile."""


class OllamaProvider(OpenAIProvider):
    """A local (or remote) Ollama server; the base URL comes from `OLLAMA_BASE_URL`, e.g. `http://localhost:11434/v1`."""

    _spec = _SPECS['ollama']


class OpenRouterProvider(OpenAIProvider):
    """OpenRouter (`OPENROUTER_API_KEY`)."""

    _spec = _SPECS['openrouter']


class GroqProvider(OpenAIProvider):
    """Groq's OpenAI-compatible API (`GROQ_API_KEY`; `GROQ_BASE_URL` names another host)."""

    _spec = _SPECS['groq']


class DeepSeekProvider(OpenAIProvider):
    """DeepSeek (`DEEPSEEK_API_KEY`); its reasoner's thinking comes and goes back in `reasoning_content`."""

    _spec = _SPECS['deepseek']


class TogetherProvider(OpenAIProvider):
    """Together AI (`TOGETHER_API_KEY`)."""

    _spec = _SPECS['together']


class FireworksProvider(OpenAIProvider):
    """Fireworks AI (`FIREWORKS_API_KEY`)."""

    _spec = _SPECS['fireworks']


class CerebrasProvider(OpenAIProvider):
    """Cerebras (`CEREBRAS_API_KEY`); settings its API rejects are left out of requests."""

    _spec = _SPECS['cerebras']


class VercelProvider(OpenAIProvider):
    """Vercel's AI Gateway (`VERCEL_AI_GATEWAY_API_KEY`, or `VERCEL_OIDC_TOKEN`)."""

    _spec = _SPECS['vercel']


class GrokProvider(OpenAIProvider):
    """xAI's Grok models under the `grok` name (`GROK_API_KEY`); they take no strict tool schemas."""

    _spec = _SPECS['grok']


class XaiProvider(OpenAIProvider):
    """xAI's OpenAI-compatible API (`XAI_API_KEY`)."""

    _spec = _SPECS['xai']


class MoonshotAIProvider(OpenAIProvider):
    """Moonshot AI's Kimi models (`MOONSHOTAI_API_KEY`); `tool_choice='required'` is not accepted."""

    _spec = _SPECS['moonshotai']


class HerokuProvider(OpenAIProvider):
    """Heroku's managed inference (`HEROKU_INFERENCE_KEY`; `HEROKU_INFERENCE_URL` names another host)."""

    _spec = _SPECS['heroku']


class LiteLLMProvider(OpenAIProvider):
    """A LiteLLM proxy, given by `base_url` (or `api_base=`, as pydantic-ai names it); the key is optional."""

    _spec = _SPECS['litellm']

    def __init__(
        self,
        *,
        api_key: str | None = None,
        api_base: str | None = None,
        base_url: str | None = None,
        http_client: httpx.AsyncClient | None = None,
        max_retries: int = 2,
    ) -> None:
        """Configure the provider; `api_base` and `base_url` are two names of the proxy's URL."""
        super().__init__(
            base_url=api_base or base_url, api_key=api_key, http_client=http_client, max_retries=max_retries
        )


COMPATIBLE_PROVIDERS: dict[str, type[OpenAIProvider]] = {
    cls._spec.name: cls
    for cls in (
        OllamaProvider, OpenRouterProvider, GroqProvider, DeepSeekProvider, TogetherProvider, FireworksProvider,
        CerebrasProvider, VercelProvider, GrokProvider, XaiProvider, MoonshotAIProvider, HerokuProvider,
        LiteLLMProvider,
    )
}  # fmt: skip
"""The OpenAI-compatible providers, by name."""
