"""The CronJob controller: creates Jobs on a cron schedule (kube-controller-manager's
``cronjob``): standard cron syntax, ``@hourly``-style descriptors and ``@every <duration>``
in ``spec.timeZone`` (else the process's local zone), concurrency policies, starting
deadlines, missed-schedule handling, suspend, history limits. See docs/controllers.md."""

from ._controller import DEFAULT_WORKERS as DEFAULT_WORKERS
from ._controller import HELP as HELP
from ._controller import NAME as NAME
from ._controller import SCHEDULED_TIMESTAMP_ANNOTATION as SCHEDULED_TIMESTAMP_ANNOTATION
from ._controller import CronJobController as CronJobController
from ._controller import add_to_manager as add_to_manager
from ._controller import job_name_for as job_name_for
from ._schedule import MAX_MISSED as MAX_MISSED
from ._schedule import Schedule as Schedule
from ._schedule import ScheduleError as ScheduleError
from ._schedule import local_time_zone as local_time_zone
from ._schedule import most_recent_time as most_recent_time
from ._schedule import parse_go_duration as parse_go_duration
from ._schedule import parse_schedule as parse_schedule
from ._schedule import resolve_time_zone as resolve_time_zone

__all__ = [
    "DEFAULT_WORKERS",
    "HELP",
    "MAX_MISSED",
    "NAME",
    "SCHEDULED_TIMESTAMP_ANNOTATION",
    "CronJobController",
    "Schedule",
    "ScheduleError",
    "add_to_manager",
    "job_name_for",
    "local_time_zone",
    "most_recent_time",
    "parse_go_duration",
    "parse_schedule",
    "resolve_time_zone",
]
