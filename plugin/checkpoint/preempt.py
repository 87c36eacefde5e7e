"""Preemption: stop at a step boundary, save, and exit with `EXIT_PREEMPTED`.

Spot/preemptible VMs are reclaimed with short notice (AWS: a two-minute spot interruption
notice; GCP: about 30 s, then ACPI shutdown, which sends SIGTERM to processes). The training
loop checks `Preemption.requested` after every optimizer step, so the step in flight finishes,
a checkpoint is written and the process exits 75 (sysexits.h EX_TEMPFAIL: "temporary failure,
the user is invited to retry"); a restart loop reruns with `--resume auto`.

Triggers: SIGTERM, a configurable second signal (SIGUSR1 by default: SLURM's `--signal`,
schedulers' warning signal), and optionally a thread that polls the cloud metadata server:
    aws: PUT /latest/api/token (IMDSv2), then GET /latest/meta-data/spot/instance-action
         (404 = no notice; 200 with {"action": "terminate"|"stop"|"hibernate", "time": ...})
    gcp: GET /computeMetadata/v1/instance/preempted with `Metadata-Flavor: Google`
         ("TRUE" once the VM is being preempted)
"""

from __future__ import annotations

import contextlib
import signal
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Callable, Iterator

from ..registry import Registry

__all__ = ["EXIT_PREEMPTED", "Preemption", "MetadataWatcher", "METADATA"]

EXIT_PREEMPTED = 75


class Preemption:
    """A flag set by a signal handler or the metadata watcher; read between training steps."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self.reason: str | None = None

    @property
    def requested(self) -> bool:
        return self._event.is_set()

    def request(self, reason: str) -> None:
        if not self._event.is_set():
            self.reason = reason
            self._event.set()

    def wait(self, timeout: float) -> bool:
        return self._event.wait(timeout)

    @contextlib.contextmanager
    def handle(self, signals: tuple[signal.Signals, ...]) -> Iterator["Preemption"]:
        """Install handlers for `signals` (main thread only); the old ones come back on exit."""
        old = {}
        for sig in dict.fromkeys(signals):
            old[sig] = signal.signal(sig, lambda signum, frame: self.request(signal.Signals(signum).name))
        try:
            yield self
        finally:
            for sig, handler in old.items():
                signal.signal(sig, handler)


@dataclass(frozen=True)
class MetadataSource:
    base_url: str  # the link-local metadata server
    poll: Callable[[str, float], str | None]  # (base_url, timeout_s) -> notice text or None


def _get(url: str, timeout: float, headers: dict[str, str], method: str = "GET") -> tuple[int, str]:
    req = urllib.request.Request(url, headers=headers, method=method)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, resp.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        return exc.code, ""


def _aws(base: str, timeout: float) -> str | None:
    headers = {}
    status, token = _get(f"{base}/latest/api/token", timeout,
                         {"X-aws-ec2-metadata-token-ttl-seconds": "300"}, method="PUT")
    if status == 200 and token:
        headers["X-aws-ec2-metadata-token"] = token  # IMDSv2; without it IMDSv1 (if enabled)
    status, body = _get(f"{base}/latest/meta-data/spot/instance-action", timeout, headers)
    return f"AWS spot instance-action {body.strip()}" if status == 200 else None


def _gcp(base: str, timeout: float) -> str | None:
    status, body = _get(f"{base}/computeMetadata/v1/instance/preempted", timeout, {"Metadata-Flavor": "Google"})
    return "GCP instance/preempted TRUE" if status == 200 and body.strip().upper() == "TRUE" else None


METADATA: Registry[MetadataSource] = Registry("metadata source", flag="--preempt-watch")
METADATA.register("aws", MetadataSource("http://169.254.169.254", _aws))
METADATA.register("gcp", MetadataSource("http://metadata.google.internal", _gcp))


class MetadataWatcher(threading.Thread):
    """Polls a cloud metadata endpoint every `interval_s`; a notice sets the Preemption flag.
    Unreachable endpoints are counted in `errors`, never raised: the run goes on."""

    def __init__(self, source: str, preemption: Preemption, *, base_url: str | None = None,
                 interval_s: float = 5.0, timeout_s: float = 1.0):
        super().__init__(name=f"trainbench-preempt-{source}", daemon=True)
        self.source = METADATA.get(source)
        self.base_url = (base_url or self.source.base_url).rstrip("/")
        self.preemption = preemption
        self.interval_s = interval_s
        self.timeout_s = timeout_s
        self.errors = 0
        self.last_error: str | None = None
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.is_set() and not self.preemption.requested:
            try:
                notice = self.source.poll(self.base_url, self.timeout_s)
            except (OSError, ValueError) as exc:  # URLError, timeouts, refused connections
                self.errors += 1
                self.last_error = str(exc)
                notice = None
            if notice:
                self.preemption.request(notice)
                return
            self._halt.wait(self.interval_s)

    def stop(self) -> None:
        self._halt.set()
