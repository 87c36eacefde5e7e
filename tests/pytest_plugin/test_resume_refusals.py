"""A results file given to --trainbench-resume that is truncated, not JSON or of another schema
is refused with its name and the fix (one line, usage error), never a traceback."""

import json

import pytest

TEST = "def test_x(trainbench):\n    trainbench.record(kind='harness')\n"


@pytest.mark.parametrize("content, says", [
    ('{"schema": "trainbench-results/1", "environment": {', "not valid JSON"),  # truncated
    (json.dumps({"schema": "trainbench-results/0", "environment": {}, "records": []}), "schema 'trainbench-results/0'"),
    (json.dumps({"schema": "trainbench-results/1", "environment": {}, "records": [{"test": "x"}]}), "record 0 lacks"),
])
def test_bad_resume_file_is_refused_with_name_and_fix(pytester, content, says):
    pytester.makepyfile(test_x=TEST)
    (pytester.path / "r.json").write_text(content)
    result = pytester.runpytest("-p", "no:cacheprovider", "--trainbench-resume=r.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "Traceback" not in err and f"results file r.json: {says}" in err, err


def test_missing_resume_file_names_the_flag(pytester):
    pytester.makepyfile(test_x=TEST)
    result = pytester.runpytest("-p", "no:cacheprovider", "--trainbench-resume=nope.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--trainbench-resume" in result.stderr.str()
