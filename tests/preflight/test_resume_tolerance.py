"""Preflight's next-loss tolerance after a resume: exact on CPU, AMP rounding allowed on a GPU."""

from trainbench.preflight.pipeline import resume_rtol


def test_preflight_next_loss_tolerance_on_a_gpu_allows_amp_rounding_but_stays_exact_on_cpu():
    assert resume_rtol("cpu", "bf16") == 0.0
    assert resume_rtol("cuda", "fp32") == 1e-5
    # a bf16 loss that a fresh process rounds one bf16 step apart (2^-8 relative) must pass
    assert resume_rtol("cuda", "bf16") >= 2 ** -8 and resume_rtol("cuda", "fp16") >= 2 ** -11
