"""What object storage costs beside compute: request and egress prices (`object_storage.csv`,
dated and sourced) turned into dollars per epoch of reading shards and per checkpoint saved.

Request classes (S3's): PUT, COPY, POST and LIST bill at `put_per_1000`; GET and HEAD at
`get_per_1000`; DELETE is free. Egress is per GB leaving the region (or the cloud); reading from
an instance in the bucket's own region is free, which is the usual training setup.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

__all__ = ["ObjectStoragePrice", "object_storage_price", "checkpoint_cost", "epoch_read_cost",
           "CHECKPOINT_REQUESTS"]

# One save by checkpoint/object_store.py: (PUT-class, GET-class) requests besides multipart parts.
# PUT temp + COPY + PUT latest + LIST .tmp + LIST prefix (prune) = 5; HEAD temp + GET temp
# (verify) + HEAD final + GET latest (prune reads the pointer) = 4. DELETEs are free.
CHECKPOINT_REQUESTS = (5, 4)
MULTIPART_BYTES = 50 * 2**20  # s3fs's default block size: uploads above it go in parts of this size


@dataclass(frozen=True)
class ObjectStoragePrice:
    cloud: str
    region: str
    put_per_1000: float
    get_per_1000: float
    egress_internet_per_gb: float
    egress_cross_region_per_gb: float
    egress_same_region_per_gb: float
    source: str

    def egress_per_gb(self, where: str) -> float:
        return {"same-region": self.egress_same_region_per_gb, "cross-region": self.egress_cross_region_per_gb,
                "internet": self.egress_internet_per_gb}[where]


@lru_cache(maxsize=1)
def _rows() -> tuple[ObjectStoragePrice, ...]:
    text = resources.files(__package__).joinpath("object_storage.csv").read_text(encoding="utf-8")
    lines = [l for l in text.splitlines() if l.strip() and not l.startswith("#")]
    out = []
    for row in csv.DictReader(lines):
        nums = {k: float(v) for k, v in row.items() if k not in ("cloud", "region", "source")}
        out.append(ObjectStoragePrice(row["cloud"], row["region"], source=row["source"], **nums))
    return tuple(out)


def object_storage_price(cloud: str = "aws") -> ObjectStoragePrice:
    return next(r for r in _rows() if r.cloud == cloud)


def checkpoint_cost(ckpt_bytes: int, price: ObjectStoragePrice | None = None) -> float:
    """USD in requests for one checkpoint save (the verify read-back is same-region: free)."""
    p = price or object_storage_price()
    parts = math.ceil(ckpt_bytes / MULTIPART_BYTES) + 1 if ckpt_bytes > MULTIPART_BYTES else 0  # + complete
    put, get = CHECKPOINT_REQUESTS
    return ((put + parts) * p.put_per_1000 + get * p.get_per_1000) / 1000.0


def epoch_read_cost(dataset_bytes: int, shards: int, where: str = "same-region", read_block_bytes: int = MULTIPART_BYTES,
                    cached: bool = False, price: ObjectStoragePrice | None = None) -> float:
    """USD per epoch of reading `shards` shard objects totalling `dataset_bytes`: one ranged GET
    per block of each shard plus egress; `cached` (s3+cache, warm) reads nothing after epoch 1."""
    if cached:
        return 0.0
    p = price or object_storage_price()
    per_shard = math.ceil(dataset_bytes / max(1, shards) / read_block_bytes)
    gets = shards * max(1, per_shard)
    return gets * p.get_per_1000 / 1000.0 + dataset_bytes / 1e9 * p.egress_per_gb(where)
