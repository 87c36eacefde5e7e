"""S3 through s3fs: to a real endpoint (--s3-endpoint, credentials from the usual AWS_*
variables and config files), or to a moto server this process starts on a free loopback port
(the embedded default: the object-store path runs on any machine, offline).

moto runs as a subprocess, not a thread: a server thread in the training process would compete
with the training loop for the GIL and bias exactly what is being measured. In-process mocks
(`mock_aws`) cannot be used at all: they patch botocore, not s3fs's aiobotocore.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError

__all__ = ["S3Target", "MotoServer", "s3_filesystem", "check_reachable"]

PROBE_TIMEOUT_S = 2  # connect and read timeout of the reachability probe: the error comes fast
READ_TIMEOUT_S = 60  # data reads: a big ranged GET on a slow link is not a hang


@dataclass(frozen=True)
class S3Target:
    endpoint: str | None  # None = AWS's default endpoint for the region
    bucket: str
    # explicit credentials (moto's dummy ones); empty = boto's usual chain (AWS_* variables, files)
    credentials: dict[str, str] = field(default_factory=dict)
    region: str | None = None


def s3_filesystem(target: S3Target, *, probe: bool = False) -> Any:
    """An s3fs filesystem with bounded timeouts and retries (a dead endpoint fails, never hangs)."""
    try:
        import s3fs
    except ImportError:
        raise InputError("--storage=s3 needs s3fs: pip install 'pytest-trainbench[s3]' (or s3fs)") from None

    timeout = PROBE_TIMEOUT_S if probe else READ_TIMEOUT_S
    client_kwargs: dict[str, Any] = {}
    if target.endpoint:
        client_kwargs["endpoint_url"] = target.endpoint
    region = target.region or os.environ.get("AWS_DEFAULT_REGION") or ("us-east-1" if target.endpoint else None)
    if region:
        client_kwargs["region_name"] = region
    fs = s3fs.S3FileSystem(
        skip_instance_cache=True,  # one per process and per target; never a cached one from before a fork
        client_kwargs=client_kwargs,
        config_kwargs={
            "connect_timeout": PROBE_TIMEOUT_S,
            "read_timeout": timeout,
            "retries": {"max_attempts": 1 if probe else 3, "mode": "standard"},
        },
        **target.credentials,
    )
    fs.retries = 1 if probe else 3  # s3fs's own retry loop (class default 5), on top of botocore's
    return fs


def check_reachable(target: S3Target, create_bucket: bool = False) -> None:
    """Fail within seconds with a message naming the endpoint when S3 cannot be used."""
    fs = s3_filesystem(target, probe=True)
    where = target.endpoint or "the default AWS endpoint"
    t0 = time.perf_counter()
    try:
        if create_bucket and not fs.exists(target.bucket):
            fs.call_s3("create_bucket", Bucket=target.bucket)  # us-east-1: no LocationConstraint
            fs.invalidate_cache()
        fs.ls(target.bucket, refresh=True)
    except FileNotFoundError:
        raise InputError(f"--s3-bucket={target.bucket}: no such bucket at {where}; create it or name another") from None
    except PermissionError as exc:
        raise InputError(f"S3 at {where} refused access to bucket {target.bucket!r} ({exc}); check the AWS "
                         f"credentials (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_PROFILE)") from None
    except Exception as exc:  # connection refused, timeouts, DNS, TLS: all "unreachable"
        took = time.perf_counter() - t0
        raise InputError(f"cannot reach S3 endpoint {where} (after {took:.1f} s: {type(exc).__name__}: "
                         f"{str(exc)[:200]}); check --s3-endpoint, or omit it to use a local moto server") from None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class MotoServer:
    """`python -m moto.server` on a free loopback port; `stop()` ends it."""

    CREDENTIALS = {"key": "testing", "secret": "testing"}  # moto accepts any; never real ones

    def __init__(self, start_timeout_s: float = 60.0):
        self.port = _free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        # the server logs every request: to a temporary file, read back only if it fails to start
        self._log = tempfile.TemporaryFile()
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
            stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        )
        deadline = time.perf_counter() + start_timeout_s
        while True:
            if self._proc.poll() is not None:
                self._log.seek(0)
                err = self._log.read().decode(errors="replace")[-500:]
                why = err or f"exit {self._proc.returncode}"
                raise InputError(f"the local S3 server (moto) did not start: {why}; "
                                 f"install it with pip install 'moto[server]', or pass --s3-endpoint")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    break
            except OSError:
                if time.perf_counter() > deadline:
                    self.stop()
                    raise InputError(f"the local S3 server (moto) did not answer on port {self.port} within "
                                     f"{start_timeout_s:.0f} s; pass --s3-endpoint to use another") from None
                time.sleep(0.1)

    def target(self, bucket: str) -> S3Target:
        return S3Target(self.endpoint, bucket, dict(self.CREDENTIALS), "us-east-1")

    @property
    def running(self) -> bool:
        return self._proc.poll() is None

    def stop(self) -> None:
        if self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait(5)
        self._log.close()
