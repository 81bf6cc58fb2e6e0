"""metrics.json's schema is pinned: a change to it needs a new ``METRICS_VERSION``.

``tests/data/metrics-schema.json`` holds the JSON schema of ``MetricsFile`` (what reading a
metrics.json accepts, titles and docstrings left out) and the ``METRICS_VERSION`` it was taken at.
A field added, removed, renamed or retyped without the bump makes the previous release refuse new
files with the wrong message ("not a judgelab metrics.json" instead of "upgrade judgelab"), so the
test fails until both the version and the snapshot are new. Regenerate the snapshot with

    python tests/test_metrics_schema.py --update
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from judgelab.calibration import METRICS_VERSION, MetricsFile

SNAPSHOT = Path(__file__).resolve().parent / "data" / "metrics-schema.json"
VERSION_FILE = "src/judgelab/calibration/data/_runfiles.py"
UPDATE = "python tests/test_metrics_schema.py --update"


def _shape(node: object) -> object:
    """The schema without its words: ``title`` and ``description`` strings (class names, docstrings) left out."""
    if isinstance(node, dict):
        return {k: _shape(v) for k, v in node.items() if not (k in ("title", "description") and isinstance(v, str))}
    if isinstance(node, list):
        return [_shape(v) for v in node]
    return node


def current() -> dict[str, object]:
    """The snapshot this judgelab would write: its ``METRICS_VERSION`` and ``MetricsFile``'s schema."""
    return {"metrics_version": METRICS_VERSION, "schema": _shape(MetricsFile.model_json_schema())}


def _differences(a: object, b: object, path: str = "") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            where = f"{path}/{k}"
            if k not in a:
                out.append(f"{where} added")
            elif k not in b:
                out.append(f"{where} removed")
            else:
                out += _differences(a[k], b[k], where)
        return out
    return [] if a == b else [f"{path or '/'} changed"]


def test_the_metrics_schema_changes_only_with_a_version_bump():
    pinned = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    now = current()
    changed = _differences(pinned["schema"], now["schema"])
    if changed and now["metrics_version"] == pinned["metrics_version"]:
        raise AssertionError(
            f"metrics.json's schema changed ({'; '.join(changed[:8])}) but METRICS_VERSION is still "
            f"{METRICS_VERSION}. Bump METRICS_VERSION in {VERSION_FILE} (and teach MetricsFile to read the older "
            f"version there, so old files still read), then regenerate the snapshot with: {UPDATE}")
    assert now == pinned, (
        f"METRICS_VERSION is {METRICS_VERSION} but {SNAPSHOT.name} was taken at version {pinned['metrics_version']}"
        + (f" with another schema ({'; '.join(changed[:8])})" if changed else "")
        + f": regenerate the snapshot with: {UPDATE}")


def test_the_check_sees_a_changed_field():
    pinned = json.loads(SNAPSHOT.read_text(encoding="utf-8"))["schema"]
    bumped = json.loads(json.dumps(pinned))
    bumped["$defs"]["AgreementRecord"]["properties"]["n_label_2"] = {"type": "integer"}
    assert _differences(pinned, bumped) == ["/$defs/AgreementRecord/properties/n_label_2 added"]


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        sys.exit(f"usage: {UPDATE}")
    SNAPSHOT.write_text(json.dumps(current(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {SNAPSHOT} (METRICS_VERSION {METRICS_VERSION})")
