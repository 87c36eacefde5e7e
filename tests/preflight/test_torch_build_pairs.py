"""The Dockerfile and the CI example install a torch build PyTorch really publishes: the shipped
wheel table (torch 2.13: cu126, cu130) decides, and the base image's CUDA is the wheel's."""

import re
from pathlib import Path

from trainbench.preflight import torch_wheels
from trainbench.preflight.driver import parse_version

ROOT = Path(__file__).resolve().parents[2]


def _arg(text: str, name: str) -> str:
    return re.search(rf"^ARG {name}=(\S+)$", text, re.M).group(1)


def test_dockerfile_pairs_a_published_wheel_with_a_base_image_of_its_cuda():
    text = (ROOT / "Dockerfile").read_text()
    torch_version, tag, cuda = _arg(text, "TORCH_VERSION"), _arg(text, "TORCH_CUDA"), _arg(text, "CUDA_VERSION")
    assert torch_version == torch_wheels.TORCH_RELEASE
    assert torch_wheels.is_published(torch_version, tag), f"torch {torch_version} has no {tag} wheels"
    wheel = next(w for w in torch_wheels.published_wheels() if w.tag == tag and w.torch == (2, 13))
    assert parse_version(cuda)[:2] == wheel.cuda  # image CUDA 12.6.x <-> cu126
    assert re.search(r"^FROM nvidia/cuda:\$\{CUDA_VERSION\}-base-", text, re.M)  # the wheel bundles the libraries


def test_ci_example_installs_a_pinned_published_torch_build():
    text = (ROOT / "examples" / "github-actions-gpu.yml").read_text()
    installs = re.findall(r"pip install torch(\S*)(?: --index-url https://download.pytorch.org/whl/(\w+))?", text)
    assert installs, "the workflow installs no torch"
    for pin, tag in installs:
        assert pin == f"=={torch_wheels.TORCH_RELEASE}", f"unpinned torch: 'torch{pin}'"
        assert tag and torch_wheels.is_published(pin[2:], tag)


def test_readme_install_commands_name_published_builds_only():
    text = (ROOT / "README.md").read_text()
    for version, tag in re.findall(r"torch==(\d+\.\d+\.\d+)\S* --index-url https://download.pytorch.org/whl/(\w+)", text):
        assert torch_wheels.is_published(version, tag), f"README: torch {version} has no {tag} wheels"
    assert "whl/cu128" not in text
