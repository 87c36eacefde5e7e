"""Hardware items over faked NVML facts: every item passes on a healthy node, warns and fails on
the defects a rented GPU arrives with, and prints the numbers and the fix."""

import dataclasses

import pynvml
import pytest

from trainbench.preflight import FAIL, NA, PASS, WARN
from trainbench.preflight.hardware import (
    HARDWARE_ITEMS, HardwareLimits, check_clocks, check_ecc, check_memory_repair, check_mig, check_nvlink,
    check_p2p, check_pcie, check_persistence, check_power, hardware_checks,
)
from trainbench.preflight.hardware_facts import GpuHealth, HardwareFacts, P2PPair, gather_hardware
from trainbench.preflight.report import format_checklist

H100 = GpuHealth(
    index=0, name="NVIDIA H100 80GB HBM3", ecc_enabled=True, ecc_uncorrected_volatile=0, ecc_uncorrected_aggregate=0,
    remap_uncorrected=0, remap_pending=False, remap_failure=False, pcie_gen=5, pcie_gen_max=5, pcie_gen_gpu_max=5,
    pcie_width=16, pcie_width_max=16, read_under_load=True, nvlink_up=18, nvlink_total=18, persistence=True,
    power_limit_w=700.0, power_default_w=700.0, power_enforced_w=700.0, clock_event_mask=0x4, sm_clock_mhz=1980,
    sm_clock_max_mhz=1980, temperature_c=62, slowdown_temperature_c=87, mig_enabled=False, mig_pending=False,
)
PAIRS = tuple(P2PPair(a, b, True, True, 390.0, True) for a in range(8) for b in range(8) if a != b)
NODE = HardwareFacts(gpus=tuple(dataclasses.replace(H100, index=i) for i in range(8)), pairs=PAIRS)


def node(gpu3=None, **changes):
    """The healthy 8 x H100 node with GPU 3 changed."""
    gpus = list(NODE.gpus)
    gpus[3] = dataclasses.replace(gpus[3], **(gpu3 or changes))
    return dataclasses.replace(NODE, gpus=tuple(gpus))


def test_healthy_node_passes_every_hardware_item():
    checks = hardware_checks(NODE)
    assert [c.name for c in checks] == list(HARDWARE_ITEMS)
    assert {c.name: c.status for c in checks} == dict.fromkeys(HARDWARE_ITEMS, PASS)
    assert "all 8 GPUs: gen5 x16" in {c.name: c for c in checks}["pcie"].reason


def test_cpu_machine_marks_every_item_not_applicable():
    checks = hardware_checks(HardwareFacts(nvml_error="NVML unavailable: NVML Shared Library Not Found"))
    assert {c.status for c in checks} == {NA}


@pytest.mark.parametrize("check, changes, status, reason, fix", [
    # ECC
    (check_ecc, dict(ecc_uncorrected_volatile=2, ecc_uncorrected_aggregate=5), FAIL,
     "GPU 3: 2 uncorrectable ECC error(s) since the driver loaded (lifetime 5)", "nvidia-smi -r -i 3"),
    (check_ecc, dict(ecc_enabled=False), WARN, "ECC is off", "nvidia-smi -e 1 -i 3"),
    # memory repair: row remapping (Ampere+) and page retirement (older)
    (check_memory_repair, dict(remap_failure=True, remap_uncorrected=9), FAIL, "a row remap failed", "another machine"),
    (check_memory_repair, dict(remap_pending=True), WARN, "a row remap is pending", "reset the GPU"),
    (check_memory_repair, dict(remap_failure=None, remap_pending=None, retired_pages=1, retired_pending=True), WARN,
     "retired page(s) pending (1 retired)", "reload the nvidia driver"),
    (check_memory_repair, dict(remap_failure=None, remap_pending=None, retired_pages=61, retired_pending=False), FAIL,
     "61 pages retired of the 64", "another machine"),
    # PCIe
    (check_pcie, dict(pcie_width=8), FAIL, "link trained at x8 of x16", "badly seated"),
    (check_pcie, dict(pcie_gen=4), WARN, "gen4 under load, below the gen5 link", "BIOS"),
    (check_pcie, dict(pcie_gen_max=4, pcie_gen=4), WARN, "the slot caps a gen5 card at gen4", "slots match"),
    # NVLink
    (check_nvlink, dict(nvlink_up=16), FAIL, "GPU 3: 2 of 18 NVLinks down (16 up)", "nvidia-smi nvlink -s"),
    # persistence
    (check_persistence, dict(persistence=False), WARN, "persistence mode off", "nvidia-smi -pm 1"),
    # power
    (check_power, dict(power_enforced_w=490.0, power_limit_w=490.0), FAIL,
     "enforced power limit 490 W, 70% of the 700 W default", "nvidia-smi -pl 700 -i 3"),
    (check_power, dict(power_enforced_w=630.0), WARN, "630 W, 90% of the 700 W default", "outside the driver"),
    # clocks and temperature
    (check_clocks, dict(clock_event_mask=0x8 | 0x4, sm_clock_mhz=900), FAIL,
     "HW_SLOWDOWN under load: hardware protection", "cooling and power"),
    (check_clocks, dict(clock_event_mask=0x20), WARN, "SW_THERMAL_SLOWDOWN", "airflow"),
    (check_clocks, dict(temperature_c=84), WARN, "84 C (slowdown at 87 C)", "airflow"),
    # MIG
    (check_mig, dict(mig_enabled=True), FAIL, "MIG mode is on", "-mig 0"),
    (check_mig, dict(mig_pending=True), WARN, "turns on at the next GPU reset", "-mig 0"),
])
def test_defect_on_one_gpu_sets_the_node_verdict_names_the_gpu_and_the_fix(check, changes, status, reason, fix):
    c = check(node(**changes))
    assert c.status == status, c
    assert reason in c.reason and "GPU 3" in c.reason, c.reason
    assert fix in c.fix, c.fix
    assert c.metrics["gpus_flagged"] == [3]
    text = format_checklist([c])
    assert f"[{'WARN' if status == WARN else 'FAIL'}] {c.name}" in text and "fix: " in text


def test_healthy_items_show_their_numbers():
    by = {c.name: c for c in hardware_checks(NODE)}
    assert "18 of 18 NVLinks up" in by["nvlink"].reason
    assert "700 W, 100% of the 700 W default" in by["power_limit"].reason
    assert "SW_POWER_CAP (at its power limit: normal under full load); SM 1980/1980 MHz, 62 C" in by["clocks"].reason
    assert "56 ordered pairs with P2P access; copy bandwidth median 390 GB/s" in by["p2p"].reason


def test_pcie_generation_read_at_idle_is_not_judged():
    c = check_pcie(node(pcie_gen=1, read_under_load=False))
    assert c.status == PASS and "read at idle" in c.reason


def test_nvlinks_down_with_one_gpu_visible_warn_and_expected_count_overrides():
    one = HardwareFacts(gpus=(dataclasses.replace(H100, nvlink_up=0),))
    assert check_nvlink(one).status == WARN
    assert check_nvlink(NODE, HardwareLimits(expected_nvlinks=18)).status == PASS
    c = check_nvlink(NODE, HardwareLimits(expected_nvlinks=20))
    assert c.status == FAIL and "2 of 20 NVLinks down" in c.reason
    assert check_nvlink(node(nvlink_up=None, nvlink_total=None)).status == PASS  # GPU 3 without NVLink: n/a
    assert check_nvlink(node(nvlink_up=0), HardwareLimits(expected_nvlinks=0)).status == NA  # PCIe node by design


@pytest.mark.parametrize("pair, status, reason", [
    (dict(nvml_ok=False, torch_ok=False), WARN, "no P2P access for 0->1"),
    (dict(copy_gb_s=120.0), WARN, "slow pairs 0->1 (120 GB/s, under 50% of the median)"),
    (dict(copy_correct=False), FAIL, "peer copies 0->1 returned different data"),
])
def test_p2p_pairs_without_access_slow_or_corrupting_are_named(pair, status, reason):
    pairs = (dataclasses.replace(PAIRS[0], **pair),) + PAIRS[1:]
    c = check_p2p(dataclasses.replace(NODE, pairs=pairs))
    assert c.status == status and reason in c.reason, c.reason
    assert c.fix


def test_single_gpu_p2p_is_not_applicable():
    assert check_p2p(HardwareFacts(gpus=(H100,))).status == NA


# -- gathering through a fake pynvml ------------------------------------------------------------
class FakeNvml:
    """The pynvml calls gather_hardware makes, over a dict of answers; a missing answer raises
    NVMLError_NotSupported as a real driver does for a feature the card lacks."""

    def __getattr__(self, name):
        return getattr(pynvml, name)  # constants and the NVMLError classes

    def __init__(self, answers, links=(1,) * 12):
        self.answers, self.links = answers, links

    def nvmlInit(self):
        pass

    def nvmlShutdown(self):
        pass

    def nvmlDeviceGetCount(self):
        return 2

    def nvmlDeviceGetHandleByIndex(self, i):
        return i

    def nvmlDeviceGetNvLinkState(self, h, link):
        if link >= len(self.links):
            raise pynvml.NVMLError(pynvml.NVML_ERROR_INVALID_ARGUMENT)
        return self.links[link]

    def nvmlDeviceGetFieldValues(self, h, ids):
        raise pynvml.NVMLError(pynvml.NVML_ERROR_NOT_SUPPORTED)

    def _answer(self, name, *args):
        if name not in self.answers:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_NOT_SUPPORTED)
        v = self.answers[name]
        return v(*args) if callable(v) else v


def _fake_call(name):
    return lambda self, *args: self._answer(name, *args)


for _name in ("nvmlDeviceGetName", "nvmlDeviceGetEccMode", "nvmlDeviceGetTotalEccErrors", "nvmlDeviceGetRemappedRows",
              "nvmlDeviceGetRetiredPages", "nvmlDeviceGetRetiredPagesPendingStatus", "nvmlDeviceGetMigMode",
              "nvmlDeviceGetCurrPcieLinkGeneration", "nvmlDeviceGetCurrPcieLinkWidth", "nvmlDeviceGetMaxPcieLinkGeneration",
              "nvmlDeviceGetGpuMaxPcieLinkGeneration", "nvmlDeviceGetMaxPcieLinkWidth", "nvmlDeviceGetPersistenceMode",
              "nvmlDeviceGetPowerManagementLimit", "nvmlDeviceGetPowerManagementDefaultLimit",
              "nvmlDeviceGetEnforcedPowerLimit", "nvmlDeviceGetCurrentClocksEventReasons",
              "nvmlDeviceGetCurrentClocksThrottleReasons", "nvmlDeviceGetClockInfo", "nvmlDeviceGetMaxClockInfo",
              "nvmlDeviceGetTemperature", "nvmlDeviceGetTemperatureThreshold", "nvmlDeviceGetP2PStatus"):
    setattr(FakeNvml, _name, _fake_call(_name))


A100_ANSWERS = {
    "nvmlDeviceGetName": b"NVIDIA A100-SXM4-80GB", "nvmlDeviceGetEccMode": [1, 1],
    "nvmlDeviceGetTotalEccErrors": 0, "nvmlDeviceGetRemappedRows": (0, 0, 1, 0),
    "nvmlDeviceGetMigMode": [0, 0], "nvmlDeviceGetCurrPcieLinkGeneration": 4, "nvmlDeviceGetCurrPcieLinkWidth": 8,
    "nvmlDeviceGetMaxPcieLinkGeneration": 4, "nvmlDeviceGetMaxPcieLinkWidth": 16, "nvmlDeviceGetPersistenceMode": 1,
    "nvmlDeviceGetPowerManagementLimit": 400_000, "nvmlDeviceGetPowerManagementDefaultLimit": 400_000,
    "nvmlDeviceGetEnforcedPowerLimit": 400_000, "nvmlDeviceGetCurrentClocksThrottleReasons": 0x4,
    "nvmlDeviceGetClockInfo": 1410, "nvmlDeviceGetMaxClockInfo": 1410, "nvmlDeviceGetTemperature": 55,
    "nvmlDeviceGetP2PStatus": lambda a, b, idx: pynvml.NVML_P2P_STATUS_OK,
}


def test_gather_reads_a_fake_driver_and_turns_not_supported_into_none():
    f = gather_hardware(FakeNvml(A100_ANSWERS, links=(1,) * 10 + (0, 0)))
    g = f.gpus[0]
    assert (g.name, g.pcie_width, g.pcie_width_max, g.read_under_load) == ("NVIDIA A100-SXM4-80GB", 8, 16, False)
    assert (g.nvlink_up, g.nvlink_total) == (10, 12)
    assert g.remap_pending is True and g.retired_pages is None  # Ampere: rows remapped, pages not retired
    assert g.power_enforced_w == 400.0
    assert g.clock_event_mask == 0x4  # an old driver: the ...ThrottleReasons name answered
    assert g.pcie_gen_gpu_max is None and g.slowdown_temperature_c is None  # NotSupported -> None
    assert [(p.a, p.b, p.nvml_ok) for p in f.pairs] == [(0, 1, True), (1, 0, True)]
    by = {c.name: c.status for c in hardware_checks(f)}
    assert (by["pcie"], by["nvlink"], by["memory_repair"], by["power_limit"]) == (FAIL, FAIL, WARN, PASS)


def test_gather_without_a_driver_reports_why():
    class NoDriver(FakeNvml):
        def nvmlInit(self):
            raise pynvml.NVMLError(pynvml.NVML_ERROR_LIBRARY_NOT_FOUND)

    f = gather_hardware(NoDriver({}))
    assert f.gpus == () and "NVML unavailable" in f.nvml_error
