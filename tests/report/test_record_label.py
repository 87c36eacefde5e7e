"""Labels tell apart the records one test writes: one per world size for DDP and FSDP, one per
op and message size for a collective sweep."""

from trainbench.records.record import Record
from trainbench.report.cells import record_label


def _rec(kind, world, **config):
    return Record(test="bench/test_x.py::test_x[llama-1b-fp32]", kind=kind, workload="llama-1b",
                  world_size=world, config=config)


def test_fsdp_and_ddp_world_sizes_have_their_own_labels():
    for kind in ("fsdp", "ddp"):
        one, two = record_label(_rec(kind, 1)), record_label(_rec(kind, 2))
        assert one != two and one.endswith(" x1") and two.endswith(" x2")


def test_collective_label_names_op_and_size_and_training_label_is_the_test_id():
    assert record_label(_rec("collective", 2, op="all_reduce", size_bytes=1024)).endswith(" all_reduce 1.0 KiB")
    assert record_label(_rec("training", None)) == "bench/test_x.py::test_x[llama-1b-fp32]"
