"""Bad input to any subcommand: one line naming the flag, exit 2, no traceback."""

import pytest

from trainbench.cli import main

COMMON = {
    "bench": ["bench", "--workload=gpt-small"],
    "train": ["train", "--workload=gpt-small", "--steps=2"],
    "preflight": ["preflight", "--workload=gpt-small", "--no-pipeline", "--no-read-probe"],
    "data": ["data", "prepare", "--workload=gpt-small", "--to=memory://x"],
}
BAD = [
    ("bench", "--steps=0"), ("bench", "--steps=-1"), ("bench", "--warmup=-1"), ("bench", "--grad-accum=0"),
    ("bench", "--batch-size=0"), ("bench", "--precision=tf32"), ("bench", "--num-workers=-1"),
    ("bench", "--steps=ten"),
    ("train", "--steps=0"), ("train", "--steps=-1"), ("train", "--grad-accum=0"), ("train", "--batch-size=0"),
    ("train", "--precision=tf32"), ("train", "--num-workers=-1"), ("train", "--lr-warmup=-1"),
    ("train", "--keep=0"),
    ("preflight", "--grad-accum=0"), ("preflight", "--batch-size=0"), ("preflight", "--precision=tf32"),
    ("preflight", "--num-workers=-1"), ("preflight", "--overfit-steps=0"),
    ("data", "--count=0"), ("data", "--seed=-1"), ("data", "--processes=0"),
]


@pytest.mark.parametrize("command, arg", BAD, ids=[f"{c}{a}" for c, a in BAD])
def test_bad_numeric_input_is_one_line_naming_the_flag(command, arg, capsys):
    argv = COMMON[command] + [arg]
    if command == "train" and arg.startswith("--steps"):
        argv = [a for a in argv if not a.startswith("--steps")] + [arg]
    assert main(argv) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    flag = arg.split("=")[0]
    assert len(lines) == 1, err
    assert flag in lines[0] and "Traceback" not in err
