"""Bring a user's workloads into this process: import a module (or a .py file such as a
conftest.py) and call its `pytest_trainbench_register_workloads(register)` hook if it has one.

Used by `trainbench preflight --plugin ...` and by the fresh resume process, which must rebuild
the same workload the parent checked.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import sys
from pathlib import Path
from types import ModuleType

from ..errors import InputError
from ..workloads import Workload, register_workload, workloads

__all__ = ["load_plugin", "workload_sources"]

_PACKAGE_DIR = Path(__file__).resolve().parents[1]  # plugin/: built-ins need no import


def _register_once(workload: Workload) -> Workload:
    """`register` for the hook: a name registered already (module imported twice) is kept."""
    if workload.name in workloads():
        return workload
    return register_workload(workload)


def _import_file(path: Path) -> ModuleType:
    name = "trainbench_user_" + hashlib.sha1(str(path).encode()).hexdigest()[:12]
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise InputError(f"--plugin={path}: not an importable Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    sys.path.insert(0, str(path.parent))  # its own sibling imports work as under pytest
    spec.loader.exec_module(module)
    return module


def load_plugin(spec: str) -> ModuleType:
    """Import `spec` (a module name or a path to a .py file) and let it register workloads."""
    path = Path(spec)
    try:
        if spec.endswith(".py") or path.is_file():
            if not path.is_file():
                raise InputError(f"--plugin={spec}: no such file")
            module = _import_file(path.resolve())
        else:
            module = importlib.import_module(spec)
    except InputError:
        raise
    except ImportError as exc:
        raise InputError(f"--plugin={spec}: cannot import it ({exc}); pass a module on sys.path or a .py file") from None
    hook = getattr(module, "pytest_trainbench_register_workloads", None)
    if callable(hook):
        hook(register=_register_once)
    return module


def workload_sources(workload: Workload) -> list[str]:
    """Files defining the workload's functions, outside this package: what a fresh process must
    import to rebuild it (a conftest.py, the user's module)."""
    out = []
    for fn in (workload.model, workload.dataset, workload.loss, workload.optimizer):
        try:
            src = inspect.getsourcefile(fn)
        except TypeError:
            continue
        if src and _PACKAGE_DIR not in Path(src).resolve().parents and src not in out:
            out.append(src)
    return out
