"""What the HTTP image models share in reading settings into a request and answers into images (the request itself
is `models._task_model.post_json`): the image count check, geometry preferences, the warning about settings a
provider did not use, and strict base64 decoding."""

from __future__ import annotations as _annotations

import base64
import binascii
import warnings
from collections.abc import Sequence

from ..exceptions import UnexpectedModelBehavior, UserError

__all__ = ('check_count', 'decode_base64', 'prefer_own', 'warn_settings')


def decode_base64(encoded: str, provider: str) -> bytes:
    """The bytes of a base64 payload, checked strictly (a corrupt payload is an error, not a truncated image).

    Raises:
        UnexpectedModelBehavior: the payload is not valid base64.
    """
    try:
        return base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError) as e:
        raise UnexpectedModelBehavior(
            f'{provider} image generation response did not contain valid base64 image data'
        ) from e


def warn_settings(provider: str, *, ignored: Sequence[str] = (), conflicts: Sequence[str] = ()) -> None:
    """One warning naming the settings a provider ignored, and the shared settings its own ones overrode."""
    said: list[str] = []
    if ignored:
        said.append('ignored unsupported settings: ' + ', '.join(f'`{name}`' for name in dict.fromkeys(ignored)))
    if conflicts:
        names = ', '.join(f'`{name}`' for name in dict.fromkeys(conflicts))
        said.append(f'used provider-specific settings instead of: {names}')
    if said:
        warnings.warn(f'{provider} image generation {"; ".join(said)}', UserWarning, stacklevel=3)


def prefer_own(own: str | None, mapped: str | None, setting: str, conflicts: list[str]) -> str | None:
    """A provider's own geometry setting over the value a shared setting maps to; a disagreement is recorded in
    `conflicts` (under the shared setting's name)."""
    if own is None:
        return mapped
    if mapped is not None and mapped != own:
        conflicts.append(setting)
    return own


def check_count(provider: str, n: object) -> None:
    """Refuse an image count that is no positive integer (the provider judges the upper bound).

    Raises:
        UserError: saying so.
    """
    if n is not None and (not isinstance(n, int) or isinstance(n, bool) or n <= 0):
        raise UserError(f'{provider} image generation count must be a positive integer')
