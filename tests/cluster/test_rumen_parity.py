"""The classifier's evaluation sees a job as the live advisor does.

One real MapReduce job on the mini cluster is read two ways:

- live: the daemon's Sensor and :class:`LiveTaskClassifier`, cycle by cycle,
  from the RM, the MapReduce AM and the JobHistoryServer;
- evaluation: Hadoop's own Rumen ``TraceBuilder`` turns the job's history
  file into a trace, which ``classify-eval``'s reader and
  :func:`evaluate_jobs` replay.

Both must learn every task once, with the same run time and the same
application, stage and demand. This is what makes the figures of
``classify-eval`` on a Rumen trace stand for the daemon's: a trace of Hadoop
3.4 must parse, a task must be timed from its launch (Rumen's task
``startTime`` is when it was scheduled) and the memory asked must come out of
the job's configuration the same as out of its containers.

Public traces are often passed through Rumen's ``Anonymizer`` first; the
figures must not depend on it (it renames every distinct job name to
``job<n>``, so a name normaliser that drops digits would pool them all).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

import pytest
from yarnmini import MiniCluster, rumen_anonymize, rumen_trace

from yarn_advisor.advisor.engine.settings import load_config as load
from yarn_advisor.advisor.loop.wiring import build_sensor
from yarn_advisor.classifiers.evaluation.evaluate import EvalResult, evaluate_jobs, evaluate_traces
from yarn_advisor.classifiers.model.features import LEVEL_NAMES
from yarn_advisor.classifiers.model.live import LiveTaskClassifier
from yarn_advisor.classifiers.model.naive_bayes import NaiveBayesTaskClassifier
from yarn_advisor.classifiers.readers.rumen import RumenTrace

pytestmark = pytest.mark.cluster

MAPS, MAP_MB, REDUCE_MB = 3, 768, 512
# Levels without P: P is the job's progress when the task starts, which the
# daemon knows at its last cycle before the start and the evaluation exactly.
SAME_LEVELS = tuple(i for i, name in enumerate(LEVEL_NAMES) if "P" not in name)


class LearningLog(NaiveBayesTaskClassifier):
    """The model, noting what it learned from each finished task."""

    def __init__(self) -> None:
        super().__init__()
        self.learned: dict[str, tuple[tuple[str, ...], int]] = {}

    def learn_finished(self, task_id: str, feats: Sequence[str], duration_ms: int) -> bool:
        task = task_id.split(":")[-1]  # the evaluation prefixes ids with an index
        self.learned[task] = (tuple(feats), duration_ms)
        return super().learn_finished(task_id, feats, duration_ms)


def _wait_for_history(cluster: MiniCluster, job_id: str, timeout: float = 60) -> Path:
    """The job's history file, once the JobHistoryServer moved it (and its conf) to done."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = list(cluster.history_done_dir.rglob(f"{job_id}-*.jhist"))
        confs = list(cluster.history_done_dir.rglob(f"{job_id}_conf.xml"))
        if found and confs:
            return found[0]
        time.sleep(1.0)
    raise AssertionError(f"no history file of {job_id} under {cluster.history_done_dir}")


def test_live_learning_and_rumen_evaluation_agree(mini_cluster: MiniCluster,
                                                  tmp_path: Path) -> None:
    job = mini_cluster.sleep_job(queue="etl", maps=MAPS, reduces=1, map_ms=3000,
                                 reduce_ms=1000, map_mb=MAP_MB, reduce_mb=REDUCE_MB)
    job_id = job.app_id.replace("application_", "job_")
    of_job = job_id.removeprefix("job_")  # in every task id of the job
    cfg = load(None, {"rm": {"urls": [mini_cluster.rm_url],
                             "history_url": mini_cluster.jhs_url}})
    sensor, live_log = build_sensor(cfg), LearningLog()
    live = LiveTaskClassifier(live_log)
    deadline = time.monotonic() + 240
    while len([t for t in live_log.learned if of_job in t]) < MAPS + 1:
        assert time.monotonic() < deadline, f"live path learned only {live_log.learned}"
        live.update(sensor.sense(int(time.time() * 1000)))
        time.sleep(1.0)
    assert job.wait(timeout=120) == 0

    _wait_for_history(mini_cluster, job_id)
    trace = RumenTrace(rumen_trace(mini_cluster.history_done_dir, tmp_path / "trace.json"))
    jobs = [j for j in trace if j.job_id == job_id]
    assert trace.problem is None
    assert len(jobs) == 1
    rumen_job = jobs[0]
    assert rumen_job.name == "Sleep job" and rumen_job.user
    assert (rumen_job.memory_mb("MAP"), rumen_job.memory_mb("REDUCE")) == (MAP_MB, REDUCE_MB)
    # Rumen's task startTime is when the AM scheduled the task; the launch is later.
    reduce = rumen_job.reduces[0]
    assert reduce.start_ms < reduce.launch_ms

    eval_log = LearningLog()
    evaluate_jobs(jobs, eval_log, EvalResult([str(trace.path)], 60.0, 0.9))
    live_tasks = {t: v for t, v in live_log.learned.items() if of_job in t}
    assert sorted(eval_log.learned) == sorted(live_tasks)
    assert len(live_tasks) == MAPS + 1
    for task, (live_feats, live_ms) in live_tasks.items():
        eval_feats, eval_ms = eval_log.learned[task]
        assert eval_ms == live_ms, (task, eval_ms, live_ms)
        assert [eval_feats[i] for i in SAME_LEVELS] == [live_feats[i] for i in SAME_LEVELS]
        demand = MAP_MB if "_m_" in task else REDUCE_MB
        assert eval_feats[-1].endswith(f"|{1024 if demand > 512 else 512}"), eval_feats
        if "_m_" in task:  # the first wave: no map finished, as both paths know
            assert eval_feats == live_feats


@pytest.mark.parametrize("name", ["distcache_case5_trace", "trace_7m"])
def test_an_anonymized_trace_evaluates_as_the_original(hadoop_jars: str, fixture_data: Path,
                                                       tmp_path: Path, name: str) -> None:
    original = fixture_data / f"hadoop-gridmix-system-traces/{name}.json.gz"
    anonymized = rumen_anonymize(original, tmp_path / "anonymized.json")
    names = {j.name for j in RumenTrace(anonymized)}
    assert names and all(n.startswith("job") for n in names)  # really anonymized
    assert len(names) == len({j.name for j in RumenTrace(original)})
    before, after = evaluate_traces([original]), evaluate_traces([anonymized])
    assert after.confusion == before.confusion
    assert (after.cold, after.first_seen) == (before.cold, before.first_seen)
