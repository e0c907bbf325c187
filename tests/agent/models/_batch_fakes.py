"""Fake batch APIs of OpenAI, Anthropic and Gemini, served on 127.0.0.1 by a real HTTP server.

Each fake keeps its batches in memory and moves them on by request count, never by time: a batch stays in progress
for `checks` status checks, then ends as `ending` says (or never, with `hold`, until it is cancelled). Each request is
answered `answer to <prompt>`, its prompt the first `prompt-...` word of its body; a prompt in `failing` gets an error
instead, and one in `unrun` is left unrun by a batch that ends expired or cancelled.
"""

from __future__ import annotations

import email.policy
import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email.parser import BytesParser
from http.server import BaseHTTPRequestHandler
from typing import Any, TypeVar

from .conftest import serve_http

_PROMPT = re.compile(r'prompt-[a-z0-9]+')


def prompt_of(body: Any) -> str:
    found = _PROMPT.search(json.dumps(body))
    assert found is not None, body
    return found.group()


@dataclass
class FakeBatchAPI:
    """What every fake shares: the requests it received, its batches, and how they end."""

    url: str = ''
    checks: int = 1
    """How many status checks a batch stays in progress for."""
    ending: str = ''
    """How a batch ends (the provider's word); the fake's default when empty."""
    hold: bool = False
    """Batches never end on their own (only a cancellation ends them)."""
    failing: set[str] = field(default_factory=set)
    unrun: set[str] = field(default_factory=set)
    """Prompts left unrun by the next batch that ends expired or cancelled (then run when submitted again)."""
    received: list[tuple[str, str]] = field(default_factory=list)
    """Method and path of every request."""
    headers: list[dict[str, str]] = field(default_factory=list)
    bodies: list[bytes] = field(default_factory=list)
    batches: dict[str, dict[str, Any]] = field(default_factory=dict)
    flaky_checks: int = 0
    """How many status checks answer 503 before the others are served."""
    status_checked: threading.Event = field(default_factory=threading.Event)
    """Set at the first status check (a test cancels a waiting run after it)."""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def handle(self, method: str, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, Any]:
        raise NotImplementedError

    def calls(self, method: str, prefix: str = '') -> list[str]:
        return [path for m, path in self.received if m == method and path.startswith(prefix)]

    def _tick(self, batch: dict[str, Any]) -> bool:
        """Count a status check; whether the batch ends now."""
        self.status_checked.set()
        batch['checked'] = batch.get('checked', 0) + 1
        return not self.hold and batch['checked'] >= self.checks


def _handler(api: FakeBatchAPI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = 'HTTP/1.1'

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _serve(self) -> None:
            length = int(self.headers.get('content-length') or 0)
            body = self.rfile.read(length) if length else b''
            with api.lock:
                api.received.append((self.command, self.path))
                api.headers.append({k.lower(): v for k, v in self.headers.items()})
                api.bodies.append(body)
                status, answer = api.handle(self.command, self.path, body, dict(self.headers))
            data = answer if isinstance(answer, bytes) else json.dumps(answer).encode()
            self.send_response(status)
            self.send_header('content-type', 'application/json')
            self.send_header('content-length', str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_DELETE = _serve

    return Handler


FakeT = TypeVar('FakeT', bound=FakeBatchAPI)


@contextmanager
def serving(api: FakeT, prefix: str = '') -> Iterator[FakeT]:
    with serve_http(_handler(api)) as port:
        api.url = f'http://127.0.0.1:{port}{prefix}'
        yield api


def multipart_file(content_type: str, raw: bytes) -> tuple[dict[str, str], bytes]:
    """The plain fields and the file's content of a multipart body."""
    message = BytesParser(policy=email.policy.HTTP).parsebytes(f'content-type: {content_type}\r\n\r\n'.encode() + raw)
    fields: dict[str, str] = {}
    content = b''
    for part in message.iter_parts():
        if part.get_filename() is None:
            fields[str(part.get_param('name', header='content-disposition'))] = part.get_content()
        else:
            payload = part.get_payload(decode=True)
            assert isinstance(payload, bytes)
            content = payload
    return fields, content


def responses_body(prompt: str) -> dict[str, Any]:
    return {
        'id': f'resp_{prompt}', 'object': 'response', 'created_at': 1, 'model': 'gpt-4o', 'status': 'completed',
        'output': [
            {
                'type': 'message', 'id': f'msg_{prompt}', 'role': 'assistant', 'status': 'completed',
                'content': [{'type': 'output_text', 'text': f'answer to {prompt}', 'annotations': []}],
            }
        ],
        'usage': {'input_tokens': 3, 'output_tokens': 4, 'total_tokens': 7},
    }  # fmt: skip


@dataclass
class FakeOpenAI(FakeBatchAPI):
    """`/files` and `/batches` of the OpenAI Batch API."""

    files: dict[str, bytes] = field(default_factory=dict)
    purposes: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    refuse_create: bool = False

    def handle(self, method: str, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, Any]:
        parts = path.strip('/').split('/')[1:]  # without the `v1`
        if method == 'POST' and parts == ['files']:
            content_type = next(v for k, v in headers.items() if k.lower() == 'content-type')
            fields, content = multipart_file(content_type, body)
            self.purposes.append(fields['purpose'])
            file_id = f'file-{len(self.files)}'
            self.files[file_id] = content
            return 200, {'id': file_id, 'object': 'file', 'purpose': 'batch'}
        if method == 'POST' and parts == ['batches']:
            if self.refuse_create:
                echoed = f'bad batch for {headers.get("Authorization")}'  # a server echoing the credential
                return 400, {'error': {'message': echoed, 'type': 'invalid_request_error', 'code': None}}
            request = json.loads(body)
            batch = {
                'id': f'batch_{len(self.batches)}', 'object': 'batch', 'endpoint': request['endpoint'],
                'input_file_id': request['input_file_id'], 'completion_window': request['completion_window'],
                'status': 'validating', 'created_at': 1_700_000_000,
            }  # fmt: skip
            self.batches[batch['id']] = batch
            return 200, batch
        if method == 'GET' and parts[0] == 'batches':
            if self.flaky_checks:
                self.flaky_checks -= 1
                return 503, {'error': {'message': 'try later', 'type': 'server_error', 'code': None}}
            batch = self.batches[parts[1]]
            if batch['status'] in ('validating', 'in_progress', 'cancelling') and self._tick(batch):
                self._end(batch, 'cancelled' if batch['status'] == 'cancelling' else self.ending or 'completed')
            elif batch['status'] == 'validating':
                batch['status'] = 'in_progress'
            return 200, batch
        if method == 'POST' and parts[0] == 'batches' and parts[2:] == ['cancel']:
            batch = self.batches[parts[1]]
            batch['status'] = 'cancelling'
            self.hold = False
            return 200, batch
        if method == 'GET' and parts[0] == 'files' and parts[2:] == ['content']:
            return 200, self.files[parts[1]]
        if method == 'DELETE' and parts[0] == 'files':
            self.deleted.append(parts[1])
            return 200, {'id': parts[1], 'deleted': True}
        return 404, {'error': {'message': f'no route {method} {path}'}}

    def _end(self, batch: dict[str, Any], status: str) -> None:
        batch['status'] = status
        lines = [json.loads(line) for line in self.files[batch['input_file_id']].splitlines()]
        batch['request_counts'] = {'total': len(lines), 'completed': 0, 'failed': 0}
        if status == 'failed':
            batch['errors'] = {'data': [{'code': 'invalid_model', 'message': 'no such model', 'line': 1}]}
            return
        output, errors = [], []
        for line in lines:
            prompt = prompt_of(line['body'])
            if status in ('expired', 'cancelled') and prompt in self.unrun:
                self.unrun.discard(prompt)  # left unrun once: submitted again, it runs
                if status == 'expired':  # OpenAI lists expired requests in the error file
                    errors.append({'custom_id': line['custom_id'], 'error': {'code': 'batch_expired'}})
                continue
            if prompt in self.failing:
                error = {'message': f'{prompt} is invalid', 'type': 'invalid_request_error', 'code': 'bad'}
                response = {'status_code': 400, 'request_id': 'r', 'body': {'error': error}}
                errors.append({'custom_id': line['custom_id'], 'response': response})
            else:
                response = {'status_code': 200, 'request_id': 'r', 'body': responses_body(prompt)}
                output.append({'custom_id': line['custom_id'], 'response': response, 'error': None})
        output.reverse()  # results come in any order: they are matched by `custom_id`
        for key, rows in (('output_file_id', output), ('error_file_id', errors)):
            if rows:
                file_id = f'file-{len(self.files)}'
                self.files[file_id] = b'\n'.join(json.dumps(row).encode() for row in rows) + b'\n'
                batch[key] = file_id


def anthropic_message(prompt: str) -> dict[str, Any]:
    return {
        'id': f'msg_{prompt}', 'type': 'message', 'role': 'assistant', 'model': 'claude-sonnet-4-5',
        'content': [{'type': 'text', 'text': f'answer to {prompt}'}], 'stop_reason': 'end_turn',
        'stop_sequence': None, 'usage': {'input_tokens': 3, 'output_tokens': 4},
    }  # fmt: skip


@dataclass
class FakeAnthropic(FakeBatchAPI):
    """`/v1/messages/batches` of Anthropic's Message Batches."""

    results: dict[str, bytes] = field(default_factory=dict)

    def handle(self, method: str, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, Any]:
        parts = path.strip('/').split('/')[3:]  # without `v1/messages/batches`
        if method == 'POST' and not parts:
            requests = json.loads(body)['requests']
            batch_id = f'msgbatch_{len(self.batches)}'
            self.batches[batch_id] = batch = {
                'id': batch_id, 'type': 'message_batch', 'processing_status': 'in_progress',
                'created_at': '2026-12-02T10:00:00Z', 'results_url': None, 'ended_at': None,
                'request_counts': {'processing': len(requests), 'succeeded': 0, 'errored': 0, 'canceled': 0,
                                   'expired': 0},
                'requests': requests,
            }  # fmt: skip
            return 200, self._public(batch)
        if parts and parts[0] == 'results':
            return 200, self.results[parts[1]]
        batch = self.batches[parts[0]]
        if method == 'POST' and parts[1:] == ['cancel']:
            batch['processing_status'] = 'canceling'
            self.hold = False
            return 200, self._public(batch)
        if batch['processing_status'] != 'ended' and self._tick(batch):
            self._end(batch, 'canceled' if batch['processing_status'] == 'canceling' else self.ending or 'ended')
        return 200, self._public(batch)

    @staticmethod
    def _public(batch: dict[str, Any]) -> dict[str, Any]:
        return {key: value for key, value in batch.items() if key != 'requests'}

    def _end(self, batch: dict[str, Any], how: str) -> None:
        batch['processing_status'] = 'ended'
        counts = {'processing': 0, 'succeeded': 0, 'errored': 0, 'canceled': 0, 'expired': 0}
        rows = []
        for request in batch['requests']:
            prompt = prompt_of(request['params'])
            if how in ('expired', 'canceled') and prompt in self.unrun:
                self.unrun.discard(prompt)
                result: dict[str, Any] = {'type': how}
            elif prompt in self.failing:
                error = {'type': 'invalid_request_error', 'message': f'{prompt} is invalid'}
                result = {'type': 'errored', 'error': {'type': 'error', 'error': error}}
            else:
                result = {'type': 'succeeded', 'message': anthropic_message(prompt)}
            counts[result['type']] += 1
            rows.append({'custom_id': request['custom_id'], 'result': result})
        rows.reverse()
        batch['request_counts'] = counts
        self.results[batch['id']] = b'\n'.join(json.dumps(row).encode() for row in rows)
        batch['results_url'] = f'{self.url}/v1/messages/batches/results/{batch["id"]}'


def gemini_response(prompt: str) -> dict[str, Any]:
    return {
        'candidates': [
            {'content': {'role': 'model', 'parts': [{'text': f'answer to {prompt}'}]}, 'finishReason': 'STOP'}
        ],
        'usageMetadata': {'promptTokenCount': 3, 'candidatesTokenCount': 4, 'totalTokenCount': 7},
        'modelVersion': 'gemini-2.5-flash',
    }  # fmt: skip


@dataclass
class FakeGemini(FakeBatchAPI):
    """`batchGenerateContent` and `batches/{id}` of the Gemini API's Batch Mode, inlined requests."""

    as_file: bool = False
    """Write the results to a file rather than inline."""
    files: dict[str, bytes] = field(default_factory=dict)

    def handle(self, method: str, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, Any]:
        if path.endswith(':batchGenerateContent'):
            requests = json.loads(body)['batch']['inputConfig']['requests']['requests']
            name = f'batches/b{len(self.batches)}'
            self.batches[name] = job = {'name': name, 'state': 'BATCH_STATE_PENDING', 'requests': requests}
            return 200, self._operation(job)
        if path.startswith('/download/v1beta/'):
            return 200, self.files[path.removeprefix('/download/v1beta/').split(':')[0]]
        name = path.removeprefix('/v1beta/')
        if method == 'POST' and name.endswith(':cancel'):
            self.batches[name.removesuffix(':cancel')]['state'] = 'BATCH_STATE_CANCELLING'
            self.hold = False
            return 200, {}
        job = self.batches[name]
        if not job['state'].endswith(('SUCCEEDED', 'FAILED', 'CANCELLED', 'EXPIRED')) and self._tick(job):
            if job['state'].endswith('CANCELLING'):
                self._end(job, 'CANCELLED')
            else:
                self._end(job, self.ending or 'SUCCEEDED')
        return 200, self._operation(job)

    @staticmethod
    def _operation(job: dict[str, Any]) -> dict[str, Any]:
        metadata = {'@type': 'type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch',
                    'name': job['name'], 'state': job['state'], 'createTime': '2026-12-02T10:00:00Z'}  # fmt: skip
        operation: dict[str, Any] = {'name': job['name'], 'metadata': metadata}
        if 'output' in job:
            operation['done'] = True
            operation['response'] = job['output']
            metadata['output'] = job['output']
        if 'error' in job:
            operation['done'] = True
            operation['error'] = job['error']
        return operation

    def _end(self, job: dict[str, Any], how: str) -> None:
        job['state'] = f'BATCH_STATE_{how}'
        if how == 'FAILED':
            job['error'] = {'code': 3, 'message': 'the batch is invalid'}
            return
        if how in ('EXPIRED', 'CANCELLED') and not self.unrun:
            return  # ended before running anything: no output
        rows = []
        for request in job['requests']:
            prompt = prompt_of(request['request'])
            if prompt in self.unrun:
                self.unrun.discard(prompt)
                continue
            key = request['metadata']['key']
            if prompt in self.failing:
                rows.append({'error': {'code': 3, 'message': f'{prompt} is invalid'}, 'metadata': {'key': key}})
            else:
                rows.append({'response': gemini_response(prompt), 'metadata': {'key': key}})
        rows.reverse()
        if self.as_file:
            name = f'files/out{len(self.files)}'
            lines = [
                {'key': row['metadata']['key'], **{k: v for k, v in row.items() if k != 'metadata'}} for row in rows
            ]
            self.files[name] = b'\n'.join(json.dumps(line).encode() for line in lines)
            job['output'] = {'responsesFile': name}
        else:
            job['output'] = {'inlinedResponses': {'inlinedResponses': rows}}
