"""Preemption triggers: real signals to this process, and the metadata watcher against a fake
AWS / GCP metadata server on 127.0.0.1."""

import argparse
import http.server
import os
import signal
import threading

import pytest

from trainbench.checkpoint.preempt import EXIT_PREEMPTED, MetadataWatcher, Preemption
from trainbench.cli.types import signal_name

parse_signal = signal_name("--preempt-signal")


def test_exit_code_is_ex_tempfail():
    assert EXIT_PREEMPTED == 75


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGUSR1, signal.SIGUSR2])
def test_signals_set_the_flag_and_handlers_come_back(sig):
    before = signal.getsignal(sig)
    p = Preemption()
    with p.handle((signal.SIGTERM, parse_signal("SIGUSR1" if sig != signal.SIGUSR2 else "usr2"))):
        assert not p.requested
        os.kill(os.getpid(), sig)
        assert p.wait(5.0) and p.reason == sig.name
    assert signal.getsignal(sig) == before


def test_first_reason_wins():
    p = Preemption()
    p.request("SIGTERM")
    p.request("AWS spot instance-action")
    assert p.reason == "SIGTERM"


def test_parse_signal_names_the_flag():
    assert parse_signal("10") == signal.SIGUSR1 and parse_signal("sigusr2") == signal.SIGUSR2
    with pytest.raises(argparse.ArgumentTypeError, match="unknown signal.*SIGBOGUS"):
        parse_signal("SIGBOGUS")


class _FakeMetadata(http.server.BaseHTTPRequestHandler):
    notice = False  # flipped by the test
    token_required = True
    seen: list = []

    def log_message(self, *args):
        pass

    def _send(self, code, body=b""):
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_PUT(self):
        self.seen.append(("PUT", self.path, dict(self.headers)))
        if self.path == "/latest/api/token" and self.headers.get("X-aws-ec2-metadata-token-ttl-seconds"):
            return self._send(200, b"TOKEN123")
        self._send(400)

    def do_GET(self):
        self.seen.append(("GET", self.path, dict(self.headers)))
        cls = type(self)
        if self.path == "/latest/meta-data/spot/instance-action":
            if cls.token_required and self.headers.get("X-aws-ec2-metadata-token") != "TOKEN123":
                return self._send(401)
            if cls.notice:
                return self._send(200, b'{"action": "terminate", "time": "2026-11-29T20:00:00Z"}')
            return self._send(404)
        if self.path == "/computeMetadata/v1/instance/preempted":
            if self.headers.get("Metadata-Flavor") != "Google":
                return self._send(403)
            return self._send(200, b"TRUE" if cls.notice else b"FALSE")
        self._send(404)


@pytest.fixture
def metadata_server():
    handler = type("Handler", (_FakeMetadata,), {"notice": False, "seen": []})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield handler, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("source", ["aws", "gcp"])
def test_watcher_raises_the_flag_on_a_notice_only(metadata_server, source):
    handler, url = metadata_server
    p = Preemption()
    w = MetadataWatcher(source, p, base_url=url, interval_s=0.05)
    w.start()
    try:
        assert not p.wait(0.4), "no notice yet: the flag must stay down"
        polls = sum(1 for m, *_ in handler.seen if m == "GET")
        assert polls >= 2
        handler.notice = True
        assert p.wait(5.0)
    finally:
        w.stop()
        w.join(5)
    assert w.errors == 0
    if source == "aws":
        assert "instance-action" in p.reason and "terminate" in p.reason
        assert any(m == "PUT" for m, *_ in handler.seen)  # IMDSv2 token first
    else:
        assert p.reason == "GCP instance/preempted TRUE"


def test_unreachable_metadata_server_is_counted_not_raised():
    p = Preemption()
    w = MetadataWatcher("aws", p, base_url="http://127.0.0.1:9", interval_s=0.05, timeout_s=0.2)
    w.start()
    try:
        assert not p.wait(0.5)
    finally:
        w.stop()
        w.join(5)
    assert w.errors >= 1 and not p.requested


def test_metadata_notice_stops_trainbench_train_with_a_checkpoint(metadata_server, tmp_path):
    """End to end: a GCP preemption notice during the run -> checkpoint, exit 75, resumable."""
    from trainbench.checkpoint.drill import Drill

    handler, url = metadata_server
    ckpt = tmp_path / "ckpt"
    d = Drill.start(["--workload", "gpt-small", "--steps", 50, "--batch-size", 2, "--device", "cpu",
                     "--checkpoint-dir", ckpt, "--preempt-watch", "gcp", "--metadata-url", url,
                     "--preempt-poll-s", 0.05], tmp_path, hold_at=2)
    d.wait_for("held at step 2")
    assert any(path.endswith("/preempted") for _, path, _ in handler.seen)  # it is polling
    handler.notice = True
    assert d.finish(120) == EXIT_PREEMPTED, d.stderr
    assert "preempted (GCP instance/preempted TRUE) after step 2" in d.stderr
    assert (ckpt / "step-00000002.pt").exists()
