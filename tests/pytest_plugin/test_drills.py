"""A plain `pytest bench/` leaves the minutes-long drills out and says so; every usual way of
asking for them brings them back."""

from pathlib import Path

import pytest

from trainbench.pytest_plugin.drills import drills_requested

MODULE = Path("bench/test_convergence.py")


@pytest.mark.parametrize("ask, wanted", [
    ({}, False),
    ({"args": ["bench/"]}, False),
    ({"markexpr": "not slow"}, False),
    ({"flag": True}, True),
    ({"keyword": "convergence"}, True),
    ({"markexpr": "drill"}, True),
    ({"args": ["bench/test_convergence.py"]}, True),
    ({"args": ["bench/test_convergence.py::test_convergence[bert-base-fp32]"]}, True),
    ({"args": ["bench/test_preemption.py"]}, False),  # another drill's file names only that one
])
def test_drills_requested(ask, wanted):
    kw = {"flag": False, "keyword": "", "markexpr": "", "args": [], **ask}
    assert drills_requested(module=MODULE, **kw) is wanted


DRILL_FILE = """
import pytest
pytestmark = pytest.mark.drill

def test_long_drill():
    pass
"""


def test_plain_run_deselects_and_says_how_to_run_them(pytester):
    pytester.makepyfile(test_drill=DRILL_FILE, test_quick="def test_quick():\n    pass\n")
    plain = pytester.runpytest(".", "-p", "no:cacheprovider")
    plain.assert_outcomes(passed=1, deselected=1)
    plain.stdout.fnmatch_lines(["*1 convergence/preemption drill(s) left out*--drills*"])
    for ask in (["--drills"], ["-m", "drill"], ["-k", "long"], ["test_drill.py"]):
        args = ask if ask[0].endswith(".py") else [".", *ask]
        result = pytester.runpytest(*args, "-v", "-p", "no:cacheprovider")
        result.stdout.fnmatch_lines(["*test_long_drill PASSED*"])
        assert "left out" not in result.stdout.str(), ask
