"""Forks `pytest` sessions from one process that has already paid for the imports (torch, the
plugin), so a test can start and kill 20 sessions in seconds, not minutes.

Protocol, one JSON line per request on stdin: {"args": [...], "cwd": DIR, "out": FILE};
answers "<pid>" when the session started and "<pid> <exit code or -signal>" when it ended.
Started with PYTHONUNBUFFERED=1, so the session's output reaches FILE as it is written.
"""

import json
import os
import sys

import pytest
import torch  # noqa: F401  (the import every session would pay for)

import trainbench.pytest_plugin.hooks  # noqa: F401

torch.set_num_threads(1)  # a tiny model on a shared 2-core box: one thread, as tests/conftest.py

for line in sys.stdin:
    req = json.loads(line)
    fd = os.open(req["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)  # exists once pid is told
    pid = os.fork()
    if pid == 0:
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.chdir(req["cwd"])
        code = 1
        try:
            code = int(pytest.main(req["args"]))
        finally:
            os._exit(code)
    os.close(fd)
    print(pid, flush=True)
    _, status = os.waitpid(pid, 0)
    print(pid, os.waitstatus_to_exitcode(status), flush=True)
