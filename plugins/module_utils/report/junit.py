# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A comparison verdict (compare.py) as JUnit XML, one testcase per checked metric.

CI systems (Jenkins, GitLab, GitHub test reporters, AWX artifacts) show each threshold as
a test; the failure message names the metric, the values and the limit.
"""
from __future__ import annotations
from typing import Any
import xml.etree.ElementTree as ET


def to_junit(verdict: dict[str, Any], suite_name: str | None = None) -> str:
    """JUnit XML text (UTF-8 declaration included) for a verdict."""
    name = suite_name or "storageperf.k8s compare %s" % (verdict.get("benchmark") or "")
    suites = ET.Element("testsuites", name=name.strip(), tests=str(verdict["checks"]),
                        failures=str(verdict["failures"]), errors="0")
    suite = ET.SubElement(suites, "testsuite", name=name.strip(), tests=str(verdict["checks"]),
                          failures=str(verdict["failures"]), errors="0", skipped="0")
    props = ET.SubElement(suite, "properties")
    for key in ("baseline", "candidate", "benchmark"):
        ET.SubElement(props, "property", name=key, value=str(verdict.get(key) or ""))
    classname = "storageperf.k8s.compare.%s" % (verdict.get("benchmark") or "result")
    for row in verdict["rows"]:
        case = ET.SubElement(suite, "testcase", classname=classname, name=row["metric"])
        detail = "baseline %s, candidate %s, change %s, limit %s" % (
            row["baseline_text"], row["candidate_text"], row["change_text"], row["limit"])
        if row["passed"]:
            ET.SubElement(case, "system-out").text = detail
        else:
            failure = ET.SubElement(case, "failure", message="%s: %s" % (row["metric"], row["reason"]),
                                    type="threshold")
            failure.text = detail
    body = ET.tostring(suites, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"
