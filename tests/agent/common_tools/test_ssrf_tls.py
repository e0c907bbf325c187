"""An https fetch goes to the address that was checked, while TLS still checks the host's name (SNI)."""

from __future__ import annotations

import datetime
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from edgewise.agent.common_tools._ssrf import safe_get

pytestmark = pytest.mark.anyio


def _certificate(directory: Path) -> tuple[Path, Path]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, 'localhost')])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName('localhost')]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = directory / 'cert.pem', directory / 'key.pem'
    cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_file, key_file


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[tuple[int, Path, list[str]]]:
    """An https server on 127.0.0.1 with a certificate for `localhost` only; it records the Host headers."""
    pytest.importorskip('cryptography')
    cert_file, key_file = _certificate(tmp_path)
    hosts: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            hosts.append(str(self.headers.get('host')))
            self.send_response(200)
            self.send_header('content-type', 'text/plain')
            self.send_header('content-length', '2')
            self.end_headers()
            self.wfile.write(b'ok')

    server = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert_file, key_file)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], cert_file, hosts
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


async def test_https_is_pinned_to_the_checked_address_and_verified_by_name(
    tls_server: tuple[int, Path, list[str]],
) -> None:
    port, cert_file, hosts = tls_server
    trusted = ssl.create_default_context(cafile=str(cert_file))
    response = await safe_get(f'https://localhost:{port}/', allow_local=True, verify=trusted)
    assert (response.status_code, response.content, response.url) == (200, b'ok', f'https://localhost:{port}/')
    assert hosts == [f'localhost:{port}']
    # The certificate names `localhost`, not the address: asked for by address, TLS verification fails.
    with pytest.raises(httpx.ConnectError):  # trio words the TLS error differently from asyncio
        await safe_get(f'https://127.0.0.1:{port}/', allow_local=True, verify=trusted)
