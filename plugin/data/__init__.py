"""Data: synthetic data sets as shards on storage backends, and the resumable loader."""

from plugin.data.backends import StorageSpec, parse_storage, parse_storage_list, storage_names
from plugin.data.context import StorageSettings
from plugin.data.context import current as storage_context
from plugin.data.loader import LoaderConfig, make_loader
from plugin.data.pipeline import storage_loader

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
