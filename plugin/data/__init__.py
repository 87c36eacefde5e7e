"""Data: synthetic data sets, storage backends, shards and the resumable loader."""

from plugin.data.loader import LoaderConfig, make_loader

__all__ = ["LoaderConfig", "make_loader"]
