"""Hardware items of the checklist (`trainbench preflight --hardware`): pure functions of
`HardwareFacts`, one item per question, each judged per GPU and reported for the node.

What FAIL means here: do not train on this machine -- it gives wrong numbers (memory errors) or
is a defective rental (a link trained below its width, NVLinks down, clocks halved by hardware
protection); a boot script drains it on exit code 1. WARN: it works, but costs time or money, or
needs a reset. Thresholds live in `HardwareLimits`, each with its reason.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Callable

from .check import FAIL, NA, PASS, WARN, Check, worst
from .hardware_facts import GpuHealth, HardwareFacts

__all__ = [
    "HardwareLimits", "hardware_checks", "HARDWARE_ITEMS",
    "check_ecc", "check_memory_repair", "check_pcie", "check_nvlink", "check_persistence",
    "check_power", "check_clocks", "check_mig", "check_p2p",
]

G = "hardware"
HARD_SLOWDOWN = ("HW_SLOWDOWN", "HW_THERMAL_SLOWDOWN", "HW_POWER_BRAKE_SLOWDOWN")


@dataclass(frozen=True)
class HardwareLimits:
    # Pre-Ampere cards can retire at most 64 pages (NVIDIA "GPU Memory Error Management"); near
    # that, the next double-bit error has no page left to retire it into
    retired_pages_fail: int = 60
    # enforced / default power limit: a GEMM-bound GPU runs at its cap, so its clocks (and
    # throughput) fall with it; a couple of percent is firmware rounding between SKUs
    power_warn_ratio: float = 0.98
    power_fail_ratio: float = 0.80
    temperature_margin_c: int = 5  # this close to the slowdown threshold, the next minutes throttle
    p2p_slow_ratio: float = 0.5  # a peer pair under half the node's median copy bandwidth
    expected_nvlinks: int | None = None  # links per GPU; None = the count NVML reports for the device


@dataclass(frozen=True)
class Verdict:
    """One GPU's answer to one item."""

    status: str
    text: str
    fix: str = ""
    metrics: dict | None = None


def _combine(name: str, gpus: tuple[GpuHealth, ...], judge: Callable[[GpuHealth], Verdict]) -> Check:
    """The node's item: the worst GPU sets the status; the reason names every GPU that is not
    fine, or says what all of them showed."""
    verdicts = [(g, judge(g)) for g in gpus]
    status = worst(v for _, v in verdicts)  # Verdicts have .status, as Checks do
    bad = [(g, v) for g, v in verdicts if v.status in (WARN, FAIL)]
    if bad:
        reason = "; ".join(f"GPU {g.index}: {v.text}" for g, v in bad)
        fix = next((v.fix for _, v in bad if v.status == status and v.fix), bad[0][1].fix)
        metrics = {"gpus": len(gpus), "gpus_flagged": [g.index for g, _ in bad], **(bad[0][1].metrics or {})}
    else:
        g0, v0 = verdicts[0]
        same = all(v.text == v0.text for _, v in verdicts)
        who = f"all {len(gpus)} GPUs" if len(gpus) > 1 else f"GPU {g0.index}"
        reason = f"{who}: {v0.text}" if same else "; ".join(f"GPU {g.index}: {v.text}" for g, v in verdicts)
        fix, metrics = "", {"gpus": len(gpus), **(v0.metrics or {})}
    return Check(name, G, status, reason, fix, metrics=metrics)


def _ecc(g: GpuHealth) -> Verdict:
    vol, agg = g.ecc_uncorrected_volatile, g.ecc_uncorrected_aggregate
    m = {"ecc_uncorrected_volatile": vol, "ecc_uncorrected_aggregate": agg}
    if g.ecc_enabled is None and vol is None:
        return Verdict(NA, "ECC not reported (a card without ECC, or NVML has no permission)", metrics=m)
    life = f" (lifetime {agg})" if agg is not None else ""
    if vol:
        return Verdict(FAIL, f"{vol} uncorrectable ECC error(s) since the driver loaded{life}: memory contents "
                       f"were lost, results computed since then may be wrong",
                       f"reset the GPU (nvidia-smi -r -i {g.index}, nothing running on it) or reboot and rerun "
                       f"preflight; if errors return, ask the provider for another machine", m)
    if g.ecc_enabled is False:
        return Verdict(WARN, "ECC is off: memory errors go undetected and corrupt training silently",
                       f"sudo nvidia-smi -e 1 -i {g.index}, then reset the GPU or reboot", m)
    return Verdict(PASS, f"ECC on, 0 uncorrectable errors since the driver loaded{life}", metrics=m)


def _memory_repair(g: GpuHealth, lim: HardwareLimits) -> Verdict:
    if g.remap_failure is not None:  # Ampere and newer: row remapping
        m = {"remapped_rows_uncorrectable": g.remap_uncorrected}
        if g.remap_failure:
            return Verdict(FAIL, f"a row remap failed ({g.remap_uncorrected} rows remapped for uncorrectable errors): "
                           f"the memory cannot repair itself any more (NVIDIA's RMA criterion)",
                           "do not train on this GPU: ask the provider for another machine "
                           "(evidence: nvidia-smi -q -d ROW_REMAPPER)", m)
        if g.remap_pending:
            return Verdict(WARN, "a row remap is pending: the faulty row stays in use until the GPU is reset",
                           f"reset the GPU (nvidia-smi -r -i {g.index}, nothing running on it) or reboot", m)
        return Verdict(PASS, f"{g.remap_uncorrected} rows remapped for uncorrectable errors, none pending, "
                       f"no remap failure", metrics=m)
    if g.retired_pages is None and g.retired_pending is None:
        return Verdict(NA, "neither row remapping nor page retirement reported")
    n = g.retired_pages or 0
    m = {"retired_pages": g.retired_pages}
    if n >= lim.retired_pages_fail:
        return Verdict(FAIL, f"{n} pages retired of the 64 this card can retire: the next double-bit error has "
                       f"nowhere to go", "ask the provider for another machine (nvidia-smi -q -d PAGE_RETIREMENT)", m)
    if g.retired_pending:
        return Verdict(WARN, f"retired page(s) pending ({n} retired): the bad page stays mapped until the driver "
                       f"reloads", "reboot, or unload and reload the nvidia driver with nothing running", m)
    return Verdict(PASS, f"{n} pages retired, none pending", metrics=m)


def _pcie(g: GpuHealth) -> Verdict:
    if g.pcie_width is None or g.pcie_gen is None:
        return Verdict(NA, "PCIe link not reported (SXM module behind a switch in a VM, or no permission)")
    m = {"pcie_gen": g.pcie_gen, "pcie_gen_max": g.pcie_gen_max, "pcie_width": g.pcie_width,
         "pcie_width_max": g.pcie_width_max}
    link = f"gen{g.pcie_gen} x{g.pcie_width} (max gen{g.pcie_gen_max} x{g.pcie_width_max})"
    if g.pcie_width_max and g.pcie_width < g.pcie_width_max:
        return Verdict(FAIL, f"link trained at x{g.pcie_width} of x{g.pcie_width_max}, {link}: host<->GPU copies "
                       f"(input batches, checkpoints, PCIe-only collectives) get {g.pcie_width / g.pcie_width_max:.0%} "
                       f"of the bandwidth", "a badly seated card or riser: ask the provider for another machine "
                       "(evidence: nvidia-smi -q -d PCI)", m)
    if g.pcie_gen_max and g.pcie_gen < g.pcie_gen_max:
        if g.read_under_load:
            return Verdict(WARN, f"gen{g.pcie_gen} under load, below the gen{g.pcie_gen_max} link this slot allows: "
                           f"{link}", "check the BIOS PCIe speed setting, or ask the provider", m)
        return Verdict(PASS, f"{link}, read at idle: idle links downshift to save power, so the generation is "
                       f"not judged (run with CUDA to read it under load)", metrics=m)
    if g.pcie_gen_gpu_max and g.pcie_gen_max and g.pcie_gen_gpu_max > g.pcie_gen_max:
        return Verdict(WARN, f"{link}: the slot caps a gen{g.pcie_gen_gpu_max} card at gen{g.pcie_gen_max}, "
                       f"halving host<->GPU bandwidth per generation", "use a machine whose slots match the card", m)
    return Verdict(PASS, link + (" under load" if g.read_under_load else ""), metrics=m)


def _nvlink(g: GpuHealth, n_gpus: int, lim: HardwareLimits) -> Verdict:
    want = g.nvlink_total if lim.expected_nvlinks is None else lim.expected_nvlinks
    m = {"nvlink_up": g.nvlink_up, "nvlink_expected": want}
    if not want:
        why = "--expect-nvlinks=0" if lim.expected_nvlinks == 0 else "no NVLink on this GPU"
        return Verdict(NA, f"{why}: peers talk over PCIe")
    up = g.nvlink_up or 0
    if up >= want:
        return Verdict(PASS, f"{up} of {want} NVLinks up", metrics=m)
    text = f"{want - up} of {want} NVLinks down ({up} up)"
    fix = "ask the provider for another machine (evidence: nvidia-smi nvlink -s; nvidia-smi topo -m)"
    if n_gpus > 1:
        return Verdict(FAIL, f"{text}: all-reduce bandwidth drops with every link, and NCCL falls back to PCIe "
                       f"when a path has none", fix, m)
    return Verdict(WARN, f"{text} with one GPU visible: expected in a VM slice whose peers are elsewhere, a fault "
                   f"if this machine was rented for its NVLink", fix, m)


def _persistence(g: GpuHealth) -> Verdict:
    if g.persistence is None:
        return Verdict(NA, "persistence mode not reported (Linux only)")
    if g.persistence:
        return Verdict(PASS, "persistence mode on")
    return Verdict(WARN, "persistence mode off: the driver unloads when the last process exits, so every run pays "
                   "GPU initialisation (seconds) and loses clock and power settings",
                   "sudo nvidia-smi -pm 1, or run nvidia-persistenced at boot")


def _power(g: GpuHealth, lim: HardwareLimits) -> Verdict:
    enf, dflt = g.power_enforced_w, g.power_default_w
    if enf is None or not dflt:
        return Verdict(NA, "power limits not reported")
    ratio = enf / dflt
    m = {"power_enforced_w": enf, "power_default_w": dflt, "power_limit_w": g.power_limit_w, "power_ratio": ratio}
    text = f"enforced power limit {enf:.0f} W, {ratio:.0%} of the {dflt:.0f} W default"
    outside = g.power_limit_w is not None and enf < g.power_limit_w - 1
    fix = ("the cap comes from outside the driver (the platform or an out-of-band BMC limit): ask the provider"
           if outside else f"sudo nvidia-smi -pl {dflt:.0f} -i {g.index}, or ask the provider")
    if ratio < lim.power_fail_ratio:
        return Verdict(FAIL, f"{text}: a compute-bound GPU runs at its cap, so its clocks and throughput drop with it",
                       fix, m)
    if ratio < lim.power_warn_ratio:
        return Verdict(WARN, f"{text}: throughput under full load will be lower than a default card's", fix, m)
    return Verdict(PASS, text, metrics=m)


def _clocks(g: GpuHealth, lim: HardwareLimits) -> Verdict:
    if g.clock_event_mask is None and g.temperature_c is None:
        return Verdict(NA, "clock event reasons and temperature not reported")
    ev = g.clock_events
    sm = f"SM {g.sm_clock_mhz}/{g.sm_clock_max_mhz} MHz" if g.sm_clock_mhz else "SM clock n/a"
    temp = f"{g.temperature_c} C" + (f" (slowdown at {g.slowdown_temperature_c} C)" if g.slowdown_temperature_c else "")
    when = "under load" if g.read_under_load else "at idle"
    m = {"sm_clock_mhz": g.sm_clock_mhz, "sm_clock_max_mhz": g.sm_clock_max_mhz, "temperature_c": g.temperature_c,
         "clock_event_mask": g.clock_event_mask}
    events = ", ".join(ev) or "none"
    hard = [e for e in ev if e in HARD_SLOWDOWN]
    if hard:
        return Verdict(FAIL, f"{', '.join(hard)} {when}: hardware protection cuts clocks by half or more (too hot, "
                       f"power brake from the supply, or power spikes); {sm}, {temp}",
                       "check the rack's cooling and power, or ask the provider for another machine "
                       "(nvidia-smi -q -d PERFORMANCE)", m)
    near = (g.temperature_c is not None and g.slowdown_temperature_c
            and g.temperature_c >= g.slowdown_temperature_c - lim.temperature_margin_c)
    if "SW_THERMAL_SLOWDOWN" in ev or near:
        return Verdict(WARN, f"running hot {when}: clock events {events}; {sm}, {temp}: sustained throughput will "
                       f"fall", "check airflow / fan settings, or ask the provider; the burn test shows the drop", m)
    note = " (at its power limit: normal under full load)" if "SW_POWER_CAP" in ev else ""
    return Verdict(PASS, f"clock events {when}: {events}{note}; {sm}, {temp}", metrics=m)


def _mig(g: GpuHealth) -> Verdict:
    if g.mig_enabled is None:
        return Verdict(NA, "MIG not supported on this GPU")
    if g.mig_enabled:
        return Verdict(FAIL, "MIG mode is on: a process sees one slice of the GPU, so benchmarks measure a fraction "
                       "of the card and its MFU is against the wrong peak",
                       f"sudo nvidia-smi -i {g.index} -mig 0, then reset the GPU; or rent a non-MIG instance")
    if g.mig_pending:
        return Verdict(WARN, "MIG is off now but turns on at the next GPU reset",
                       f"sudo nvidia-smi -i {g.index} -mig 0 before the reset")
    return Verdict(PASS, "MIG off: the whole GPU is visible")


def _node(name: str, f: HardwareFacts, judge: Callable[[GpuHealth], Verdict]) -> Check:
    if not f.gpus:
        return Check(name, G, NA, f.nvml_error or "no NVIDIA GPU reported by NVML")
    return _combine(name, f.gpus, judge)


def check_ecc(f: HardwareFacts) -> Check:
    return _node("ecc", f, _ecc)


def check_memory_repair(f: HardwareFacts, lim: HardwareLimits = HardwareLimits()) -> Check:
    return _node("memory_repair", f, lambda g: _memory_repair(g, lim))


def check_pcie(f: HardwareFacts) -> Check:
    return _node("pcie", f, _pcie)


def check_nvlink(f: HardwareFacts, lim: HardwareLimits = HardwareLimits()) -> Check:
    return _node("nvlink", f, lambda g: _nvlink(g, len(f.gpus), lim))


def check_persistence(f: HardwareFacts) -> Check:
    return _node("persistence", f, _persistence)


def check_power(f: HardwareFacts, lim: HardwareLimits = HardwareLimits()) -> Check:
    return _node("power_limit", f, lambda g: _power(g, lim))


def check_clocks(f: HardwareFacts, lim: HardwareLimits = HardwareLimits()) -> Check:
    return _node("clocks", f, lambda g: _clocks(g, lim))


def check_mig(f: HardwareFacts) -> Check:
    return _node("mig", f, _mig)


def check_p2p(f: HardwareFacts, lim: HardwareLimits = HardwareLimits()) -> Check:
    if len(f.gpus) < 2:
        return Check("p2p", G, NA, f"{len(f.gpus)} GPU(s): peer-to-peer matters between GPUs only")
    pairs = f.pairs
    label = lambda ps: ", ".join(f"{p.a}->{p.b}" for p in ps)  # noqa: E731
    bw = [p.copy_gb_s for p in pairs if p.copy_gb_s]
    med = statistics.median(bw) if bw else None
    m = {"pairs": len(pairs), "copy_gb_s_median": med, "copy_gb_s_min": min(bw) if bw else None}
    wrong = [p for p in pairs if p.copy_correct is False]
    if wrong:
        return Check("p2p", G, FAIL, f"peer copies {label(wrong)} returned different data: silent corruption on "
                     f"the link", "ask the provider for another machine", metrics=m)
    no_p2p = [p for p in pairs if p.nvml_ok is False or p.torch_ok is False]
    slow = [p for p in pairs if med and p.copy_gb_s and p.copy_gb_s < lim.p2p_slow_ratio * med]
    speed = f"; copy bandwidth median {med:.0f} GB/s, min {min(bw):.0f} GB/s" if bw else " (copies not measured)"
    if no_p2p or slow:
        parts = []
        if no_p2p:
            parts.append(f"no P2P access for {label(no_p2p)}: NCCL stages those transfers through host memory")
        if slow:
            parts.append(f"slow pairs {label(slow)} (" + ", ".join(f"{p.copy_gb_s:.0f}" for p in slow) +
                         f" GB/s, under {lim.p2p_slow_ratio:.0%} of the median)")
        return Check("p2p", G, WARN, "; ".join(parts) + speed,
                     "check nvidia-smi topo -m (pairs across CPU sockets go through the host), IOMMU/ACS settings, "
                     "or ask the provider", metrics=m)
    return Check("p2p", G, PASS, f"{len(pairs)} ordered pairs with P2P access{speed}", metrics=m)


HARDWARE_ITEMS = ("ecc", "memory_repair", "pcie", "nvlink", "persistence", "power_limit", "clocks", "mig", "p2p")


def hardware_checks(f: HardwareFacts, lim: HardwareLimits = HardwareLimits()) -> list[Check]:
    return [check_ecc(f), check_memory_repair(f, lim), check_pcie(f), check_nvlink(f, lim), check_persistence(f),
            check_power(f, lim), check_clocks(f, lim), check_mig(f), check_p2p(f, lim)]
