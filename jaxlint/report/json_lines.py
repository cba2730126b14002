"""``json-lines``: each finding as one JSON object on its own line (the ``json`` objects)."""
from __future__ import annotations

import json
from typing import TextIO

from jaxlint.engine.results import CheckResult
from jaxlint.report.json_array import finding_json


def write(result: CheckResult, out: TextIO, *, unsafe_fixes: bool = False) -> None:
    for finding in result.findings:
        out.write(json.dumps(finding_json(finding)) + "\n")
