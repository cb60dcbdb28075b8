"""MapReduce connector: running jobs through the RM proxy, finished ones from JobHistory.

Fetch here, parse in :mod:`yarn_advisor.connectors.mapreduce.parse` (``parse_jobs`` and
``parse_tasks`` are the public pure functions, re-exported here). A running
job's ApplicationMaster is reached through the active RM's web proxy
(``/proxy/{app}/ws/v1/mapreduce``); a finished job through the
JobHistoryServer (``/ws/v1/history/mapreduce``).
"""

from __future__ import annotations

from typing import Any

from yarn_advisor.connectors.http import HttpClient
from yarn_advisor.connectors.rm.client import RMClient

__all__ = ["MapReduceClient"]

AM = "/ws/v1/mapreduce"
JHS = "/ws/v1/history/mapreduce"


class MapReduceClient:
    """Reads MapReduce jobs, tasks and task attempts."""

    def __init__(self, http: HttpClient, rm: RMClient, history_url: str | None) -> None:
        self.http = http
        self.rm = rm
        self.history_url = history_url.rstrip("/") if history_url else None

    def am_jobs(self, app_id: str) -> Any:
        return self.rm.proxy(app_id, f"{AM}/jobs")

    def am_tasks(self, app_id: str, job_id: str) -> Any:
        return self.rm.proxy(app_id, f"{AM}/jobs/{job_id}/tasks")

    def am_task_attempts(self, app_id: str, job_id: str, task_id: str) -> Any:
        return self.rm.proxy(app_id, f"{AM}/jobs/{job_id}/tasks/{task_id}/attempts")

    def history_job(self, job_id: str) -> Any:
        return self.http.get_json(f"{self._jhs()}{JHS}/jobs/{job_id}")

    def history_tasks(self, job_id: str) -> Any:
        return self.http.get_json(f"{self._jhs()}{JHS}/jobs/{job_id}/tasks")

    def _jhs(self) -> str:
        if self.history_url is None:
            raise ValueError("no JobHistory address configured")
        return self.history_url
