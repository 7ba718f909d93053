"""Scenarios the embedded server does not match (yet, or on purpose).

``KEPT_DIFFERENT``: differences kept deliberately, each with the reason.
``NOT_YET_MATCHING`` (read from ``not_yet_matching.txt``): scenarios that still differ and are
work to do; ``python -m tests.conformance.report --write-not-yet`` rewrites the file from a
run. The test expects every listed scenario to differ (strict xfail), so a scenario that starts
matching must come off the list, and a matching one can never silently regress.
"""

from __future__ import annotations

from pathlib import Path

_GO_DIFF = (
    "the 422 quotes a Go struct diff (go-cmp) of kube-apiserver's internal types; kcm gives the "
    "same code, reason, field and text, then the changed JSON fields"
)
_JOB_LABELS = (
    "Kubernetes 1.27+ generated Job selector and labels (batch.kubernetes.io/controller-uid and "
    "job-name beside the legacy ones) and no 1.24 job-tracking annotation: what users' clusters "
    "do today"
)

_DEPTH = (
    "kcm's nesting limit is 256, not kube-apiserver's 10000: Python's decoders and every "
    "recursive step after them stop near the interpreter's recursion limit (1000 frames), so "
    "kcm refuses earlier, with the same message (the YAML ones name the limit)"
)

KEPT_DIFFERENT: dict[str, str] = {
    "kubectl/create-job": _JOB_LABELS,
    "kubectl/get-table-jobs": _JOB_LABELS,
    "limits/apply-too-deep-400": _DEPTH,
    "limits/nesting-300-accepted": _DEPTH,
    "limits/yaml-too-deep-400": _DEPTH,
    "storage/claim-spec-change-422": _GO_DIFF,
    "storage/persistentvolume-source-change-422": _GO_DIFF,
    "strategy/job-defaults": _JOB_LABELS,
    "validation/job-selector-change-422": _JOB_LABELS,
    "validation/job-template-change-422": (
        f"{_JOB_LABELS}; and the 422 quotes a %#v dump of the internal core.PodTemplateSpec"
    ),
    "validation/pod-ports-update-422": _GO_DIFF,
    "validation/pvc-resize-unbound-422": _GO_DIFF,
    "validation/pvc-spec-change-422": _GO_DIFF,
}

NOT_YET_FILE = Path(__file__).with_name("not_yet_matching.txt")


def _read_not_yet() -> frozenset[str]:
    if not NOT_YET_FILE.exists():
        return frozenset()
    lines = (line.strip() for line in NOT_YET_FILE.read_text().splitlines())
    return frozenset(line for line in lines if line and not line.startswith("#"))


NOT_YET_MATCHING = _read_not_yet()
