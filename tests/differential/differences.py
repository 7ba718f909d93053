"""Scenarios where kcm's controllers end in a different state from the recorded Go
kube-controller-manager: deliberately (``KEPT_DIFFERENT``, each with the reason: kcm follows
newer Kubernetes than the 1.24 recording in places), or not yet (``not_yet_matching.txt``,
rewritten by ``python -m tests.differential.report --write-not-yet``). The test expects every
kept scenario to differ (strict xfail); a not-yet one may match (timing can make it match in one
run and not the next), and then passes."""

from __future__ import annotations

from pathlib import Path

_JOB_API = (
    "Jobs as Kubernetes 1.27+ writes them, not 1.24: the generated selector and labels "
    '(+ "batch.kubernetes.io/controller-uid": "<uid>", "batch.kubernetes.io/job-name" '
    "beside the legacy controller-uid/job-name on the Job, its template and its pods; selector "
    '- "controller-uid" + "batch.kubernetes.io/controller-uid"), which users select '
    'pods by today; no 1.24 beta annotation (- "batch.kubernetes.io/job-tracking": "": '
    'kcm always tracks with finalizers, GA in 1.26); status + "ready": 0 (JobReadyPods, '
    'alpha and off in 1.24, GA in 1.29) and + "terminating": 0 (1.28+)'
)
KEPT_DIFFERENT: dict[str, str] = {
    "cronjob/runs-on-schedule": (
        f'{_JOB_API}; and the 1.28+ annotation + "batch.kubernetes.io/'
        'cronjob-scheduled-timestamp" on the Jobs a CronJob creates (when the run was due)'
    ),
    "job/completes": (
        f'{_JOB_API}; and the 1.31+ success criteria: Complete carries + "reason": '
        '"CompletionsReached" and its message, beside + "type": "SuccessCriteriaMet" '
        "(the Job is done before its pods are gone)"
    ),
    "job/fails-at-backoff-limit": (
        f'{_JOB_API}; and the 1.31+ + "type": "FailureTarget" ("reason": '
        '"BackoffLimitExceeded") beside Failed (the Job has failed before its pods are gone)'
    ),
    "job/indexed": (
        f'{_JOB_API}; and the 1.28+ pod label + "batch.kubernetes.io/'
        'job-completion-index" (PodIndexLabel) beside the annotation'
    ),
    "job/suspended": _JOB_API,
    "ttlafterfinished/deletes-finished-job": _JOB_API,
}

NOT_YET_FILE = Path(__file__).with_name("not_yet_matching.txt")


def _read() -> frozenset[str]:
    if not NOT_YET_FILE.exists():
        return frozenset()
    lines = (line.strip() for line in NOT_YET_FILE.read_text().splitlines())
    return frozenset(line for line in lines if line and not line.startswith("#"))


NOT_YET_MATCHING = _read()
