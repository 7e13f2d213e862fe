"""The README's OpenTelemetry lines, run as written against an OTLP/HTTP receiver on
127.0.0.1: a search and an add reach it as spans and metrics over the real exporters."""

from __future__ import annotations

import http.server
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

README = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")


@contextmanager
def _receiver() -> Iterator[tuple[int, dict[str, list[bytes]]]]:
    """An OTLP/HTTP endpoint that keeps each export's protobuf body by path."""
    got: dict[str, list[bytes]] = {}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            got.setdefault(self.path, []).append(body)
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1]), got
    finally:
        server.shutdown()
        server.server_close()


def test_the_readme_lines_send_spans_and_metrics_to_a_collector(tmp_path: Path) -> None:
    block = re.search(
        r"<!-- otel:start -->\n```python[^\n]*\n(.*?)```\n<!-- otel:end -->", README, re.S
    )
    assert block is not None, "the README lost its OpenTelemetry block"
    use = (
        "from langmem_layers import MemoryLayers\n"
        f"with MemoryLayers.open({str(tmp_path)!r}) as memory:\n"
        "    memory.add('I live in Lyon and my dog is called Rex.', user_id='ada')\n"
        "    assert memory.search('dog', user_id='ada')\n"
        "trace.get_tracer_provider().shutdown()\n"
        "metrics.get_meter_provider().shutdown()\n"
    )
    with _receiver() as (port, got):
        env = {"OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{port}", "PATH": "/usr/bin"}
        out = subprocess.run(
            [sys.executable, "-c", block.group(1) + use],
            capture_output=True,
            text=True,
            timeout=180,
            env={**env, "HOME": str(tmp_path)},
            check=False,
        )
    assert out.returncode == 0, out.stderr[-3000:]
    spans = b"".join(got.get("/v1/traces", []))
    for name in (b"search_memory", b"create_memory", b"update_memory", b"gen_ai.memory.store.id"):
        assert name in spans, name
    sent = b"".join(got.get("/v1/metrics", []))
    for name in (b"langmem.recall.duration", b"langmem.recalls", b"langmem.archives"):
        assert name in sent, name
    assert b"Rex" not in spans and b"dog" not in spans  # no content unless opted in
