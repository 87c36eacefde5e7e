"""Pipeline items on deliberately broken user workloads: each defect is caught by the matching
item, with a fix that names it; a sound workload passes every item."""

from pathlib import Path

import pytest

from trainbench.preflight import FAIL, NA, PASS, PIPELINE_ITEMS, PipelineConfig, pipeline_checks
from trainbench.errors import InputError
from trainbench.workloads import register_workload, workloads

import test_preflight_workloads as user

pytestmark = pytest.mark.filterwarnings("ignore:'set_vital' is deprecated:UserWarning")

HERE = Path(__file__).resolve().parent
PLUGIN = str(HERE / "test_preflight_workloads.py")


@pytest.fixture(scope="module", autouse=True)
def _registered():
    for w in user.WORKLOADS:
        if w.name not in workloads():
            register_workload(w)
    yield
    for w in user.WORKLOADS:
        workloads().unregister(w.name)


def run(name, *items, **kw):
    cfg = PipelineConfig(workload=name, device="cpu", items=items or None, plugins=(PLUGIN,), **kw)
    return {c.name: c for c in pipeline_checks(cfg)}


def test_sound_workload_passes_every_item():
    checks = run("pf-good")
    assert list(checks) == list(PIPELINE_ITEMS)
    assert {n: c.status for n, c in checks.items()} == dict.fromkeys(PIPELINE_ITEMS, PASS), checks
    assert checks["next_loss"].metrics["max_rel_diff"] == 0.0  # bitwise on a CPU
    assert checks["grad_accum"].metrics["rel_diff"] < 1e-5


@pytest.mark.parametrize("name", ["pf-lr-too-small", "pf-redrawn-labels"])
def test_loss_that_never_falls_fails_overfit(name):
    checks = run(name, "loader", "forward", "backward", "optimizer_step", "overfit")
    assert checks["overfit"].status == FAIL
    assert "learning rate" in checks["overfit"].fix and "labels" in checks["overfit"].fix
    # the step itself works: only the overfit item can see this defect
    assert checks["optimizer_step"].status == PASS


def test_sum_instead_of_mean_fails_grad_accum_with_the_factor():
    c = run("pf-sum-loss", "loader", "forward", "grad_accum", grad_accum=4)["grad_accum"]
    assert c.status == FAIL
    assert c.metrics["norm_ratio"] == pytest.approx(1 / 4, rel=1e-4)
    assert "4x too small" in c.fix and "sums over the batch" in c.fix


def test_batchnorm_is_compared_in_eval_mode_and_says_so():
    c = run("pf-batchnorm", "loader", "forward", "grad_accum")["grad_accum"]
    assert c.status == PASS and "BatchNorm1d" in c.reason and "eval mode" in c.reason


def test_buffer_missing_from_the_checkpoint_is_caught():
    checks = run("pf-unsaved-buffer", "loader", "checkpoint_save", "resume", "next_loss")
    save, nxt = checks["checkpoint_save"], checks["next_loss"]
    assert save.status == FAIL and "scale" in save.reason and "persistent=True" in save.fix
    assert checks["resume"].status == PASS  # the fresh process runs...
    assert nxt.status == FAIL and "persistent=False" in nxt.fix  # ...but does not continue the same run
    assert nxt.metrics["max_rel_diff"] > 1e-3


def test_the_same_buffer_saved_resumes_bitwise():
    checks = run("pf-saved-buffer", "loader", "checkpoint_save", "resume", "next_loss")
    assert [c.status for c in checks.values()] == [PASS] * 4
    assert "bitwise identical" in checks["next_loss"].reason


def test_fp16_overflow_is_caught_while_fp32_is_fine():
    checks = run("pf-fp16-overflow", "loader", "forward", "fp16")
    assert checks["forward"].status == PASS
    assert checks["fp16"].status == FAIL and "65504" in checks["fp16"].fix


def test_a_raising_workload_is_a_failed_item_and_dependents_are_na():
    def bad_loss(model, batch):
        raise RuntimeError("shape mismatch in my head")

    import dataclasses

    register_workload(dataclasses.replace(user.WORKLOADS[0], name="pf-raises", loss=bad_loss))
    try:
        checks = run("pf-raises", "loader", "forward", "backward", "overfit")
    finally:
        workloads().unregister("pf-raises")
    assert checks["forward"].status == FAIL and "RuntimeError: shape mismatch in my head" in checks["forward"].reason
    assert checks["backward"].status == NA and checks["overfit"].status == NA


def test_unknown_item_is_an_input_error():
    with pytest.raises(InputError, match="unknown preflight item.*known: loader"):
        run("pf-good", "lodaer")


def test_precision_the_device_cannot_run_fails_forward_and_skips_the_rest():
    checks = run("pf-good", precision="tf32")  # tf32 is a CUDA tensor-core mode
    assert checks["forward"].status == FAIL and "tf32" in checks["forward"].reason
    assert {c.status for n, c in checks.items() if n != "forward"} == {NA}


def test_a_model_that_cannot_be_built_still_yields_the_whole_checklist(tmp_path):
    import dataclasses

    from trainbench.preflight import Facts, PreflightConfig, run_preflight

    def broken_model(size):
        raise ValueError("no such layer size")

    register_workload(dataclasses.replace(user.WORKLOADS[0], name="pf-unbuildable", model=broken_model))
    facts = Facts(torch_version="2.13.0+cpu", torch_cuda=None, cuda_available=False, data_dir=str(tmp_path),
                  disk_free_bytes=50 * 10**9, shm_bytes=8 * 10**9)
    try:
        result = run_preflight(PreflightConfig(workloads=("pf-unbuildable",), data_dir=str(tmp_path)), facts=facts)
    finally:
        workloads().unregister("pf-unbuildable")
    checks = {c.name: c for c in result.checks}
    assert result.exit_code == 1
    assert checks["disk"].status == PASS  # no checkpoint size estimate, still judged
    assert checks["forward"].status == FAIL and "no such layer size" in checks["forward"].reason
    assert checks["loader"].status == PASS and checks["overfit"].status == NA
