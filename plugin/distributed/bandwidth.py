"""Collective bandwidth with the nccl-tests definitions (nccl-tests doc/PERFORMANCE.md).

    algbw = size_bytes / time_s                      # what the caller's buffer saw
    busbw = algbw * factor(op, n)                    # what each link carried, comparable
                                                     # across ops and rank counts
    factor: all_reduce 2(n-1)/n, all_gather (n-1)/n, reduce_scatter (n-1)/n, broadcast 1

Size convention (the same as nccl-tests): `size_bytes` is the *whole* buffer of the operation:
all_reduce and broadcast the buffer every rank holds; all_gather the gathered output
(n x each rank's input); reduce_scatter the input every rank holds (n x each rank's output).
So all_gather and reduce_scatter of the same size_bytes move the same data; each rank
contributes or receives size_bytes / n.

Bandwidths are reported in GB/s with GB = 1e9 bytes, as nccl-tests prints them.
"""

from __future__ import annotations

from fractions import Fraction

__all__ = ["OPS", "busbw_factor", "algbw_gbps", "busbw_gbps", "element_count"]

OPS = ("all_reduce", "all_gather", "reduce_scatter", "broadcast")


def busbw_factor(op: str, world_size: int) -> Fraction:
    """Exact bus-bandwidth factor of `op` on `world_size` ranks (a Fraction: no rounding)."""
    n = world_size
    if n < 1:
        raise ValueError(f"world_size must be >= 1, got {n}")
    if op == "all_reduce":
        return Fraction(2 * (n - 1), n)  # reduce-scatter + all-gather phases
    if op in ("all_gather", "reduce_scatter"):
        return Fraction(n - 1, n)  # each rank receives (or sends) all but its own share
    if op == "broadcast":
        return Fraction(1)
    raise ValueError(f"unknown collective {op!r}; known: {', '.join(OPS)}")


def algbw_gbps(size_bytes: int, time_s: float) -> float:
    if time_s <= 0:
        raise ValueError(f"time must be > 0 s, got {time_s}")
    return size_bytes / time_s / 1e9


def busbw_gbps(op: str, world_size: int, size_bytes: int, time_s: float) -> float:
    return algbw_gbps(size_bytes, time_s) * float(busbw_factor(op, world_size))


def element_count(op: str, size_bytes: int, world_size: int, element_size: int) -> tuple[int, int]:
    """(elements in the whole buffer, bytes actually used) for a requested size.

    all_gather / reduce_scatter split the buffer into n equal shares, so the element count is
    rounded down to a multiple of n; every op gets at least one element per rank.
    """
    step = world_size if op in ("all_gather", "reduce_scatter") else 1
    count = max(step, (size_bytes // element_size) // step * step)
    return count, count * element_size
