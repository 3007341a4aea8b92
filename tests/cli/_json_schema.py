"""docs/json-lines.schema.json for the tests of ``--json`` (docs/cli.md
"JSON lines"): every stdout line of a command parsed and validated."""
import json
import os

import jsonschema

from .._processes import REPO_ROOT

with open(os.path.join(REPO_ROOT, "docs", "json-lines.schema.json")) as _f:
    SCHEMA = json.load(_f)
LINE = jsonschema.Draft202012Validator(SCHEMA)
DECISION = jsonschema.Draft202012Validator(SCHEMA["$defs"]["decision"])


def lines_of(process):
    """Every stdout line, parsed and checked against the schema."""
    out = []
    for raw in process.stdout.decode("utf-8").splitlines():
        line = json.loads(raw)
        LINE.validate(line)
        out.append(line)
    return out
