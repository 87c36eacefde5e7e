"""The pytest plugin as users run it: pytester sessions, then the files they leave behind."""

import json
import subprocess
import sys

import pytest

from pytester_workloads import PAIRS_DATASET
from trainbench.records.results import SCHEMA, load_results

BENCH = """
def test_training(trainbench, tb_workload, tb_precision):
    rec = trainbench.train(tb_workload, precision=tb_precision)
    assert rec.metrics["samples_per_s"] > 0
"""

FAST = ["--steps=3", "--warmup=1", "-p", "no:cacheprovider"]


def _results(pytester):
    files = list((pytester.path / "reports" / "results").glob("*.json"))
    assert len(files) == 1, files
    return load_results(files[0])


def test_one_record_per_workload_with_the_contract_fields(pytester):
    pytester.makepyfile(test_bench=BENCH)
    result = pytester.runpytest(*FAST)
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["*trainbench: 4 records on cpu*", "--- training ---", "training?...? *batch*", "resnet50-fp32 *"])
    res = _results(pytester)
    assert res.schema == SCHEMA
    for key in ("torch", "cpu_model", "cpu_count", "gpu_profile", "start_time", "host"):
        assert key in res.environment
    assert sorted(r.workload for r in res.records) == ["bert-base", "gpt-small", "llama-1b", "resnet50"]
    for r in res.records:
        assert (r.kind, r.status, r.size, r.precision, r.gpu) == ("training", "passed", "tiny", "fp32", "cpu")
        assert r.metrics["samples_per_s"] > 0
        assert 0 <= r.metrics["stall_ratio"] <= 1
        assert r.metrics["peak_mem_bytes"] > 0 and r.config["peak_mem_kind"] == "process_rss"
        assert r.metrics["mfu"] is None  # no catalog peak for a CPU: n/a, never guessed
        assert len(r.step_times_s) == 3
        # throughput is samples / wall, not a mean of per-step rates
        assert r.metrics["samples_per_s"] == pytest.approx(r.metrics["samples_measured"] / r.metrics["wall_s"])
    md = (pytester.path / "reports" / "latest.md").read_text()
    assert "| training[...] " in md and all(f"| {w}-fp32 " in md for w in ("resnet50", "bert-base", "gpt-small",
                                                                            "llama-1b"))


def test_precision_list_parametrizes_and_cpu_skips_tf32(pytester):
    pytester.makepyfile(test_bench=BENCH)
    result = pytester.runpytest(*FAST, "-rs", "--workload=resnet50", "--precision=fp32,bf16,tf32")
    result.assert_outcomes(passed=2, skipped=1)
    result.stdout.fnmatch_lines(["*tf32 is a CUDA tensor-core mode*"])
    by_prec = {r.precision: r for r in _results(pytester).records}
    assert by_prec["tf32"].status == "skipped" and "CUDA" in by_prec["tf32"].message
    assert by_prec["bf16"].status == "passed"


def test_failed_assertion_marks_the_record_failed(pytester):
    pytester.makepyfile(test_bench="""
def test_too_fast(trainbench):
    rec = trainbench.train("gpt-small")
    assert rec.metrics["samples_per_s"] > 1e12, "not fast enough"
""")
    result = pytester.runpytest(*FAST)
    result.assert_outcomes(failed=1)
    (rec,) = _results(pytester).records
    assert rec.status == "failed" and "not fast enough" in rec.message


@pytest.mark.parametrize(
    "args, expected",
    [
        (["--gpu=t4"], "*--gpu=t4 was requested but the detected device is no CUDA GPU (CPU only)*"),
        (["--gpu=nonsense"], "*argument --gpu: unknown GPU 'nonsense'; known: auto, cpu, t4, l4*h100*h200*"),
        (["--precision=fp8"], "*--precision: unknown value(s) fp8; supported: fp32, tf32, bf16, fp16*"),
        (["--workload=resnet51"], "*unknown workload --workload=resnet51; known: bert-base, gpt-small, llama-1b, resnet50*"),
        (["--steps=0"], "*argument --steps: must be >= 1, got 0*"),
    ],
)
def test_bad_input_is_a_usage_error_without_traceback(pytester, args, expected):
    pytester.makepyfile(test_bench=BENCH)
    result = pytester.runpytest_subprocess(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([expected])
    assert "Traceback" not in result.stderr.str() + result.stdout.str()
    assert not (pytester.path / "reports").exists()


def test_user_workload_from_conftest_hook(pytester):
    pytester.makeconftest(PAIRS_DATASET + """

def pytest_trainbench_register_workloads(register):
    register(Workload(
        name="my-mlp", model=lambda size: nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2)),
        dataset=lambda size, n, seed: Pairs(n, seed),
        loss=lambda m, b: F.cross_entropy(m(b["x"]), b["y"]),
        optimizer=lambda params, size: torch.optim.SGD(params, lr=0.1),
        flops_per_sample=lambda size: 6 * (8 * 16 + 16 * 2), epoch_samples=1000, batch_size={"tiny": 4}))
""")
    pytester.makepyfile(test_bench=BENCH)
    result = pytester.runpytest(*FAST, "--workload=my-mlp")
    result.assert_outcomes(passed=1)
    (rec,) = _results(pytester).records
    assert rec.workload == "my-mlp" and rec.batch_size == 4


def test_pytest_benchmark_json_has_training_metrics_and_compare_reads_it(pytester):
    pytester.makepyfile(test_bench=BENCH)
    out = pytester.path / "bench.json"
    result = pytester.runpytest(*FAST, "--workload=bert-base", f"--benchmark-json={out}")
    result.assert_outcomes(passed=1)
    doc = json.loads(out.read_text())
    (bench,) = doc["benchmarks"]
    info = bench["extra_info"]
    assert info["workload"] == "bert-base" and info["samples_per_s"] > 0 and 0 <= info["stall_ratio"] <= 1
    assert bench["stats"]["rounds"] == 3  # one round per measured optimizer step
    (rec,) = _results(pytester).records
    assert bench["stats"]["data"] == pytest.approx(rec.step_times_s)
    cli = "from pytest_benchmark.cli import main; main()"  # the `pytest-benchmark` command
    cmp = subprocess.run([sys.executable, "-c", cli, "compare", str(out)], capture_output=True, text=True, timeout=120)
    assert cmp.returncode == 0, cmp.stderr
    assert "test_training[bert-base-fp32]" in cmp.stdout + cmp.stderr


def test_no_benchmarks_no_files(pytester):
    pytester.makepyfile(test_plain="def test_x():\n    assert 1 + 1 == 2\n")
    pytester.runpytest().assert_outcomes(passed=1)
    assert not (pytester.path / "reports").exists()


def test_weights_start_fine_tuning_from_a_local_hf_checkpoint(pytester):
    """--weights PATH: a local Hugging Face-format checkpoint, mapped onto our BERT; no download."""
    transformers = pytest.importorskip("transformers")
    from trainbench.models import bert

    tiny = bert.PRESETS["tiny"]
    hf = transformers.BertForSequenceClassification(transformers.BertConfig(
        vocab_size=tiny.vocab_size, hidden_size=tiny.n_embd, num_hidden_layers=tiny.n_layer,
        num_attention_heads=tiny.n_head, intermediate_size=tiny.intermediate_size,
        max_position_embeddings=tiny.max_position_embeddings, num_labels=tiny.num_labels))
    hf.save_pretrained(pytester.path / "ckpt")
    pytester.makepyfile(test_bench=BENCH)
    result = pytester.runpytest_subprocess(*FAST, "--workload=bert-base", f"--weights={pytester.path / 'ckpt'}")
    result.assert_outcomes(passed=1)
    (rec,) = _results(pytester).records
    assert rec.config["weights"].endswith("ckpt")

    wrong = transformers.BertModel(transformers.BertConfig(
        vocab_size=tiny.vocab_size, hidden_size=2 * tiny.n_embd, num_hidden_layers=tiny.n_layer,
        num_attention_heads=tiny.n_head, intermediate_size=tiny.intermediate_size,
        max_position_embeddings=tiny.max_position_embeddings))
    wrong.save_pretrained(pytester.path / "wrong")
    result = pytester.runpytest_subprocess(*FAST, "--workload=bert-base", f"--weights={pytester.path / 'wrong'}")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*--weights=*wrong*"])
