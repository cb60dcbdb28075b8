"""A user's short jobs make the next job of that user, of a name never seen, short.

On the mini cluster, through the daemon's real Sensor and TaskClassifier
(predict, then learn, each cycle): three short SleepJobs of one user, each
of its own name, are learned from the RM, the MapReduce AM and the
JobHistoryServer; then a fourth job of that user, of a new name and another
size, has its pending maps predicted short before any of its own tasks ended,
from the user level alone; a job submitted at the same time by a user never
seen is predicted long. The user comes from the RM's application (submitted
with HADOOP_USER_NAME), the queue as the RM reports it (``root.default``).
"""

from __future__ import annotations

import contextlib
import time
import urllib.error
import urllib.request
import uuid

import pytest
from yarnmini import MiniCluster, SubmittedApp

from yarn_advisor.advisor.engine.classify import TaskClassifier
from yarn_advisor.advisor.engine.settings import load_config as load
from yarn_advisor.advisor.loop.wiring import build_sensor
from yarn_advisor.classifiers.model.live import GroupPrediction
from yarn_advisor.classifiers.model.naive_bayes import JOB_LEVEL

pytestmark = pytest.mark.cluster

MAP_PRIORITY = 20  # the MapReduce AM's priority for map requests
TEACHING_MAPS = 4
NEW_MAPS = 16  # more than the cluster runs at once beside the other job: some wait


class Daemon:
    """The daemon's classifier steps each cycle: sense, predict, then learn."""

    def __init__(self, cluster: MiniCluster) -> None:
        cfg = load(None, {"rm": {"urls": [cluster.rm_url], "history_url": cluster.jhs_url}})
        self.sensor = build_sensor(cfg)
        self.clf = TaskClassifier.load(None, threshold_s=60.0, min_confidence=0.9,
                                       min_support=3)

    def cycle(self, watched: tuple[str, ...] = ()) -> tuple[dict[tuple[str, int], GroupPrediction],
                                                           set[str]]:
        """This cycle's group predictions, and which watched apps' own map
        tasks the model knew when it predicted them."""
        snapshot = self.sensor.sense(int(time.time() * 1000))
        predictions = self.clf.predict(snapshot)
        known = {app for app in watched if _own(app) in self.clf.live.model.counts}
        self.clf.learn(snapshot, predictions)
        return dict(predictions.groups), known

    def learned(self) -> int:
        """Tasks learned, short and long: on a loaded machine a 1 s map's JVM can take
        past the 60 s threshold, and that map is learned long (seen: 11 short, 1 long)."""
        return sum(self.clf.live.model.class_counts)


def _kill(cluster: MiniCluster, job: SubmittedApp) -> None:
    """Kill an application through the RM (and its waiting client)."""
    req = urllib.request.Request(
        f"{cluster.rm_url}/ws/v1/cluster/apps/{job.app_id}/state?user.name=yarn-advisor",
        data=b'{"state":"KILLED"}', method="PUT",
        headers={"Content-Type": "application/json", "X-XSRF-HEADER": "t"})
    with contextlib.suppress(urllib.error.HTTPError):  # already finished
        urllib.request.urlopen(req, timeout=10).close()
    job.proc.kill()
    job.proc.wait(timeout=30)


def _own(app_id: str) -> str:
    """The job level's feature of an app's maps."""
    return f"{JOB_LEVEL}=" + app_id.replace("application_", "job_") + "|MAP"


@pytest.mark.slow  # a user's teaching jobs, then new ones, on the real cluster: minutes
def test_a_users_short_jobs_make_a_new_name_short(mini_cluster: MiniCluster) -> None:
    tag = uuid.uuid4().hex[:6]
    user, stranger = f"alice-{tag}", f"bob-{tag}"
    daemon = Daemon(mini_cluster)
    teaching = [mini_cluster.sleep_job(maps=TEACHING_MAPS, reduces=0, map_ms=1000,
                                       name=f"etl-{n}-{tag}", user=user) for n in "abc"]
    deadline = time.monotonic() + 180
    while daemon.learned() < 3 * TEACHING_MAPS:  # every teaching map learned
        assert time.monotonic() < deadline, f"learned {daemon.clf.live.model.class_counts}"
        daemon.cycle()
        time.sleep(1.0)
    assert all(job.wait(timeout=60) == 0 for job in teaching)

    new = mini_cluster.sleep_job(maps=NEW_MAPS, reduces=0, map_ms=1000,
                                 name=f"report-{tag}", user=user)
    other = mini_cluster.sleep_job(maps=NEW_MAPS, reduces=0, map_ms=1000,
                                   name=f"report-{tag}", user=stranger)
    try:
        first = _first_map_predictions(daemon, [new, other])
    finally:  # their outcome is not needed: free the cluster for the next tests
        for job in (new, other):
            _kill(mini_cluster, job)
    mine, theirs = first[new.app_id], first[other.app_id]
    assert (mine.stage, mine.prediction.label) == ("MAP", "short"), mine
    assert mine.prediction.p_short is not None and mine.prediction.p_short >= 0.9
    assert (theirs.prediction.label, theirs.prediction.reason) == ("long", "unknown"), theirs


def _first_map_predictions(daemon: Daemon, apps: list[SubmittedApp],
                           timeout: float = 150) -> dict[str, GroupPrediction]:
    """Each app's first map-group prediction, made before any of its own tasks
    was learned (so it rests on what other jobs taught)."""
    found: dict[str, GroupPrediction] = {}
    watched = tuple(app.app_id for app in apps)
    deadline = time.monotonic() + timeout
    while len(found) < len(apps):
        assert time.monotonic() < deadline, f"no pending maps seen; found {found}"
        groups, known = daemon.cycle(watched)
        for app_id in watched:
            group = groups.get((app_id, MAP_PRIORITY))
            if app_id in found or group is None or group.pending <= 0:
                continue
            assert app_id not in known, f"{app_id}'s own tasks were learned first"
            found[app_id] = group
        time.sleep(0.5)
    return found
