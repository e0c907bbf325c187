"""Chat-template special tokens in content, on routes that may read them as control tokens (pydantic-ai 2.68).

Many hosts of open-weight models tokenize message content with special tokens allowed: a literal `<|im_start|>`
in a tool result then opens a real turn, in whatever role it names. On a profile with
`may_tokenize_special_tokens_in_content`, the copy of the history a provider model sends has a zero-width joiner
after the first character of each such token (`break_special_tokens_in_messages`), so no tokenizer matches it. The
same text always gets the same joiners, so a replayed history sends the same bytes.

A model copies the joiner (or another invisible character for it) into what it writes, so it is removed again from
the tokens in the text and tool call arguments of a response (`restore_special_tokens_in_response`) before a tool,
a validator or the history sees them.
"""

from __future__ import annotations as _annotations

import dataclasses
import functools
import re
from collections.abc import Callable
from typing import Any, Final, cast

from ..messages import (
    ModelMessage,
    ModelResponse,
    ModelResponsePart,
    RetryPromptPart,
    TextContent,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

__all__ = (
    'ZERO_WIDTH_JOINER',
    'break_special_tokens',
    'break_special_tokens_in_messages',
    'restore_special_tokens',
    'restore_special_tokens_in_response',
)

ZERO_WIDTH_JOINER: Final = '\u200d'

# Each token as its first character and what follows it. The named shapes cover ChatML and its relatives
# (`<|im_start|>`, `<|eot_id|>`), DeepSeek's full-width bars (`<\uff5cUser\uff5c>`) and the half-open `<|turn>`
# and `<turn|>`.
_NAME: Final = r'[^\s<>|"\u200b-\u200d\u2060\ufeff]'
_BAR: Final = '\uff5c'  # the full-width vertical line of DeepSeek's tokens
_WIDE_NAME: Final = rf'[^\s<>{_BAR}"\u200b-\u200d\u2060\ufeff]'
_TAILS: Final[tuple[tuple[str, str], ...]] = (
    (
        '<',
        '|'.join(
            (
                rf'\|{_NAME}{{1,64}}\|>',
                rf'{_BAR}{_WIDE_NAME}{{1,64}}{_BAR}>',
                r'\|[a-z_]{1,32}>',
                r'[a-z_]{1,32}\|>',
                r'start_of_turn>',
                r'end_of_turn>',
            )
        ),
    ),
    (
        r'\[',
        '|'.join(
            re.escape(tail)
            for tail in (
                '|system|]',
                '|tool|]',
                '|assistant|]',
                '|user|]',
                '|endofturn|]',
                'INST]',
                '/INST]',
                'SYSTEM_PROMPT]',
                '/SYSTEM_PROMPT]',
                'AVAILABLE_TOOLS]',
                '/AVAILABLE_TOOLS]',
                'TOOL_RESULTS]',
                '/TOOL_RESULTS]',
                'TOOL_CALLS]',
                'e~[',
            )
        ),
    ),
    (r'\]', '|'.join(re.escape(tail) for tail in ('~b]', '~!b['))),
)
_INVISIBLE: Final = '[\u200b\u200c\u200d\u2060\ufeff]'
_ESCAPED_INVISIBLE: Final = r'\\u(?:200[bcdBCD]|2060|[fF][eE][fF][fF])'


# The patterns are compiled on first use: most programs that import the agent never send a token-breaking profile.
@functools.cache
def _token_start() -> re.Pattern[str]:
    # Only the first character is consumed, so overlapping tokens (`]~b]~b]`) each get a joiner.
    return re.compile('|'.join(f'{first}(?={tails})' for first, tails in _TAILS))


@functools.cache
def _joiner_in_token() -> re.Pattern[str]:
    return re.compile('|'.join(f'(?<={first}){_INVISIBLE}(?={tails})' for first, tails in _TAILS))


@functools.cache
def _escaped_joiner_in_token() -> re.Pattern[str]:
    return re.compile('|'.join(f'(?<={first}){_ESCAPED_INVISIBLE}(?={tails})' for first, tails in _TAILS))


def break_special_tokens(text: str) -> str:
    """`text` with a zero-width joiner after the first character of each chat-template special token in it."""
    return _token_start().sub(lambda match: match[0] + ZERO_WIDTH_JOINER, text)


def restore_special_tokens(text: str) -> str:
    """The inverse of `break_special_tokens` for a model's text: any zero-width character inside a token (what a
    model writes for the joiner) is removed."""
    return _joiner_in_token().sub('', text)


def _break_value(value: Any) -> Any:
    """`value` with the tokens in its strings broken; the same object when it has none."""
    if isinstance(value, str):
        broken = break_special_tokens(value)
        return value if broken == value else broken
    if isinstance(value, TextContent):
        content = break_special_tokens(value.content)
        return value if content == value.content else dataclasses.replace(value, content=content)
    if isinstance(value, list | tuple):
        items = [_break_value(item) for item in cast('list[Any]', value)]
        return value if all(new is old for new, old in zip(items, value, strict=True)) else items
    if isinstance(value, dict):
        mapping: dict[Any, Any] = value
        entries = {_break_value(key): _break_value(item) for key, item in mapping.items()}
        unchanged = len(entries) == len(mapping) and all(
            key in mapping and entries[key] is mapping[key] for key in entries
        )
        return value if unchanged else entries
    return value


def _break_args(args: str | dict[str, Any] | None) -> str | dict[str, Any] | None:
    if isinstance(args, str) and '\\u' in args:
        # The JSON text may spell a token with escapes, which the mapping would decode into a literal one.
        import json  # (only arguments with an escape need it: not loaded with the agent)

        try:
            decoded = json.loads(args)
        except ValueError:
            return break_special_tokens(args)
        broken = _break_value(decoded)
        return args if broken is decoded else cast('dict[str, Any]', broken)
    return cast('str | dict[str, Any] | None', _break_value(args))


def _break_part(part: Any, kept_as_signed: Callable[[Any], bool]) -> Any:
    if isinstance(part, UserPromptPart | ToolReturnPart | RetryPromptPart):
        content = _break_value(part.content)
        return part if content is part.content else dataclasses.replace(part, content=content)
    if isinstance(part, ToolCallPart):
        args = _break_args(part.args)
        return part if args is part.args else dataclasses.replace(part, args=args)
    if isinstance(part, TextPart) or (isinstance(part, ThinkingPart) and not kept_as_signed(part)):
        content = break_special_tokens(part.content)
        return part if content == part.content else dataclasses.replace(part, content=content)
    return part


def break_special_tokens_in_messages(
    messages: list[ModelMessage], accepts: Callable[[ModelResponse, ModelResponsePart], bool] | None = None
) -> list[ModelMessage]:
    """`messages` with the tokens broken in user prompts, tool returns and retry prompts, tool call arguments,
    and model text and unsigned reasoning; system prompts (the application's own channel) and signed reasoning
    stay as written (the signature covers the text). With `accepts` (`Model.accepts_stateless_artifacts`), only
    the signed reasoning it accepts stays so: the rest goes as text, broken like any. `messages` itself when nothing
    changes."""
    result: list[ModelMessage] = []
    changed = False
    for message in messages:

        def kept_as_signed(part: ThinkingPart, message: ModelMessage = message) -> bool:
            if part.signature is None:
                return False
            return accepts is None or (isinstance(message, ModelResponse) and accepts(message, part))

        parts = [_break_part(part, kept_as_signed) for part in message.parts]
        if all(new is old for new, old in zip(parts, message.parts, strict=True)):
            result.append(message)
        else:
            changed = True
            result.append(dataclasses.replace(message, parts=parts))  # type: ignore[arg-type]
    return result if changed else messages


def _restore_args(args: str | dict[str, Any] | None) -> str | dict[str, Any] | None:
    if isinstance(args, str):
        return _escaped_joiner_in_token().sub('', restore_special_tokens(args))
    if args is None:
        return None
    return cast('dict[str, Any]', _restore_value(args))


def _restore_value(value: Any) -> Any:
    if isinstance(value, str):
        return restore_special_tokens(value)
    if isinstance(value, dict):
        return {_restore_value(key): _restore_value(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_restore_value(item) for item in value]
    return value


def _restore_part(part: ModelResponsePart) -> ModelResponsePart:
    if isinstance(part, TextPart):
        content = restore_special_tokens(part.content)
        return part if content == part.content else dataclasses.replace(part, content=content)
    if isinstance(part, ToolCallPart):
        args = _restore_args(part.args)
        return part if args == part.args else dataclasses.replace(part, args=args)
    return part


def restore_special_tokens_in_response(response: ModelResponse) -> ModelResponse:
    """`response` with the joiner removed from the tokens in its text and tool call arguments (reasoning, which can
    be signed, and native tool calls, which the provider ran, stay as written); `response` itself when none has one."""
    parts = [_restore_part(part) for part in response.parts]
    if all(new is old for new, old in zip(parts, response.parts, strict=True)):
        return response
    return dataclasses.replace(response, parts=parts)
