"""``junit``: JUnit XML for CI test reports; one testsuite per file, one failing testcase per
finding (ruff's layout; a clean run is one passing testcase)."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from itertools import groupby
from pathlib import PurePath
from typing import TextIO

from jaxlint.engine.results import CheckResult
from jaxlint.text import relative

# Characters XML 1.0 cannot hold (e.g. ANSI escapes in a JAX error): replaced, not written.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _clean(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


def write(result: CheckResult, out: TextIO, *, unsafe_fixes: bool = False) -> None:
    findings = result.findings
    root = ET.Element("testsuites", name="jaxlint", tests=str(max(1, len(findings))),
                      failures=str(len(findings)), errors="0")
    if not findings:
        suite = ET.SubElement(root, "testsuite", name="jaxlint", tests="1", failures="0", errors="0",
                              skipped="0", package="org.jaxlint")
        ET.SubElement(suite, "testcase", name="No errors found", classname="jaxlint")
    for path, group in groupby(findings, key=lambda f: f.path):
        cases = list(group)
        name = relative(path)
        suite = ET.SubElement(root, "testsuite", name=_clean(name), tests=str(len(cases)),
                              failures=str(len(cases)), errors="0", skipped="0", package="org.jaxlint")
        classname = _clean(PurePath(name).with_suffix("").as_posix())
        for finding in cases:
            line, column = finding.span.start_line, finding.span.start_col + 1
            case = ET.SubElement(suite, "testcase", name=f"org.jaxlint.{finding.code}",
                                 classname=classname, line=str(line), column=str(column))
            failure = ET.SubElement(case, "failure", message=_clean(finding.message), type=finding.code)
            failure.text = _clean(f"line {line}, col {column}, {finding.message}")
    ET.indent(root, space="    ")
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    out.write(ET.tostring(root, encoding="unicode"))
    out.write("\n")
