"""TLS is verified by default, against a real local HTTPS server."""

from __future__ import annotations

import http.server
import json
import shutil
import ssl
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from yarn_advisor.connectors.errors import ConnectorError, UnavailableError
from yarn_advisor.connectors.http import HttpClient, RetryPolicy

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl")


@pytest.fixture(scope="module")
def https_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    d = tmp_path_factory.mktemp("tls")
    cert, key = d / "cert.pem", d / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = json.dumps({"clusterInfo": {"haState": "ACTIVE"}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            return

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    httpd.socket = ctx.wrap_socket(httpd.socket, server_side=True)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    yield f"https://127.0.0.1:{httpd.server_address[1]}/ws/v1/cluster/info", cert
    httpd.shutdown()
    httpd.server_close()


def test_untrusted_certificate_is_refused_by_default(https_server: tuple[str, Path]) -> None:
    url, _ = https_server
    with pytest.raises(UnavailableError, match=r"TLS failed: .*certificate"):
        HttpClient(retry=RetryPolicy(attempts=1)).get_json(url)


def test_configured_ca_bundle_is_trusted(https_server: tuple[str, Path]) -> None:
    url, cert = https_server
    body = HttpClient(verify=str(cert)).get_json(url)
    assert body["clusterInfo"]["haState"] == "ACTIVE"


def test_kerberos_without_the_extra_is_a_clear_error() -> None:
    from yarn_advisor.connectors.http import AuthConfig

    try:
        import gssapi  # type: ignore[import-not-found, unused-ignore]  # noqa: F401
    except ImportError:
        with pytest.raises(ConnectorError, match=r"yarn-advisor\[kerberos\]"):
            HttpClient(auth=AuthConfig(method="kerberos"))
    else:
        assert HttpClient(auth=AuthConfig(method="kerberos")).session.auth is not None
