"""Which code the remote machines run: this project at one pinned commit.

With a git remote the task's `workdir` is `{url, ref: <commit>}` and SkyPilot clones exactly
that commit. Without one the local checkout is synced as the workdir, which is only the pinned
commit when nothing is left uncommitted, so a dirty checkout is refused.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError

__all__ = ["Source", "resolve_source"]


@dataclass(frozen=True)
class Source:
    commit: str  # 40 hex digits
    repo: str | None  # git URL cloned on the machine, or None: the local checkout is synced
    path: str | None  # the local checkout (absolute) when repo is None

    def workdir(self) -> str | dict:
        return {"url": self.repo, "ref": self.commit} if self.repo else self.path


def _git(cwd: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True, check=False)
    except FileNotFoundError:
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def resolve_source(repo: str | None, commit: str | None, cwd: str | Path = ".") -> Source:
    cwd = Path(cwd).resolve()
    top = _git(cwd, "rev-parse", "--show-toplevel")
    if commit is None:
        commit = _git(cwd, "rev-parse", "HEAD") if top else None
        if commit is None:
            raise InputError(f"--commit: {cwd} is not a git checkout; pass --commit SHA and --repo URL")
    if repo is None and top:
        repo = _git(cwd, "remote", "get-url", "origin")
    if repo:
        return Source(commit=commit, repo=repo, path=None)
    if top is None:
        raise InputError("--repo: no git remote to clone on the machines; pass --repo URL")
    if _git(cwd, "rev-parse", "HEAD") != commit:
        raise InputError(f"--commit={commit}: the checkout is at another commit and has no remote to clone; "
                         f"check it out or pass --repo URL")
    if _git(cwd, "status", "--porcelain", "--untracked-files=no"):
        raise InputError("--repo: the checkout has uncommitted changes and no remote, so the synced code would "
                         "not be the pinned commit; commit them or pass --repo URL")
    return Source(commit=commit, repo=None, path=top)
