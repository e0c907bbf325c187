"""The OpenAI-compatible providers: `OpenAIProvider` with another base URL, key variable, headers and profile.

Each class names one row of `_SPECS` (the data) over `OpenAIProvider` (the mechanism);
`COMPATIBLE_PROVIDERS` maps the names of `'<provider>:<model>'` strings to them.
"""

from __future__ import annotations as _annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from ..profiles import ModelProfile, merge_profile
from ..profiles.deepseek import deepseek_model_profile
from ..profiles.google import google_model_profile
from ..profiles.grok import grok_model_profile
from ..profiles.harmony import harmony_model_profile
from ..profiles.meta import meta_model_profile, muse_model_profile
from ..profiles.mistral import mistral_model_profile
from ..profiles.moonshotai import moonshotai_model_profile
from ..profiles.openai import OpenAIJsonSchemaTransformer, OpenAIModelProfile, openai_model_profile
from ..profiles.qwen import qwen_model_profile
from ..profiles.zai import zai_model_profile
from ._families import Family, prefixes, vendors
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
    'AlibabaProvider',
    'CrusoeProvider',
    'NebiusProvider',
    'OVHcloudProvider',
    'SambaNovaProvider',
    'ZaiProvider',
    'VLLMProvider',
    'MetaProvider',
    'GitHubProvider',
    'COMPATIBLE_PROVIDERS',
)


_OPENAI_BASE: OpenAIModelProfile = {
    'json_schema_transformer': OpenAIJsonSchemaTransformer,
    'supports_inline_system_prompts': True,
}


def _deepseek_api_profile(model_name: str) -> ModelProfile | None:
    # On DeepSeek's API, R1 and the V4 models think when the request says nothing of thinking (V4 can be told not
    # to); other names (`deepseek-chat`) do not.
    thinks = model_name.startswith(('deepseek-r1', 'deepseek-v4-')) or model_name in (
        'deepseek-reasoner',
        'deepseek-flash',
    )
    # Flash and V4 reason at `low`, `high` or `max` (their `xhigh` is `high`): `'max'` reaches their deepest.
    deepest = model_name.startswith('deepseek-v4-') or model_name == 'deepseek-flash'
    return merge_profile(
        deepseek_model_profile(model_name),
        OpenAIModelProfile(thinking_enabled_by_default=thinks, openai_chat_supports_max_reasoning_effort=deepest),
        OpenAIModelProfile(supports_thinking=True) if deepest else None,
    )


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


def _alibaba_profile(model_name: str) -> ModelProfile | None:
    """Qwen on Alibaba Cloud's compatible mode: no file content parts; the Omni models take audio by URI."""
    profile = _profile(fallback=qwen_model_profile, openai_chat_supports_document_input=False)(model_name)
    if 'omni' in model_name.lower():
        profile = merge_profile(profile, OpenAIModelProfile(openai_chat_audio_input_encoding='uri'))
    return profile


_CEREBRAS_FAMILIES = _profile(
    by_prefix=prefixes('llama', 'qwen', 'gpt-oss', 'zai'),
    openai_unsupported_model_settings=(
        'frequency_penalty',
        'logit_bias',
        'presence_penalty',
        'parallel_tool_calls',
        'openai_service_tier',
    ),
)


def _cerebras_profile(model_name: str) -> ModelProfile | None:
    # Which Cerebras models reason, and which cannot stop (gpt-oss, Kimi K3 and GLM-5.3 reject `'none'`); GLM
    # (`zai-glm-*`) takes its earlier reasoning back only inside `<think>` tags of the content.
    lowered = model_name.lower()
    return merge_profile(
        _CEREBRAS_FAMILIES(model_name),
        OpenAIModelProfile(
            supports_thinking=lowered.startswith(('zai', 'gpt-oss', 'qwen-3.8', 'kimi-k3')),
            thinking_always_enabled=lowered.startswith(('gpt-oss', 'kimi-k3', 'zai-glm-5.3')),
            openai_chat_send_back_thinking_parts='tags' if lowered.startswith('zai') else 'auto',
        ),
    )


_MOONSHOTAI_FAMILY = _profile(
    fallback=moonshotai_model_profile,
    supports_forced_tool_choice=False,
    supports_json_object_output=True,
    openai_chat_thinking_field='reasoning_content',
    openai_chat_send_back_thinking_parts='field',
)
_KIMI_THINKING_OFF: dict[str, dict[str, Any]] = {
    'kimi-k3': {'reasoning_effort': 'low'},  # always reasons, at `low`, `high` or `max`: `low` is the least
    'kimi-k2.5': {'thinking': {'type': 'disabled'}},
    'kimi-k2.6': {'thinking': {'type': 'disabled'}},
}
"""What `thinking=False` sends to a Kimi model on Moonshot's API, which refuses `reasoning_effort='none'` (K2.7 Code
always reasons and has no effort to lower: it is sent nothing)."""


def _moonshotai_profile(model_name: str) -> ModelProfile | None:
    # Kimi K2.5 and K2.6 think unless told not to; the other thinking models cannot stop. K3, K2.6 and K2.7 take
    # `reasoning_effort='max'`.
    profile = cast(OpenAIModelProfile, _MOONSHOTAI_FAMILY(model_name))
    if not profile.get('supports_thinking', False):
        return profile
    lowered = model_name.lower()
    off = next((body for prefix, body in _KIMI_THINKING_OFF.items() if lowered.startswith(prefix)), None)
    can_stop = off is not None and 'thinking' in off
    reasoning = OpenAIModelProfile(
        thinking_always_enabled=not can_stop,
        openai_chat_supports_max_reasoning_effort=lowered.startswith(('kimi-k3', 'kimi-k2.6', 'kimi-k2.7')),
    )
    if off is not None:
        reasoning['openai_chat_thinking_false_body'] = off
    if can_stop:
        reasoning['thinking_enabled_by_default'] = True
    return merge_profile(profile, reasoning)


_VLLM_FAMILIES = prefixes(
    'llama', 'gemma', 'qwen', 'qwq', 'deepseek', 'mistral', 'command', 'c4ai-command', 'gpt-oss', 'glm'
)


def _vllm_profile(model_name: str) -> ModelProfile | None:
    """A model served by vLLM: its family found by the start of the name or of its last path segment (Hugging Face
    ids such as `Qwen/Qwen3-8B`), under what every vLLM model shares.

    vLLM enforces response formats by guided decoding (so the schema must also be in the instructions), accepts one
    leading system message, no file parts and no tool return schemas; the Qwen3 (not Coder, not Instruct), Gemma 4 and
    DeepSeek V4 families think (the `-Thinking` Qwen3 checkpoints always do), and Qwen3-Coder takes forced tool choice
    and strict schemas there.
    """
    lowered = model_name.lower()
    bare = lowered.rpartition('/')[2]
    family_name = bare.replace('qwen3-coder', 'qwen-3-coder', 1)
    family = next(
        (
            found(family_name)
            for prefix, found in _VLLM_FAMILIES.items()
            if lowered.startswith(prefix) or bare.startswith(prefix)
        ),
        None,
    )
    qwen3_thinks = (
        bare.startswith('qwen3') and not bare.startswith(('qwen3-coder', 'qwen3.8')) and '-instruct' not in bare
    )
    thinking: ModelProfile | None = None
    if qwen3_thinks or bare.startswith(('gemma-4', 'deepseek-v4-')):
        thinking = ModelProfile(
            supports_thinking=True, thinking_always_enabled=bare.startswith('qwen3') and '-thinking' in bare
        )
    coder: OpenAIModelProfile | None = None
    if bare.startswith('qwen3-coder'):
        coder = OpenAIModelProfile(supports_forced_tool_choice=True, openai_supports_strict_tool_definition=True)
    return merge_profile(
        _OPENAI_BASE,
        family,
        thinking,
        coder,
        OpenAIModelProfile(
            openai_chat_supports_document_input=False,
            openai_chat_supports_multiple_system_messages=False,
            supports_tool_return_schema=False,
            supports_json_schema_output=True,
            supports_json_object_output=True,
            native_output_requires_schema_in_instructions=True,
        ),
    )


_GITHUB_VENDORS = vendors(
    'xai', 'meta', 'cohere', 'deepseek', microsoft=openai_model_profile, **{'mistral-ai': mistral_model_profile}
)


def _github_profile(model_name: str) -> ModelProfile | None:
    """GitHub Models: a bare name is OpenAI's; a `vendor/model[:tag]` name is its vendor's family, under OpenAI's
    schema dialect."""
    if '/' not in model_name:
        return openai_model_profile(model_name)
    vendor, _, name = model_name.lower().partition('/')
    found = _GITHUB_VENDORS.get(vendor)
    family = found(name.partition(':')[0]) if found is not None else None
    return merge_profile(OpenAIModelProfile(json_schema_transformer=OpenAIJsonSchemaTransformer), family)


def _meta_profile(model_name: str) -> ModelProfile | None:
    """Meta's Model API: Muse's own profile; only `tool_choice='auto'` is accepted."""
    return merge_profile(
        _OPENAI_BASE, OpenAIModelProfile(supports_forced_tool_choice=False), muse_model_profile(model_name)
    )


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
                by_prefix=prefixes('llama', 'gemma', 'qwen', 'qwq', 'deepseek', 'mistral', 'command', 'gpt-oss'),
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
                by_vendor=vendors(
                    'google',
                    'openai',
                    'anthropic',
                    'mistralai',
                    'qwen',
                    'x-ai',
                    'cohere',
                    'amazon',
                    'deepseek',
                    'meta-llama',
                    'moonshotai',
                ),
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
                by_prefix=prefixes(
                    'llama', 'meta-llama/', 'gemma', 'qwen', 'deepseek', 'mistral', 'moonshotai/', 'compound-'
                )
                | {'openai/': lambda name: openai_model_profile(name.removeprefix('openai/'))},
                openai_chat_thinking_field='reasoning',
            ),
        ),
        ProviderSpec(
            name='deepseek',
            class_name='DeepSeekProvider',
            default_base_url='https://api.deepseek.com',
            api_key_envs=('DEEPSEEK_API_KEY',),
            profile=_profile(
                fallback=_deepseek_api_profile,
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
            profile=_profile(by_vendor=vendors('deepseek-ai', 'google', 'qwen', 'meta-llama', 'mistralai')),
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
            profile=_cerebras_profile,
        ),
        ProviderSpec(
            name='vercel',
            class_name='VercelProvider',
            default_base_url='https://ai-gateway.vercel.sh/v1',
            api_key_envs=('VERCEL_AI_GATEWAY_API_KEY', 'VERCEL_OIDC_TOKEN'),
            profile=_profile(
                by_vendor=vendors('anthropic', 'bedrock', 'cohere', 'deepseek', 'mistral', 'openai', 'vertex', 'xai')
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
            profile=_moonshotai_profile,
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
                by_vendor=vendors(
                    'anthropic',
                    'openai',
                    'google',
                    'mistralai',
                    'mistral',
                    'cohere',
                    'amazon',
                    'bedrock',
                    'meta-llama',
                    'meta',
                    'groq',
                    'deepseek',
                    'moonshotai',
                    'x-ai',
                    'qwen',
                ),
                fallback=openai_model_profile,
            ),
        ),
        ProviderSpec(
            name='alibaba',
            class_name='AlibabaProvider',
            default_base_url='https://dashscope-intl.aliyuncs.com/compatible-mode/v1',
            api_key_envs=('ALIBABA_API_KEY', 'DASHSCOPE_API_KEY'),
            profile=_alibaba_profile,
        ),
        ProviderSpec(
            name='crusoe',
            class_name='CrusoeProvider',
            default_base_url='https://api.inference.crusoecloud.com/v1',
            api_key_envs=('CRUSOE_API_KEY',),
            profile=_profile(
                by_vendor=vendors(
                    'meta-llama',
                    'deepseek-ai',
                    'qwen',
                    'google',
                    'moonshotai',
                    'zai',
                    'zai-org',
                    openai=harmony_model_profile,
                ),
                supports_json_schema_output=True,
                supports_json_object_output=True,
            ),
        ),
        ProviderSpec(
            name='nebius',
            class_name='NebiusProvider',
            default_base_url='https://api.studio.nebius.com/v1',
            api_key_envs=('NEBIUS_API_KEY',),
            profile=_profile(
                by_vendor=vendors(
                    'meta-llama',
                    'deepseek-ai',
                    'qwen',
                    'google',
                    'mistralai',
                    'moonshotai',
                    'zai-org',
                    openai=harmony_model_profile,
                )
            ),
        ),
        ProviderSpec(
            name='ovhcloud',
            class_name='OVHcloudProvider',
            default_base_url='https://oai.endpoints.kepler.ai.cloud.ovh.net/v1',
            api_key_envs=('OVHCLOUD_API_KEY',),
            profile=_profile(by_prefix=prefixes('llama', 'meta-', 'deepseek', 'mistral', 'gpt', 'qwen')),
        ),
        ProviderSpec(
            name='sambanova',
            class_name='SambaNovaProvider',
            default_base_url='https://api.sambanova.ai/v1',
            base_url_env='SAMBANOVA_BASE_URL',
            api_key_envs=('SAMBANOVA_API_KEY',),
            profile=_profile(by_prefix=prefixes('deepseek-', 'meta-llama-', 'llama-', 'qwen', 'mistral', 'gpt-oss')),
        ),
        ProviderSpec(
            name='zai',
            class_name='ZaiProvider',
            default_base_url='https://api.z.ai/api/paas/v4',
            api_key_envs=('ZAI_API_KEY',),
            profile=_profile(
                fallback=zai_model_profile,
                supports_json_object_output=True,
                openai_chat_thinking_field='reasoning_content',
                openai_chat_send_back_thinking_parts='field',
            ),
        ),
        ProviderSpec(
            name='vllm',
            class_name='VLLMProvider',
            default_base_url=None,
            base_url_env='VLLM_BASE_URL',
            api_key_envs=('VLLM_API_KEY',),
            api_key_required=False,
            profile=_vllm_profile,
        ),
        ProviderSpec(
            name='github',
            class_name='GitHubProvider',
            default_base_url='https://models.github.ai/inference',
            api_key_envs=('GITHUB_API_KEY',),
            profile=_github_profile,
        ),
        ProviderSpec(
            name='meta',
            class_name='MetaProvider',
            default_base_url='https://api.meta.ai/v1',
            api_key_envs=('META_API_KEY',),
            profile=_meta_profile,
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


class AlibabaProvider(OpenAIProvider):
    """Alibaba Cloud's Model Studio (DashScope), compatible mode: Qwen (`ALIBABA_API_KEY` or `DASHSCOPE_API_KEY`)."""

    _spec = _SPECS['alibaba']


class CrusoeProvider(OpenAIProvider):
    """Crusoe's managed inference (`CRUSOE_API_KEY`); every model writes JSON to a schema there."""

    _spec = _SPECS['crusoe']


class NebiusProvider(OpenAIProvider):
    """Nebius AI Studio (`NEBIUS_API_KEY`)."""

    _spec = _SPECS['nebius']


class OVHcloudProvider(OpenAIProvider):
    """OVHcloud AI Endpoints (`OVHCLOUD_API_KEY`)."""

    _spec = _SPECS['ovhcloud']


class SambaNovaProvider(OpenAIProvider):
    """SambaNova Cloud (`SAMBANOVA_API_KEY`; `SAMBANOVA_BASE_URL` names another endpoint)."""

    _spec = _SPECS['sambanova']


class ZaiProvider(OpenAIProvider):
    """Z.AI's GLM models (`ZAI_API_KEY`); pass `base_url='https://api.z.ai/api/coding/paas/v4'` for the Coding Plan."""

    _spec = _SPECS['zai']


class VLLMProvider(OpenAIProvider):
    """A vLLM server, given by `base_url` or `VLLM_BASE_URL`; the key (`VLLM_API_KEY`) is optional."""

    _spec = _SPECS['vllm']


class MetaProvider(OpenAIProvider):
    """Meta's Model API, Muse models (`META_API_KEY`); `'meta:'` model names use its Responses API."""

    _spec = _SPECS['meta']


class GitHubProvider(OpenAIProvider):
    """GitHub Models (`GITHUB_API_KEY`), retired by GitHub: `edgewise.agent.providers.github` has the public,
    deprecated class."""

    _spec = _SPECS['github']


COMPATIBLE_PROVIDERS: dict[str, type[OpenAIProvider]] = {
    cls._spec.name: cls
    for cls in (
        OllamaProvider, OpenRouterProvider, GroqProvider, DeepSeekProvider, TogetherProvider, FireworksProvider,
        CerebrasProvider, VercelProvider, GrokProvider, XaiProvider, MoonshotAIProvider, HerokuProvider,
        LiteLLMProvider, AlibabaProvider, CrusoeProvider, NebiusProvider, OVHcloudProvider, SambaNovaProvider,
        ZaiProvider, VLLMProvider, MetaProvider,
    )
}  # fmt: skip
"""The OpenAI-compatible providers, by name."""
