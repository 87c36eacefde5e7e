"""The burn test: its corruption check fails when one element is flipped and passes otherwise;
throughput drops and slow GPUs are flagged; the node's peak is its slowest device's."""

import pytest
import torch

from trainbench.harness.peak import MatmulPeak
from trainbench.metrics import sustained_vs_burst
from trainbench.preflight import FAIL, NA, PASS, WARN
from trainbench.preflight.burn import BurnConfig, BurnResult, BurnSample, burn, reference_tolerance, tolerance
from trainbench.preflight.stress import check_burn, check_peak, on_every_device

SHORT = BurnConfig(seconds=0.6, n=96, interval_s=0.05)


def test_short_cpu_burn_passes_with_every_result_checked():
    r = burn("cpu", SHORT)
    assert r.results_checked > 5 and r.mismatches == 0 and r.reference_ok
    assert r.samples and all(s.flops_per_s > 0 for s in r.samples)
    c = check_burn([r])
    assert c.status == PASS and "0 mismatches" in c.reason


def test_one_flipped_element_in_one_result_fails_the_burn():
    def flip(c, i):
        if i == 2:
            c[5, 7] = -c[5, 7] + 1.0

    r = burn("cpu", SHORT, inject=flip)
    assert r.mismatches == 1
    c = check_burn([r])
    assert c.status == FAIL and "silent data corruption" in c.reason and "1 element(s)" in c.reason
    assert "another machine" in c.fix


def test_a_wrong_first_result_fails_the_reference_check():
    r = burn("cpu", SHORT)
    bad = BurnResult(r.device, r.precision, r.n, r.seconds, r.results_checked, 0, 1.3, False, r.samples)
    assert check_burn([bad]).status == FAIL


def test_tolerances_sit_between_rounding_noise_and_corruption():
    assert tolerance(torch.float32, 4096) < 1e-3  # entries ~ N(0, 4096): std 64
    assert reference_tolerance(torch.bfloat16, 8192, False) < 0.1  # a garbage result is off by ~1.4


def _gpu_result(device, rates, events=()):
    samples = [BurnSample(float(i), r, 1980, 690.0, 80, events) for i, r in enumerate(rates)]
    return BurnResult(device, "bf16", 8192, 60.0, 1000, 0, 0.001, True, samples)


def test_sustained_drop_on_a_gpu_warns_with_the_clock_events_seen():
    r = _gpu_result("cuda:0", [700e12] * 5 + [600e12] * 5, events=("SW_POWER_CAP", "SW_THERMAL_SLOWDOWN"))
    c = check_burn([r])
    assert c.status == WARN and "sustained drop" in c.reason and "SW_THERMAL_SLOWDOWN" in c.reason
    assert "700.0 TFLOPS first fifth, 600.0 TFLOPS last fifth (-14.3%)" in c.reason
    assert check_burn([_gpu_result("cuda:0", [700e12] * 10)]).status == PASS


def test_slow_gpu_in_a_node_is_named():
    rs = [_gpu_result(f"cuda:{i}", [700e12] * 10) for i in range(7)] + [_gpu_result("cuda:7", [600e12] * 10)]
    c = check_burn(rs)
    assert c.status == WARN and "cuda:7 (86% of the median)" in c.reason and "cuda:0 (" not in c.reason


def _peak(device, precision, tflops):
    return MatmulPeak(device, precision, tflops * 1e12, (8192, 8192, 8192), (), 1, 0)


def test_node_peak_is_the_slowest_gpu_and_stragglers_are_named():
    peaks = [[_peak(f"cuda:{i}", "bf16", 790 if i != 2 else 700)] for i in range(8)]
    c = check_peak(peaks)
    assert c.status == WARN and c.metrics["peak_bf16_flops_per_s"] == 700e12
    assert "cuda:2 (89% of the median)" in c.reason
    assert check_peak([[_peak(f"cuda:{i}", "bf16", 790)] for i in range(8)]).status == PASS
    assert check_peak([]).status == NA and check_burn([]).status == NA


def test_on_every_device_runs_in_parallel_and_keeps_device_order():
    assert on_every_device(lambda d: str(d), [torch.device("cpu")] * 3) == ["cpu"] * 3


@pytest.mark.parametrize("times, ratio", [([1.0] * 10, 1.0), ([1.0] * 8 + [1.25] * 2, 0.8), ([1.0] * 4, None)])
def test_sustained_vs_burst_is_last_fifth_throughput_over_first(times, ratio):
    assert sustained_vs_burst(times) == (pytest.approx(ratio) if ratio else None)
