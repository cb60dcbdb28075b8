"""MapReduce's REST APIs: running jobs through the RM's proxy to their
ApplicationMaster, finished ones from the JobHistory server. ``client``
fetches, ``parse`` holds the pure parsers (also importable from here:
``connectors.mapreduce.parse_jobs``, ``parse_tasks``)."""

from yarn_advisor.connectors.mapreduce.parse import (
    parse_jobs,
    parse_task_attempts,
    parse_tasks,
    task_with_attempt,
)

__all__ = ["parse_jobs", "parse_task_attempts", "parse_tasks", "task_with_attempt"]
