"""The RM plug-in's own JUnit tests (rm-plugin/src/test), run by Maven so that .ci/test
covers the Java side: the table's reader on the shared vectors, the decider's rules, the
holder's fail-open cases and the allocator on real RM scheduler objects."""

from __future__ import annotations

import re

import pytest
from rmplugin import maven_test

pytestmark = pytest.mark.cluster


def test_the_jars_junit_tests_pass() -> None:
    run = maven_test()
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-6000:]
    totals = re.findall(r"Tests run: (\d+), Failures: (\d+), Errors: (\d+)", out)
    assert totals, out[-2000:]
    run_n, failures, errors = (int(x) for x in totals[-1])
    assert run_n >= 25 and failures == 0 and errors == 0, totals[-1]
