"""Preflight: the environment and the whole training pipeline on this device, as a checklist,
before renting more machines. One record per item (`kind: "preflight"`) in the results file.

    pytest bench/ -m preflight                          # every registered workload
    pytest bench/ -m preflight --workload=my-model      # yours, registered from your conftest.py
    pytest bench/ -m preflight --precision=bf16         # the precision you will train in
    pytest bench/ -m preflight -k hardware --burn-s=30  # node health, burn test, matmul peak only

`trainbench preflight` runs the same checklist outside pytest.
"""

import pytest

from trainbench.catalog import gpu_names
from trainbench.preflight import Preflight, PreflightConfig
from trainbench.preflight.report import check_record_fields, format_checklist, format_peaks

pytestmark = pytest.mark.preflight


def _preflight(session, workloads=(), precision="fp32"):
    return Preflight(PreflightConfig(
        workloads=tuple(workloads),
        gpu=session.profile if session.profile in gpu_names() else "auto",
        size=session.size, precision=precision, batch_size=session.batch_size, seed=session.seed,
    ))


def _record_and_assert(trainbench, checks, **common):
    for c in checks:
        trainbench.record(test=f"{trainbench.nodeid}::{c.name}", **check_record_fields(c), **common)
    print(format_checklist(checks))
    failed = [c for c in checks if c.failed]
    assert not failed, "\n".join(f"{c.name}: {c.reason}\n  fix: {c.fix}" for c in failed)


def test_preflight_environment(trainbench, trainbench_session, request):
    workloads = request.config.getoption("--workload") or ()
    checks = _preflight(trainbench_session, workloads).environment()
    _record_and_assert(trainbench, checks)  # machine items: no workload, size or precision


def test_preflight_pipeline(trainbench, trainbench_session, tb_workload, tb_precision):
    p = _preflight(trainbench_session, (tb_workload,), tb_precision)
    checks = p.workload(tb_workload, tb_precision)
    _record_and_assert(trainbench, checks, size=p.size, precision=tb_precision, batch_size=p.batches[tb_workload])


def test_preflight_hardware(trainbench, trainbench_session, request):
    """NVML health of every GPU, the measured matmul peak and a burn test with a correctness check
    (n/a items on a CPU, whose peak and burn still run)."""
    burn_s = request.config.getoption("--burn-s")
    p = Preflight(PreflightConfig(workloads=(), gpu="auto", burn_s=burn_s, seed=trainbench_session.seed))
    checks = p.hardware()
    if p.tier.peaks:
        print(format_peaks(p.tier.peaks))
        for peak in p.tier.peaks[0]:  # the session's device: later training records divide by these
            if peak.device == str(trainbench_session.device):
                trainbench_session.matmul_peaks.setdefault(peak.precision, peak)
    _record_and_assert(trainbench, checks)
