"""Data: synthetic data sets as shards on storage backends, and the resumable loader."""

from .backends import StorageSpec, parse_storage, parse_storage_list, storage_names
from .context import StorageSettings
from .context import current as storage_context
from .loader import LoaderConfig, make_loader
from .pipeline import storage_loader

__all__ = [
    "LoaderConfig",
    "make_loader",
    "StorageSettings",
    "StorageSpec",
    "parse_storage",
    "parse_storage_list",
    "storage_context",
    "storage_loader",
    "storage_names",
]
