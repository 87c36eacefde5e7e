"""A registry: a dict, a `register()` that refuses duplicates, a lookup that lists what exists."""

from __future__ import annotations

from typing import Generic, Iterator, TypeVar

from .errors import InputError

T = TypeVar("T")

__all__ = ["Registry"]


class Registry(Generic[T]):
    def __init__(self, what: str, flag: str | None = None):
        self._what = what  # e.g. "workload"
        self._flag = flag  # e.g. "--workload": named in lookup errors
        self._items: dict[str, T] = {}

    def register(self, name: str, item: T) -> T:
        if name in self._items:
            raise InputError(f"{self._what} {name!r} is already registered; pick another name")
        self._items[name] = item
        return item

    def unregister(self, name: str) -> None:
        self._items.pop(name, None)

    def get(self, name: str) -> T:
        try:
            return self._items[name]
        except KeyError:
            where = f"{self._flag}={name}" if self._flag else repr(name)
            raise InputError(
                f"unknown {self._what} {where}; known: {', '.join(self.names()) or '(none)'}"
            ) from None

    def names(self) -> list[str]:
        return sorted(self._items)

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())
