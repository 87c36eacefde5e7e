"""Does the harness measure training, not itself? The throughput the plugin reports against a
plain hand-written PyTorch loop on the same tiny model and batches, timed side by side and
interleaved (A B A B ...) so machine noise hits both alike. Prints both numbers and the ratio.
"""

import itertools
import statistics
import time

import torch
import torch.nn.functional as F

from plugin.harness.run import RunConfig, run
from reference_models import gpt

TRIALS = 5
STEPS = 30
WARMUP = 5
BATCH = 8


def _batches():
    g = torch.Generator().manual_seed(0)
    cfg = gpt.PRESETS["tiny"]
    return [{"tokens": torch.randint(0, cfg.vocab_size, (BATCH, cfg.block_size + 1), generator=g)} for _ in range(4)]


def _plain_loop(batches) -> float:
    """What a user would write: no harness, no marks, one perf_counter pair around the loop."""
    torch.manual_seed(0)
    model = gpt.build(gpt.PRESETS["tiny"])
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, betas=(0.9, 0.95), weight_decay=0.1)
    it = itertools.cycle(batches)

    def step():
        tokens = next(it)["tokens"]
        opt.zero_grad(set_to_none=True)
        logits = model(tokens[:, :-1])
        F.cross_entropy(logits.flatten(0, 1), tokens[:, 1:].flatten()).backward()
        opt.step()

    for _ in range(WARMUP):
        step()
    t0 = time.perf_counter()
    for _ in range(STEPS):
        step()
    return STEPS * BATCH / (time.perf_counter() - t0)


def test_plugin_throughput_matches_a_plain_loop(trainbench):
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # both sides alike, and no intra-op threads fighting over 2 cores
    try:
        _compare(trainbench)
    finally:
        torch.set_num_threads(threads)


def _compare(trainbench):
    batches = _batches()
    cfg = RunConfig(workload="gpt-small", size="tiny", batch_size=BATCH, steps=STEPS, warmup=WARMUP, device="cpu")
    plain, harness = [], []
    for _ in range(TRIALS):
        plain.append(_plain_loop(batches))
        harness.append(run(cfg, loader=itertools.cycle(batches)).metrics["samples_per_s"])
    ratios = [h / p for h, p in zip(harness, plain)]
    ratio = statistics.median(ratios)
    print(f"\nplain loop {statistics.median(plain):.1f} samples/s, plugin {statistics.median(harness):.1f} "
          f"samples/s, ratio {ratio:.4f} (per trial: {', '.join(f'{r:.3f}' for r in ratios)})")
    trainbench.record(kind="harness", workload="gpt-small", size="tiny", precision="fp32", batch_size=BATCH,
                      storage="preloaded", metrics={"plain_samples_per_s": statistics.median(plain),
                                                    "samples_per_s": statistics.median(harness),
                                                    "harness_over_plain": ratio},
                      config={"trials": TRIALS, "steps": STEPS, "warmup": WARMUP, "ratios": ratios})
    assert abs(ratio - 1) <= 0.03, f"plugin reports {ratio:.3f}x a plain loop's throughput"
