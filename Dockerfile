# pytest-trainbench for GPU runs: NVIDIA's CUDA base image + a torch build for the same CUDA.
#
#   docker build -t trainbench .
#   docker run --rm --gpus all --ipc=host -v "$PWD/reports:/opt/trainbench/reports" trainbench
#   docker run --rm --gpus all --ipc=host -v "$PWD/reports:/opt/trainbench/reports" trainbench \
#       pytest bench/ --gpu=a100-80g --precision=bf16
#
# CUDA_VERSION (the base image) and TORCH_CUDA (the torch wheel index) move together, and the
# pair must be one PyTorch publishes for TORCH_VERSION (plugin/preflight/torch_wheels.csv; torch
# 2.13 ships cu126 and cu130 only -- no cu128 since 2.12). cu126 on CUDA 12.6 is the default:
# it keeps every catalog GPU (CUDA 13 drops Volta, i.e. V100) and runs on drivers >= 560.28.03
# (>= 525.60.13 under minor-version compatibility), while cu130 needs driver >= 580.65.06.
# For a CUDA 13 host: --build-arg CUDA_VERSION=13.0.2 --build-arg TORCH_CUDA=cu130.
# A `-base` image is enough: the torch wheel bundles cuBLAS, cuDNN and NCCL.
# The host driver must support that CUDA version (`nvidia-smi` shows "CUDA Version"; minimum
# drivers are in plugin/preflight/cuda_min_driver.csv). The base image's NVIDIA_REQUIRE_CUDA makes
# the NVIDIA Container Toolkit refuse to start the container on older drivers; `trainbench
# preflight` (the default command) checks the match again from inside and says what to change.
ARG CUDA_VERSION=12.6.3
FROM nvidia/cuda:${CUDA_VERSION}-base-ubuntu24.04

ARG TORCH_VERSION=2.13.0
ARG TORCH_CUDA=cu126

ENV DEBIAN_FRONTEND=noninteractive \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONUNBUFFERED=1 \
    VIRTUAL_ENV=/opt/venv \
    PATH=/opt/venv/bin:$PATH

RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 python3-venv git ca-certificates \
    && rm -rf /var/lib/apt/lists/*

# torch first, from the index of its CUDA build, so `pip install .` does not pick another one
RUN python3 -m venv "$VIRTUAL_ENV" \
    && pip install "torch==${TORCH_VERSION}" --index-url "https://download.pytorch.org/whl/${TORCH_CUDA}"

WORKDIR /opt/trainbench
COPY pyproject.toml README.md ./
COPY plugin ./plugin
COPY reference_models ./reference_models
RUN pip install .
COPY bench ./bench

# results land in /opt/trainbench/reports (mount it); /data is the default data directory
RUN mkdir -p /data reports
VOLUME ["/opt/trainbench/reports"]
CMD ["trainbench", "preflight", "--data-dir=/data", "--results=reports/preflight.json"]
