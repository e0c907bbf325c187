"""AWS Signature Version 4: the `Authorization` header of a request to an AWS API, from the stdlib's hmac and hashlib.

The steps are AWS's (docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html): a canonical request
(method, path, sorted query, signed headers, payload hash), a string to sign naming the date, region and service, a
key derived from the secret key by four HMACs, and the signature over the string to sign. The path is encoded once
more than it travels (every service but S3 signs it so), which is why a Bedrock model id's `:` (sent as `%3A`) is
signed as `%253A`.

Nothing here keeps a secret: `AWSCredentials` hides the secret key and session token from its repr.
"""

from __future__ import annotations as _annotations

import hashlib
import hmac
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from urllib.parse import quote, unquote

__all__ = ('ALGORITHM', 'AWSCredentials', 'SignedParts', 'sign', 'payload_hash')

ALGORITHM = 'AWS4-HMAC-SHA256'


@dataclass(frozen=True)
class AWSCredentials:
    """An access key pair, and the session token of temporary credentials; the secrets stay out of the repr."""

    access_key_id: str
    secret_access_key: str = field(repr=False)
    session_token: str | None = field(default=None, repr=False)


@dataclass(frozen=True)
class SignedParts:
    """What signing a request produced: the intermediate texts (for tests and debugging) and the header."""

    canonical_request: str
    string_to_sign: str
    signature: str
    authorization: str


def payload_hash(body: bytes) -> str:
    """The hex SHA-256 of the request body, as the canonical request holds it."""
    return hashlib.sha256(body).hexdigest()


def _encode(value: str) -> str:
    return quote(value, safe='-_.~')


def _canonical_query(query: str) -> str:
    pairs: list[tuple[str, str]] = []
    for item in query.split('&'):
        if not item:
            continue
        key, _, value = item.partition('=')
        pairs.append((_encode(unquote(key)), _encode(unquote(value))))
    return '&'.join(f'{key}={value}' for key, value in sorted(pairs))


def _canonical_value(value: str) -> str:
    return ' '.join(value.split())


def _signing_key(secret_access_key: str, day: str, region: str, service: str) -> bytes:
    key = f'AWS4{secret_access_key}'.encode()
    for part in (day, region, service, 'aws4_request'):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return key


def sign(
    *,
    method: str,
    path: str,
    query: str,
    headers: Mapping[str, str],
    body: bytes,
    credentials: AWSCredentials,
    region: str,
    service: str,
    when: datetime,
) -> SignedParts:
    """Sign a request with the given headers (all of them signed: `host` and `x-amz-date` must be among them).

    Args:
        method: The HTTP method.
        path: The path as sent (percent-encoded), without the query.
        query: The query string as sent, without the `?`.
        headers: The headers to sign, by name (case does not matter).
        body: The body as sent.
        credentials: The key pair signing it.
        region: The AWS region (`us-east-1`).
        service: The service's signing name (`bedrock`).
        when: The request's time (UTC), the same as its `x-amz-date` header.
    """
    stamp = when.strftime('%Y%m%dT%H%M%SZ')
    day = stamp[:8]
    canonical_headers = sorted((name.lower(), _canonical_value(value)) for name, value in headers.items())
    signed_headers = ';'.join(name for name, _ in canonical_headers)
    canonical_request = '\n'.join(
        [
            method.upper(),
            quote(path or '/', safe='/~'),
            _canonical_query(query),
            ''.join(f'{name}:{value}\n' for name, value in canonical_headers),
            signed_headers,
            payload_hash(body),
        ]
    )
    scope = f'{day}/{region}/{service}/aws4_request'
    string_to_sign = '\n'.join([ALGORITHM, stamp, scope, hashlib.sha256(canonical_request.encode()).hexdigest()])
    key = _signing_key(credentials.secret_access_key, day, region, service)
    signature = hmac.new(key, string_to_sign.encode(), hashlib.sha256).hexdigest()
    authorization = (
        f'{ALGORITHM} Credential={credentials.access_key_id}/{scope}, '
        f'SignedHeaders={signed_headers}, Signature={signature}'
    )
    return SignedParts(canonical_request, string_to_sign, signature, authorization)
