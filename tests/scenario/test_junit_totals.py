"""The JUnit file's root ``<testsuites>`` carries the run's totals, as its one ``<testsuite>`` does.

CI systems differ in which they read (GitLab and Jenkins read the suites, some dashboards only the root), so
both must count the same. Nine cases of the shipped hover scenario at seeds 0..8 with verdicts set as
``nexus test`` sets them after judging each run: 3 passed, 3 failed, 2 errors, 1 skipped, so every total is a
different number and a count read from the wrong verdict (or a total left out) shows: tests = 9, failures = 3,
errors = 2, skipped = 1, time = the wall time given, 12.5 s.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from nexus.scenario.checks import CheckResult
from nexus.scenario.junit import junit_xml, write_junit
from nexus.scenario.runner import Case
from nexus.scenario.spec import load

ROOT = Path(__file__).resolve().parents[2]
VERDICTS = ["passed", "failed", "error", "skipped", "failed", "failed", "error", "passed", "passed"]


@pytest.fixture(scope="module")
def cases() -> list[Case]:
    scenario = load(ROOT / "scenarios" / "takeoff_hover_land.toml")
    check = next(c for c in scenario.checks if c.measure == "altitude_error")
    out = []
    for seed, verdict in enumerate(VERDICTS):
        case = Case(scenario, {"seed": seed}, point_id=f"p{seed}", verdict=verdict, wall_s=1.0)
        if verdict == "failed":  # 0.41 m at 2.712 s (tick 678) against its 0.15 m bound
            case.results = [CheckResult(check, False, 0.41, first_time=2.712, first_tick=678, excess=0.26)]
        elif verdict == "passed":
            case.results = [CheckResult(check, True, 0.05)]
        else:
            case.reason = "no readable run.json" if verdict == "error" else "no PX4 binary"
        out.append(case)
    return out


def totals(element) -> tuple:
    return tuple(element.get(name) for name in ("tests", "failures", "errors", "skipped", "time"))


def test_the_root_testsuites_counts_every_verdict(cases, tmp_path):
    root = ET.parse(write_junit(tmp_path / "junit.xml", cases, 12.5)).getroot()
    assert root.tag == "testsuites"
    assert totals(root) == ("9", "3", "2", "1", "12.500")


def test_the_root_and_its_suite_agree_and_the_suite_holds_every_case(cases):
    root = ET.fromstring(junit_xml(cases, 12.5))
    (suite,) = root.findall("testsuite")
    assert totals(suite) == ("9", "3", "2", "1", "12.500")
    assert len(suite.findall("testcase")) == 9
    # The elements under the cases agree with the totals: 3 failures, 2 errors, 1 skipped.
    assert [len(suite.findall(f"testcase/{kind}")) for kind in ("failure", "error", "skipped")] == [3, 2, 1]
