"""``nexus test --junit FILE``: the verdicts as JUnit XML, the format CI systems read.

One ``testcase`` per scenario and matrix point (``classname`` the scenario file, ``name`` the scenario and
its point); a failed one holds one ``failure`` whose message names each failed check, the sim time it first
failed and by how much, an error one an ``error`` with the reason and its run folder, a skipped one a
``skipped`` with the reason. A PX4 case's reproducible setup and each ``when`` fault's firing (tick and time,
or never) are the case's ``properties``.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from pathlib import Path

from nexus.scenario.fault_trigger import fault_line
from nexus.scenario.runner import ERROR, FAILED, SKIPPED, summary_counts


def _failure_message(case) -> str:
    parts = []
    for result in case.failed_results():
        over = "over" if result.check.side == "max" else "under"
        unit = f" {result.check.unit}" if result.check.unit != "-" else ""
        by = (f"{result.excess:.4g}{unit} {over} its bound {result.check.bound:g}{unit}"
              if math.isfinite(result.excess) else f"never within its bound {result.check.bound:g}{unit}")
        parts.append(f"{result.check.name}: first failed at {result.first_time:.3f} s (tick {result.first_tick}), {by}")
    return "; ".join(parts)


def junit_xml(cases, wall_s: float) -> bytes:
    counts = summary_counts(cases)
    suites = ET.Element("testsuites", name="nexus test", tests=str(len(cases)), failures=str(counts[FAILED]),
                        errors=str(counts[ERROR]), skipped=str(counts[SKIPPED]), time=f"{wall_s:.3f}")
    suite = ET.SubElement(suites, "testsuite", name="nexus test", tests=str(len(cases)),
                          failures=str(counts[FAILED]), errors=str(counts[ERROR]), skipped=str(counts[SKIPPED]),
                          time=f"{wall_s:.3f}")
    for case in cases:
        element = ET.SubElement(suite, "testcase", classname=str(case.scenario.path),
                                name=f"{case.scenario.name}[{case.key}]",
                                time=f"{case.wall_s:.3f}" if case.wall_s == case.wall_s else "0")
        properties = ET.SubElement(element, "properties")
        if case.reproducible is not None:  # a PX4 scenario: flown in the reproducible setup or not
            ET.SubElement(properties, "property", name="px4_reproducible", value=str(case.reproducible).lower())
        for fault in case.faults:  # each `when` fault: when it fired, or that it never did
            ET.SubElement(properties, "property", name=f"fault[{fault['fault']}]", value=fault_line(fault))
        if not len(properties):
            element.remove(properties)
        if case.verdict == FAILED:
            failure = ET.SubElement(element, "failure", message=_failure_message(case), type="check")
            failure.text = "\n".join(r.message() for r in case.results)
        elif case.verdict == ERROR:
            ET.SubElement(element, "error", message=case.reason, type="run")
        elif case.verdict == SKIPPED:
            ET.SubElement(element, "skipped", message=case.reason)
        if case.folder is not None:
            ET.SubElement(element, "system-out").text = f"run folder: {case.folder}"
    ET.indent(suites)
    return ET.tostring(suites, encoding="utf-8", xml_declaration=True)


def write_junit(path: Path, cases, wall_s: float) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(junit_xml(cases, wall_s))
    return path
