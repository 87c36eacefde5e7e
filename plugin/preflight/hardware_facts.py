"""The NVML facts the hardware tier judges, one `GpuHealth` per GPU, gathered into plain objects.

As with `facts.py`, the checks in `hardware.py` are pure functions of these, so tests fake any
card (an x8 link, two NVLinks down, a pending retired page) by building them by hand.
`gather_hardware()` is the only code that asks NVML, through nvidia-ml-py (`pynvml`); it takes
the module as an argument so tests can hand it a fake. Every field is None where the call raised
NVMLError (NotSupported on consumer cards and VMs, NoPermission, FunctionNotFound on old drivers):
the check then says n/a, never guesses.

NVML calls and units (NVML API reference, "Device Queries"):
- ECC: nvmlDeviceGetEccMode -> [current, pending]; nvmlDeviceGetTotalEccErrors(UNCORRECTED,
  VOLATILE | AGGREGATE): volatile counts since the driver loaded, aggregate over the card's life.
- Memory repair: Ampere and newer remap rows (nvmlDeviceGetRemappedRows -> corrected, uncorrected,
  pending, failure); older cards retire pages (nvmlDeviceGetRetiredPages per cause,
  nvmlDeviceGetRetiredPagesPendingStatus).
- PCIe: nvmlDeviceGetCurr/MaxPcieLinkGeneration and ...Width (max = what device and slot allow
  together); nvmlDeviceGetGpuMaxPcieLinkGeneration = what the GPU alone supports.
- NVLink: nvmlDeviceGetNvLinkState(link) for link < NVML_NVLINK_MAX_LINKS (links the device does
  not have raise); the device's link count from field NVML_FI_DEV_NVLINK_LINK_COUNT.
- Power (milliwatts): nvmlDeviceGetPowerManagementLimit (set by the admin),
  nvmlDeviceGetPowerManagementDefaultLimit (boot default), nvmlDeviceGetEnforcedPowerLimit (after
  every limiter, out-of-band BMC caps included).
- Clocks: nvmlDeviceGetCurrentClocksEventReasons (the pre-R535 name is ...ThrottleReasons), a
  bit mask; SM clock now and max (MHz); temperature and its slowdown threshold (C).
- MIG: nvmlDeviceGetMigMode -> [current, pending]; persistence: nvmlDeviceGetPersistenceMode.
- P2P: nvmlDeviceGetP2PStatus(a, b, NVML_P2P_CAPS_INDEX_READ) == NVML_P2P_STATUS_OK.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterator

from ..telemetry.nvml import reason_names

__all__ = ["GpuHealth", "P2PPair", "HardwareFacts", "gather_hardware"]

@dataclass(frozen=True)
class GpuHealth:
    index: int
    name: str
    ecc_enabled: bool | None = None  # current ECC mode
    ecc_uncorrected_volatile: int | None = None  # since the driver loaded
    ecc_uncorrected_aggregate: int | None = None  # over the card's life
    remap_uncorrected: int | None = None  # rows remapped for uncorrectable errors (Ampere+)
    remap_pending: bool | None = None  # a remap waits for a GPU reset
    remap_failure: bool | None = None  # a remap failed: NVIDIA's RMA criterion
    retired_pages: int | None = None  # pages retired, both causes (pre-Ampere)
    retired_pending: bool | None = None  # retirement waits for a driver reload
    pcie_gen: int | None = None  # current link generation
    pcie_gen_max: int | None = None  # max of device and slot together
    pcie_gen_gpu_max: int | None = None  # max of the GPU alone
    pcie_width: int | None = None  # current lanes
    pcie_width_max: int | None = None  # max of device and slot together
    read_under_load: bool = False  # links and clocks read while this process kept the GPU busy
    nvlink_up: int | None = None  # links active
    nvlink_total: int | None = None  # links the device has (NVML link count, else links queryable)
    persistence: bool | None = None
    power_limit_w: float | None = None  # management limit (admin-set)
    power_default_w: float | None = None  # boot default
    power_enforced_w: float | None = None  # after every limiter
    clock_event_mask: int | None = None  # nvmlClocksEventReason bits, read under load when possible
    sm_clock_mhz: int | None = None
    sm_clock_max_mhz: int | None = None
    temperature_c: int | None = None
    slowdown_temperature_c: int | None = None
    mig_enabled: bool | None = None
    mig_pending: bool | None = None  # the mode after the next reset

    @property
    def clock_events(self) -> tuple[str, ...]:
        return tuple(reason_names(self.clock_event_mask))


@dataclass(frozen=True)
class P2PPair:
    a: int
    b: int
    nvml_ok: bool | None  # NVML says peer reads work; None = unknown
    torch_ok: bool | None = None  # torch.cuda.can_device_access_peer
    copy_gb_s: float | None = None  # measured a -> b copy bandwidth, 1e9 bytes/s
    copy_correct: bool | None = None  # the copied tensor equals the source


@dataclass(frozen=True)
class HardwareFacts:
    gpus: tuple[GpuHealth, ...] = ()
    pairs: tuple[P2PPair, ...] = ()
    nvml_error: str | None = None  # why NVML could not be asked (no driver, no nvidia-ml-py)


def _mw(v: int | None) -> float | None:
    return None if v is None else v / 1e3


class _Nvml:
    """Calls into pynvml that return None on any NVMLError (NotSupported, NoPermission, ...)."""

    def __init__(self, nvml: Any):
        self.m = nvml

    def __call__(self, fn: str, *args) -> Any:
        f = getattr(self.m, fn, None)
        if f is None:  # an older nvidia-ml-py without this binding
            return None
        try:
            return f(*args)
        except self.m.NVMLError:
            return None

    def first(self, names: tuple[str, ...], *args) -> Any:
        for n in names:
            v = self(n, *args)
            if v is not None:
                return v
        return None


def _nvlinks(q: _Nvml, h) -> tuple[int | None, int | None]:
    states = [q("nvmlDeviceGetNvLinkState", h, link) for link in range(getattr(q.m, "NVML_NVLINK_MAX_LINKS", 18))]
    known = [s for s in states if s is not None]
    if not known:
        return None, None
    total = len(known)
    fid = getattr(q.m, "NVML_FI_DEV_NVLINK_LINK_COUNT", None)
    values = q("nvmlDeviceGetFieldValues", h, [fid]) if fid is not None else None
    if values is not None and getattr(values[0], "nvmlReturn", 1) == 0:
        total = max(total, int(values[0].value.uiVal))
    return sum(1 for s in known if s), total


def _retired(q: _Nvml, h) -> int | None:
    causes = (q.m.NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS,
              q.m.NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR)
    pages = [q("nvmlDeviceGetRetiredPages", h, c) for c in causes]
    return None if all(p is None for p in pages) else sum(len(p or ()) for p in pages)


def _gpu(q: _Nvml, i: int, busy: Callable[[int], contextlib.AbstractContextManager]) -> GpuHealth:
    m, h = q.m, q("nvmlDeviceGetHandleByIndex", i)
    name = q("nvmlDeviceGetName", h)
    name = name.decode() if isinstance(name, bytes) else str(name)
    ecc_mode = q("nvmlDeviceGetEccMode", h)
    remap = q("nvmlDeviceGetRemappedRows", h)  # (corrected, uncorrected, pending, failure)
    mig = q("nvmlDeviceGetMigMode", h)
    pending = q("nvmlDeviceGetRetiredPagesPendingStatus", h)
    with busy(i) as loaded:  # idle GPUs downshift the PCIe link and report GPU_IDLE
        gen, width = q("nvmlDeviceGetCurrPcieLinkGeneration", h), q("nvmlDeviceGetCurrPcieLinkWidth", h)
        mask = q.first(("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"), h)
        sm = q("nvmlDeviceGetClockInfo", h, m.NVML_CLOCK_SM)
        temp = q("nvmlDeviceGetTemperature", h, m.NVML_TEMPERATURE_GPU)
    up, total = _nvlinks(q, h)
    persistence = q("nvmlDeviceGetPersistenceMode", h)
    return GpuHealth(
        index=i, name=name,
        ecc_enabled=None if ecc_mode is None else bool(ecc_mode[0]),
        ecc_uncorrected_volatile=q("nvmlDeviceGetTotalEccErrors", h, m.NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
                                   m.NVML_VOLATILE_ECC),
        ecc_uncorrected_aggregate=q("nvmlDeviceGetTotalEccErrors", h, m.NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
                                    m.NVML_AGGREGATE_ECC),
        remap_uncorrected=None if remap is None else int(remap[1]),
        remap_pending=None if remap is None else bool(remap[2]),
        remap_failure=None if remap is None else bool(remap[3]),
        retired_pages=_retired(q, h) if remap is None else None,
        retired_pending=None if pending is None or remap is not None else bool(pending),
        pcie_gen=gen, pcie_gen_max=q("nvmlDeviceGetMaxPcieLinkGeneration", h),
        pcie_gen_gpu_max=q("nvmlDeviceGetGpuMaxPcieLinkGeneration", h),
        pcie_width=width, pcie_width_max=q("nvmlDeviceGetMaxPcieLinkWidth", h), read_under_load=bool(loaded),
        nvlink_up=up, nvlink_total=total,
        persistence=None if persistence is None else persistence == m.NVML_FEATURE_ENABLED,
        power_limit_w=_mw(q("nvmlDeviceGetPowerManagementLimit", h)),
        power_default_w=_mw(q("nvmlDeviceGetPowerManagementDefaultLimit", h)),
        power_enforced_w=_mw(q("nvmlDeviceGetEnforcedPowerLimit", h)),
        clock_event_mask=mask, sm_clock_mhz=sm, sm_clock_max_mhz=q("nvmlDeviceGetMaxClockInfo", h, m.NVML_CLOCK_SM),
        temperature_c=temp,
        slowdown_temperature_c=q("nvmlDeviceGetTemperatureThreshold", h, m.NVML_TEMPERATURE_THRESHOLD_SLOWDOWN),
        mig_enabled=None if mig is None else mig[0] == m.NVML_DEVICE_MIG_ENABLE,
        mig_pending=None if mig is None else mig[1] == m.NVML_DEVICE_MIG_ENABLE,
    )


@contextlib.contextmanager
def _idle(_: int) -> Iterator[bool]:
    yield False


def _nvml_pairs(q: _Nvml, n: int) -> dict[tuple[int, int], bool | None]:
    handles = [q("nvmlDeviceGetHandleByIndex", i) for i in range(n)]
    out = {}
    for a in range(n):
        for b in range(n):
            if a != b:
                s = q("nvmlDeviceGetP2PStatus", handles[a], handles[b], q.m.NVML_P2P_CAPS_INDEX_READ)
                out[a, b] = None if s is None else s == q.m.NVML_P2P_STATUS_OK
    return out


def gather_hardware(nvml: Any = None, busy: Callable[[int], contextlib.AbstractContextManager] | None = None,
                    copies: Callable[[int, int], P2PPair] | None = None) -> HardwareFacts:
    """Ask NVML about every GPU. `busy(i)` is a context manager that keeps GPU i working while
    the link and clock state are read (yielding True when it did); `copies(a, b)` measures a
    peer copy (`preflight.p2p`). Both default to nothing: facts at idle, no copies."""
    if nvml is None:
        try:
            import pynvml as nvml
        except ImportError:
            return HardwareFacts(nvml_error="nvidia-ml-py is not installed (pip install nvidia-ml-py)")
    try:
        nvml.nvmlInit()
    except Exception as exc:  # NVMLError_LibraryNotFound / DriverNotLoaded: a machine without NVIDIA driver
        return HardwareFacts(nvml_error=f"NVML unavailable: {exc}")
    try:
        q = _Nvml(nvml)
        n = q("nvmlDeviceGetCount") or 0
        gpus = tuple(_gpu(q, i, busy or _idle) for i in range(n))
        statuses = _nvml_pairs(q, n)
        pairs = tuple(replace(copies(a, b), nvml_ok=ok) if copies is not None else P2PPair(a, b, ok)
                      for (a, b), ok in statuses.items())
        return HardwareFacts(gpus=gpus, pairs=pairs)
    finally:
        with contextlib.suppress(Exception):
            nvml.nvmlShutdown()

