"""Object-storage prices: the packaged row is dated and sourced, and the per-checkpoint and
per-epoch arithmetic counts the requests the store really makes."""

import pytest

from trainbench.catalog.object_storage import (CHECKPOINT_REQUESTS, MULTIPART_BYTES, checkpoint_cost,
                                               epoch_read_cost, object_storage_price)


def test_packaged_row_has_a_source():
    p = object_storage_price("aws")
    assert p.source.startswith("https://aws.amazon.com/s3/pricing/")
    assert p.put_per_1000 > p.get_per_1000 > 0


def test_checkpoint_cost_counts_the_publish_requests_and_parts():
    p = object_storage_price()
    small = checkpoint_cost(2_000_000, p)
    put, get = CHECKPOINT_REQUESTS
    assert small == pytest.approx((put * p.put_per_1000 + get * p.get_per_1000) / 1000)
    big = checkpoint_cost(10 * MULTIPART_BYTES, p)  # 10 parts + completion on top
    assert big == pytest.approx(small + 11 * p.put_per_1000 / 1000)


def test_epoch_cost_same_region_is_requests_only_and_cache_is_free():
    p = object_storage_price()
    gb = 150 * 10**9  # an ImageNet-sized epoch in 1000 shards
    same = epoch_read_cost(gb, 1000, price=p)
    assert same == pytest.approx(1000 * 3 * p.get_per_1000 / 1000)  # 150 MB shards: 3 blocks each
    assert epoch_read_cost(gb, 1000, "internet", price=p) == pytest.approx(same + 150 * p.egress_internet_per_gb)
    assert epoch_read_cost(gb, 1000, cached=True, price=p) == 0.0
