"""The two AWS wire pieces under Bedrock: SigV4 signing (against AWS's documented examples) and the event-stream
framing (against frames encoded here)."""

from __future__ import annotations

import struct
import uuid
import zlib
from datetime import datetime, timezone

import pytest

from edgewise.agent.models._eventstream import EventStreamDecoder, EventStreamError, decode_headers
from edgewise.agent.providers._sigv4 import AWSCredentials, sign

from ._aws import ACCESS_KEY, SECRET_KEY, event, frame, header_bytes, verify_sigv4

WHEN = datetime(2015, 8, 30, 12, 36, tzinfo=timezone.utc)
EXAMPLE = AWSCredentials(ACCESS_KEY, SECRET_KEY)


def test_signing_the_documented_iam_list_users_example_gives_its_published_texts_and_signature() -> None:
    signed = sign(
        method='GET',
        path='/',
        query='Action=ListUsers&Version=2010-05-08',
        headers={
            'Host': 'iam.amazonaws.com',
            'Content-Type': 'application/x-www-form-urlencoded; charset=utf-8',
            'X-Amz-Date': '20150830T123600Z',
        },
        body=b'',
        credentials=EXAMPLE,
        region='us-east-1',
        service='iam',
        when=WHEN,
    )
    assert signed.canonical_request == (
        'GET\n/\nAction=ListUsers&Version=2010-05-08\n'
        'content-type:application/x-www-form-urlencoded; charset=utf-8\nhost:iam.amazonaws.com\n'
        'x-amz-date:20150830T123600Z\n\ncontent-type;host;x-amz-date\n'
        'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'
    )
    assert signed.string_to_sign == (
        'AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/iam/aws4_request\n'
        'f536975d06c0309214f805bb90ccff089219ecd68b2577efef23edd43b7e1a59'
    )
    assert signed.signature == '5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7'
    assert signed.authorization == (
        'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, '
        'SignedHeaders=content-type;host;x-amz-date, '
        'Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7'
    )


@pytest.mark.parametrize(
    ('method', 'signature'),
    [
        # The `get-vanilla` and `post-vanilla` cases of AWS's SigV4 test suite.
        ('GET', '5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31'),
        ('POST', '5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b'),
    ],
)
def test_signing_the_test_suite_vanilla_requests_gives_their_signatures(method: str, signature: str) -> None:
    headers = {'Host': 'example.amazonaws.com', 'X-Amz-Date': '20150830T123600Z'}
    signed = sign(
        method=method, path='/', query='', headers=headers, body=b'', credentials=EXAMPLE,
        region='us-east-1', service='service', when=WHEN,
    )  # fmt: skip
    assert signed.signature == signature


def test_a_signed_bedrock_path_encodes_the_model_ids_colon_once_more_and_the_verifier_agrees() -> None:
    path = '/model/anthropic.claude-v2%3A1/converse'
    body = b'{"messages":[]}'
    headers = {'host': 'bedrock-runtime.eu-west-1.amazonaws.com', 'x-amz-date': '20150830T123600Z', 'a': ' x   y '}
    signed = sign(
        method='POST', path=path, query='b=2&a=1', headers=headers, body=body, credentials=EXAMPLE,
        region='eu-west-1', service='bedrock', when=WHEN,
    )  # fmt: skip
    assert signed.canonical_request.split('\n')[1:4] == [
        '/model/anthropic.claude-v2%253A1/converse',
        'a=1&b=2',
        'a:x y',
    ]
    received = {**headers, 'authorization': signed.authorization}
    assert verify_sigv4('POST', f'{path}?b=2&a=1', received, body, {ACCESS_KEY: SECRET_KEY}) == (
        True,
        'eu-west-1/bedrock',
    )
    assert verify_sigv4('POST', f'{path}?b=2&a=1', received, body + b' ', {ACCESS_KEY: SECRET_KEY})[0] is False


def test_credentials_keep_their_secrets_out_of_the_repr() -> None:
    credentials = AWSCredentials(ACCESS_KEY, SECRET_KEY, 'the-session-token')
    assert 'AKIDEXAMPLE' in repr(credentials)
    assert SECRET_KEY not in repr(credentials)
    assert 'the-session-token' not in repr(credentials)


def test_messages_split_at_every_byte_are_decoded_whole_and_in_order() -> None:
    data = event('messageStart', {'role': 'assistant'}) + event('contentBlockDelta', {'delta': {'text': 'hé'}})
    decoder = EventStreamDecoder()
    messages = [m for i in range(len(data)) for m in decoder.feed(data[i : i + 1])]
    assert [(m.headers[':event-type'], m.payload) for m in messages] == [
        ('messageStart', b'{"role": "assistant"}'),
        ('contentBlockDelta', '{"delta": {"text": "hé"}}'.encode()),
    ]
    assert decoder.pending == 0


def test_every_header_value_type_is_decoded() -> None:
    when = datetime(2024, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
    ident = uuid.UUID('12345678-1234-5678-1234-567812345678')
    raw = (
        header_bytes('t', True)
        + header_bytes('f', False)
        + b'\x01b\x02\xff'
        + b'\x01s\x03' + struct.pack('>h', -2)
        + header_bytes('i', 70000)
        + b'\x01l\x05' + struct.pack('>q', 2**40)
        + header_bytes('bytes', b'\x00\x01')
        + header_bytes('str', 'text')
        + b'\x02ts\x08' + struct.pack('>q', int(when.timestamp() * 1000))
        + b'\x04uuid\x09' + ident.bytes
    )  # fmt: skip
    assert decode_headers(raw) == {
        't': True, 'f': False, 'b': -1, 's': -2, 'i': 70000, 'l': 2**40, 'bytes': b'\x00\x01', 'str': 'text',
        'ts': when, 'uuid': ident,
    }  # fmt: skip


@pytest.mark.parametrize(
    ('raw', 'error'),
    [
        (b'\x01x\x0a', 'Unknown header value type 10'),
        (b'\x05ab', 'header name runs past'),
        (b'\x01x\x07\x00\x09ab', 'header value runs past'),
        (b'\x01x\x04\x00', 'header value runs past'),
        (b'\x01x\x09' + b'\x00' * 3, 'header value runs past'),
    ],
)
def test_malformed_headers_are_refused(raw: bytes, error: str) -> None:
    with pytest.raises(EventStreamError, match=error):
        decode_headers(raw)


def test_a_bad_prelude_checksum_message_checksum_or_length_is_refused() -> None:
    good = event('messageStop', {'stopReason': 'end_turn'})
    bad_prelude = good[:8] + b'\x00\x00\x00\x00' + good[12:]
    with pytest.raises(EventStreamError, match='prelude does not match'):
        EventStreamDecoder().feed(bad_prelude)
    bad_message = good[:-1] + bytes([good[-1] ^ 1])
    with pytest.raises(EventStreamError, match='checksum of a message does not match'):
        EventStreamDecoder().feed(bad_message)
    prelude = struct.pack('>II', 8, 0)
    too_short = prelude + struct.pack('>I', zlib.crc32(prelude))
    with pytest.raises(EventStreamError, match='length of 8 bytes is out of range'):
        EventStreamDecoder().feed(too_short)


def test_an_empty_payload_and_no_headers_make_a_message() -> None:
    assert [(m.headers, m.payload) for m in EventStreamDecoder().feed(frame({}, b''))] == [({}, b'')]
