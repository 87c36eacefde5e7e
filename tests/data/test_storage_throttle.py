"""Must-show 3: the throttle holds its limit -- N MB through throttle:20,500 take N/20 s +-10%,
from one process or several sharing the disk. Sleep-dominated: robust on a busy machine."""

from __future__ import annotations

import multiprocessing
import time

import pytest
from hypothesis import given, strategies as st

from trainbench.data.backends import ThrottleOpener, parse_storage
from trainbench.data.throttle import DiskLimits, SharedBudget

MB = 10**6


@pytest.fixture(scope="module")
def blob(tmp_path_factory):
    path = tmp_path_factory.mktemp("throttle") / "blob.bin"
    path.write_bytes(bytes(range(256)) * (32 * MB // 256))  # 32 MB
    return str(path)


def _read(opener, path: str, total: int, chunk: int, offset: int = 0) -> int:
    fs = opener()
    got = 0
    while got < total:
        n = min(chunk, total - got)
        got += len(fs.cat_file(path, start=offset + got, end=offset + got + n))
    return got


def test_throttle_20_500_reads_n_mb_in_n_over_20_seconds(blob):
    spec = parse_storage("throttle:20,500")
    opener = ThrottleOpener(SharedBudget(spec.limits))
    n_mb = 30
    t0 = time.perf_counter()
    got = _read(opener, blob, n_mb * MB, chunk=MB)
    took = time.perf_counter() - t0
    assert got == n_mb * MB
    assert took == pytest.approx(n_mb / 20, rel=0.10), f"{n_mb} MB took {took:.2f} s, limit says {n_mb / 20:.2f} s"


def test_throttle_is_shared_by_worker_processes(blob):
    """Two processes reading at once get 20 MB/s together, not each."""
    opener = ThrottleOpener(SharedBudget(parse_storage("throttle:20,500").limits))
    ctx = multiprocessing.get_context("fork")
    each = 12 * MB
    procs = [ctx.Process(target=_read, args=(opener, blob, each, MB // 2, k * each)) for k in range(2)]
    t0 = time.perf_counter()
    for p in procs:
        p.start()
    for p in procs:
        p.join(30)
    took = time.perf_counter() - t0
    assert all(p.exitcode == 0 for p in procs)
    assert took == pytest.approx(2 * each / (20 * MB), rel=0.10)


def test_iops_limit_binds_small_reads(blob):
    opener = ThrottleOpener(SharedBudget(DiskLimits(1000 * MB, 200)))  # bytes never bind
    t0 = time.perf_counter()
    _read(opener, blob, 100 * 4096, chunk=4096)  # 100 reads of 4 KiB
    assert time.perf_counter() - t0 == pytest.approx(100 / 200, rel=0.10)


@given(nbytes=st.integers(1, 10**9), ops=st.integers(1, 10**6),
       rate=st.floats(1e3, 1e10), iops=st.floats(1, 1e7))
def test_seconds_for_is_the_binding_limit(nbytes, ops, rate, iops):
    lim = DiskLimits(rate, iops)
    t = lim.seconds_for(nbytes, ops)
    assert t >= nbytes / rate and t >= ops / iops
    assert t == pytest.approx(max(nbytes / rate, ops / iops))
