"""The catalog: GPU specs and peaks (data files with sources and a date)."""

from .gpus import CATALOG_DATE, GpuSpec, detect_gpu, get_gpu, gpu_catalog, gpu_names

__all__ = ["CATALOG_DATE", "GpuSpec", "detect_gpu", "get_gpu", "gpu_catalog", "gpu_names"]
