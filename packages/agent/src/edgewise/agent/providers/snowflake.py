"""`SnowflakeProvider`: Snowflake Cortex's OpenAI-compatible Chat Completions API, inside a Snowflake account.

Cortex serves Claude, OpenAI's GPT models (named `openai-*`), Llama, Mistral, DeepSeek and Snowflake's own models
at `https://<account>.snowflakecomputing.com/api/v2/cortex/v1`; the token (a programmatic access token, an OAuth
token or a key-pair JWT) is sent as a bearer token.
"""

from __future__ import annotations as _annotations

import os
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..exceptions import UserError
from ..profiles import ModelProfile, merge_profile
from ..profiles.anthropic import anthropic_model_profile
from ..profiles.deepseek import deepseek_model_profile
from ..profiles.meta import meta_model_profile
from ..profiles.mistral import mistral_model_profile
from ..profiles.openai import OpenAIJsonSchemaTransformer, OpenAIModelProfile, openai_model_profile
from .openai import OpenAIProvider, ProviderSpec

if TYPE_CHECKING:
    import httpx

__all__ = ('SnowflakeModelProfile', 'SnowflakeProvider', 'snowflake_model_profile')

_ACCOUNT = re.compile(r'[A-Za-z0-9._-]+')

_FAMILIES: dict[str, Callable[[str], ModelProfile | None]] = {
    'claude': anthropic_model_profile,
    'openai-': lambda name: openai_model_profile(name.removeprefix('openai-')),
    'snowflake-llama': meta_model_profile,  # Llama as fine-tuned by Snowflake
    'llama': meta_model_profile,
    'mistral': mistral_model_profile,
    'mixtral': mistral_model_profile,
    'deepseek': deepseek_model_profile,
}


class SnowflakeModelProfile(OpenAIModelProfile, total=False):
    """The profile of a model on Cortex: OpenAI's Chat keys and Snowflake's own (`snowflake_`-prefixed)."""

    snowflake_supports_reasoning: bool
    """Whether the model takes Cortex's `reasoning` object (Claude models)."""

    snowflake_reasoning_requires_temperature_1: bool
    """Whether the model reasons only at `temperature` 1, which is then sent unless a temperature is set (Cortex's
    own default is another)."""


def snowflake_model_profile(model_name: str) -> ModelProfile | None:
    """The profile of a model on Cortex: its family's (by name prefix) under what Cortex takes from that family.

    Tool definitions go without `strict`. Claude models take only `json_schema` output and think through the
    `reasoning` object; models other than Claude and OpenAI's take no tools and no response format (Cortex
    refuses the one and ignores the other), so their structured output is prompted.
    """
    lowered = model_name.lower()
    family = next((found(lowered) for prefix, found in _FAMILIES.items() if lowered.startswith(prefix)), None)
    cortex = SnowflakeModelProfile(openai_supports_strict_tool_definition=False)
    if lowered.startswith('claude'):
        cortex.update(
            SnowflakeModelProfile(
                supports_json_schema_output=True,
                supports_json_object_output=False,
                supports_thinking=True,
                snowflake_supports_reasoning=True,
                snowflake_reasoning_requires_temperature_1=True,
            )
        )
    elif not lowered.startswith('openai-'):
        cortex.update(
            SnowflakeModelProfile(
                supports_tools=False,
                supports_json_schema_output=False,
                supports_json_object_output=False,
                default_structured_output_mode='prompted',
            )
        )
    return merge_profile(OpenAIModelProfile(json_schema_transformer=OpenAIJsonSchemaTransformer), family, cortex)


_SPEC = ProviderSpec(
    name='snowflake',
    class_name='SnowflakeProvider',
    default_base_url=None,
    api_key_envs=('SNOWFLAKE_TOKEN',),
    profile=snowflake_model_profile,
)


class SnowflakeProvider(OpenAIProvider):
    """Snowflake Cortex (`SNOWFLAKE_ACCOUNT` and `SNOWFLAKE_TOKEN`)."""

    _spec = _SPEC

    def __init__(
        self,
        *,
        account: str | None = None,
        token: str | None = None,
        base_url: str | None = None,
        http_client: httpx.AsyncClient | None = None,
        max_retries: int = 2,
    ) -> None:
        """Configure the provider.

        Args:
            account: The Snowflake account identifier (`myorg-myaccount`, or its `...snowflakecomputing.com` host);
                defaults to `SNOWFLAKE_ACCOUNT`. Not needed with `base_url`.
            token: The token sent as `Authorization: Bearer <token>`; defaults to `SNOWFLAKE_TOKEN`.
            base_url: The Cortex REST API's base URL (private connectivity); by default the account's.
            http_client: An `httpx.AsyncClient` to send requests with, used as given (and not closed here).
            max_retries: How many times a failed request (429, 5xx, timeout, dropped connection) is retried.

        Raises:
            UserError: the account (without `base_url`) or the token is not set, or the account is not an account
                identifier.
        """
        if base_url is None:
            account = account or os.getenv('SNOWFLAKE_ACCOUNT')
            if not account:
                raise UserError(
                    'Set the `SNOWFLAKE_ACCOUNT` environment variable or pass it via `SnowflakeProvider(account=...)` '
                    'to use the Snowflake provider.'
                )
            account = account.removeprefix('https://').removeprefix('http://').removesuffix('/')
            account = account.removesuffix('.snowflakecomputing.com')
            # Only an identifier: a value such as `evil.example/x` must not send the token to another host.
            if not _ACCOUNT.fullmatch(account):
                raise UserError(
                    f'Invalid Snowflake account identifier {account!r}. Pass a bare account identifier like '
                    '`myorg-myaccount`, or use the `base_url` parameter to target a custom endpoint.'
                )
            base_url = f'https://{account}.snowflakecomputing.com/api/v2/cortex/v1'
        token = token or os.getenv('SNOWFLAKE_TOKEN')
        if not token:
            raise UserError(
                'Set the `SNOWFLAKE_TOKEN` environment variable or pass it via `SnowflakeProvider(token=...)` '
                'to use the Snowflake provider.'
            )
        super().__init__(base_url=base_url, api_key=token, http_client=http_client, max_retries=max_retries)
