"""The back-off estimate, the decision rules and censored learning."""

from __future__ import annotations

import math

import pytest

from yarn_advisor.classifiers.model.features import TaskProps, features
from yarn_advisor.classifiers.model.naive_bayes import NaiveBayesTaskClassifier, RunningTask


def f(app: str = "sort", stage: str = "MAP", progress: str = "0", *, user: str = "alice",
      job: str = "job_1", size: str = "m64|r8", demand: str = "1024") -> tuple[str, ...]:
    return features(TaskProps(framework="MAPREDUCE", stage=stage, queue="etl", user=user,
                              app=app, size=size, demand=demand, job=job, progress=progress))


def _short_tasks(m: NaiveBayesTaskClassifier, n: int, prefix: str = "t", **kw: str) -> None:
    for i in range(n):
        m.learn_finished(f"{prefix}{i}", f(**kw), 5_000)


def test_backoff_hand_computed() -> None:
    # Four short maps of job_1. Below the job nothing else is known, so each
    # level's own tasks (those not in its finer level) are none, and the job
    # level gives (4 + a q) / (4 + a) with q the neutral 1/2: 0.9.
    m = NaiveBayesTaskClassifier(alpha=1.0, shape_correlation=0.4)
    _short_tasks(m, 4)
    assert m.posterior(f()) == pytest.approx(4.5 / 5)
    # Another job of the same shape: the shape's 4 tasks, (4 + 1/2) / 5.
    assert m.posterior(f(job="job_2")) == pytest.approx(4.5 / 5)
    # A job of another shape: the shape hands its reduce group (and that its
    # application, undiscounted) its effective number, 4 / (1 + 3 x 0.4) =
    # 1.818..., so (1.818 + 1/2) / 2.818, for another number of maps or of reduces.
    eff = 4 / (1 + 3 * 0.4)
    assert m.posterior(f(job="job_3", size="m512|r8")) == pytest.approx((eff + 0.5) / (eff + 1))
    assert m.posterior(f(job="job_4", size="m64|r1")) == pytest.approx((eff + 0.5) / (eff + 1))
    # Nothing known of another user: no estimate.
    assert m.posterior(f(user="bob", job="job_b")) is None


def test_a_new_shape_leans_on_the_shapes_with_its_number_of_reduces() -> None:
    # alice ran three short map-only-like shapes with one reduce (m16, m64,
    # m128 maps) and one long shape with 8 reduces (another configuration).
    # A new number of maps with one reduce is short: its reduce group is the
    # closer prior, (3 x 3.29 + q) / (3 x 3.29 + 1), q the application's other
    # (long) tasks. Pooled over the application instead (no reduce group),
    # the long shape pulls it to 0.73. A new shape with 8 reduces stays long.
    m = NaiveBayesTaskClassifier()
    for k, size in enumerate(("m16|r1", "m64|r1", "m128|r1")):
        _short_tasks(m, 100, prefix=f"s{k}-", job=f"job_s{k}", size=size)
    for i in range(100):
        m.learn_finished(f"l{i}", f(job="job_l", size="m64|r8"), 90_000)
    eff = 100 / (1 + 99 * 0.3)
    q_app = 0.5 / (eff + 1)
    new_maps = m.predict(f(job="job_n", size="m32|r1"))
    assert new_maps.p_short == pytest.approx((3 * eff + q_app) / (3 * eff + 1))
    assert (new_maps.short, new_maps.reason) == (True, "short")
    assert m.predict(f(job="job_r", size="m32|r8")).reason == "low-confidence"
    # reduces_correlation discounts what a reduce group hands its application
    m = NaiveBayesTaskClassifier(shape_correlation=0.4, reduces_correlation=0.5)
    _short_tasks(m, 4)
    eff = 4 / (1 + 3 * 0.4)
    eff_app = eff / (1 + (eff - 1) * 0.5)
    assert m.posterior(f(job="job_3", size="m512|r8")) == pytest.approx((eff + 0.5) / (eff + 1))
    assert m.posterior(f(job="job_4", size="m64|r1")) == pytest.approx(
        (eff_app + 0.5) / (eff_app + 1))


def test_each_task_counted_once_along_the_chain() -> None:
    # Two applications of one user: the user level's own tasks are those of
    # the other application, so a new job of "grep" (2 shorts) leans on "sort"
    # (40 longs) through the user level, not on its own tasks twice.
    m = NaiveBayesTaskClassifier(shape_correlation=0.0)
    for i in range(40):
        m.learn_finished(f"l{i}", f("sort", job="job_9"), 90_000)
    _short_tasks(m, 2, app="grep", job="job_8")
    q_user = (0 + 0.5) / (40 + 1)  # the user's other tasks: 0 short of 40, a = 1
    assert m.posterior(f("grep", job="job_7")) == pytest.approx((2 + q_user) / (2 + 1))


def test_unknown_task_is_long() -> None:
    m = NaiveBayesTaskClassifier()
    p = m.predict(f())
    assert (p.short, p.p_short, p.reason, p.label) == (False, None, "unknown", "long")
    _short_tasks(m, 9)
    other_framework = features(TaskProps("SPARK", "STAGE1", "etl", "alice", "x", "m?|r?", "?",
                                         "app_1", "?"))
    assert m.predict(other_framework).reason == "unknown"


def test_decision_needs_support_and_confidence() -> None:
    m = NaiveBayesTaskClassifier(min_support=3, min_confidence=0.89)
    for n in range(1, 9):
        m.learn_finished(f"t{n}", f(), 5_000)
        pred = m.predict(f())
        assert pred.p_short == pytest.approx((n + 0.5) / (n + 1))
        expected = "no-history" if n < 3 else "low-confidence" if n < 4 else "short"
        assert (pred.reason, pred.short) == (expected, expected == "short")


def test_a_long_heavy_cluster_does_not_silence_a_short_user() -> None:
    # 92 % of the tasks are long (four users); the short tasks are alice's.
    # Her next job is short on her own evidence: the cluster's class prior
    # does not pull it down (it did in the Eq. 2-3 posterior: P(short) < 0.9
    # for every task). A new job of a long user, or of a user never seen, is long.
    m = NaiveBayesTaskClassifier()
    for u in ("bob", "carol", "dave", "erin"):
        for j in range(5):
            for i in range(29):
                m.learn_finished(f"{u}{j}-{i}", f(user=u, job=f"job_{u}{j}"), 300_000)
    for j in range(5):
        _short_tasks(m, 10, prefix=f"a{j}-", job=f"job_a{j}")
    assert m.class_counts[1] / sum(m.class_counts) == pytest.approx(0.92, abs=0.005)
    assert m.predict(f(job="job_a9")).short
    assert m.predict(f(user="bob", job="job_b9")).reason == "low-confidence"
    assert m.predict(f(user="zoe", job="job_z1")).reason == "unknown"


def test_a_shape_of_many_tasks_weighs_as_a_few_for_a_new_shape() -> None:
    # 200 short maps of one job tell a lot about its next maps and a rerun of
    # the same shape, and little about a job of another shape (Pipe after
    # sorter on distcache_case2: same user, name and maps, half of them long).
    m = NaiveBayesTaskClassifier()
    _short_tasks(m, 200)
    assert m.predict(f()).short
    assert m.predict(f(job="job_2")).short
    other = m.predict(f(job="job_3", size="m64|r4"))
    assert other.reason == "low-confidence" and other.p_short == pytest.approx(
        (200 / (1 + 199 * 0.3) + 0.5) / (200 / (1 + 199 * 0.3) + 1))


def test_the_job_itself_corrects_a_wrong_short_call() -> None:
    # A rerun of a short shape is called short; once two of its own maps run
    # past the threshold (censored: long before they end), its next maps are long.
    m = NaiveBayesTaskClassifier()
    _short_tasks(m, 20)
    assert m.predict(f(job="job_2")).short
    m.observe_running([RunningTask(f"r{i}", f(job="job_2"), 61_000) for i in range(2)])
    pred, other = m.predict(f(job="job_2")), m.predict(f(job="job_3"))
    assert not pred.short and pred.p_short is not None and pred.p_short < 0.8
    # the shape learned two long tasks too, but a job of it weighs them less
    assert other.p_short is not None and other.p_short > pred.p_short + 0.05


def test_a_reduce_needs_history_at_its_job_progress_or_of_its_job() -> None:
    m = NaiveBayesTaskClassifier(min_support=3, min_confidence=0.5)
    for n in range(10):
        m.learn_finished(f"r{n}", f(stage="REDUCE", progress="100", job="job_0"), 5_000)
        m.learn_finished(f"m{n}", f(stage="MAP", progress="0"), 5_000)
    assert m.predict(f(stage="REDUCE", progress="100", job="job_1")).short
    early = m.predict(f(stage="REDUCE", progress="<50", job="job_1"))
    assert (early.short, early.reason) == (False, "no-history")
    assert m.predict(f(stage="MAP", progress="<50")).short  # maps: the user's history suffices
    for n in range(3):  # three reduces of job_1 itself finished short
        m.learn_finished(f"e{n}", f(stage="REDUCE", progress="100", job="job_1"), 5_000)
    assert m.predict(f(stage="REDUCE", progress="<50", job="job_1")).short


def test_a_reduce_waiting_for_maps_is_long() -> None:
    m = NaiveBayesTaskClassifier()
    for n in range(20):
        m.learn_finished(f"r{n}", f(stage="REDUCE", progress="<50+wait"), 5_000)
    assert m.predict(f(stage="REDUCE", progress="<50+wait")).reason == "maps-waiting"
    relaxed = NaiveBayesTaskClassifier(long_while_maps_wait=False)
    for n in range(20):
        relaxed.learn_finished(f"r{n}", f(stage="REDUCE", progress="<50+wait"), 5_000)
    assert relaxed.predict(f(stage="REDUCE", progress="<50+wait")).short


def test_censored_learning_once_and_not_again_at_finish() -> None:
    m = NaiveBayesTaskClassifier(threshold_s=60)
    assert not m.learn_running("t1", f(), 59_999)
    assert m.class_counts == [0, 0]
    assert m.learn_running("t1", f(), 60_000)
    assert not m.learn_running("t1", f(), 90_000)
    assert not m.learn_finished("t1", f(), 120_000)
    assert m.class_counts == [0, 1]
    assert m.counts[f()[3]] == [0, 1, 1, 0]  # the job level: [short, long, tasks, short tasks]
    assert m.learn_finished("t2", f(), 59_999)  # short: strictly below the threshold
    assert m.learn_finished("t3", f(), 60_000)  # long: at the threshold
    assert not m.learn_finished("t3", f(), 60_000)  # idempotent
    assert m.class_counts == [1, 2]


def test_observe_running_learns_censored_and_counts_late_tasks() -> None:
    m = NaiveBayesTaskClassifier(overdue_factor=1.25)
    m.learn_finished("s", f(), 2_000)  # the shape's longest short: overdue past 2.5 s
    running = [RunningTask("a", f(), 61_000), RunningTask("b", f(), 1_000),
               RunningTask("c", f(job="job_2"), 3_000)]
    assert m.observe_running(running) == 1
    assert m.observe_running(running) == 0
    # a is overdue but learned long (past the threshold): only c is pending evidence
    assert m.late_running == {"J,S=job_2|MAP": 1}
    assert m.overdue_share == pytest.approx(2 / 3)


def _confident(n: int = 9, longest: int = 10_000) -> NaiveBayesTaskClassifier:
    m = NaiveBayesTaskClassifier(overdue_factor=1.25, max_overdue_share=0.2)
    for i in range(n):
        m.learn_finished(f"s{i}", f(), longest if i == 0 else 2_000)
        m.learn_finished(f"g{i}", f("grep", job="job_g"), 2_000)
    return m


def test_overdue_running_task_counts_as_long_evidence_of_its_job() -> None:
    m = _confident()  # job_1: 9 short maps learned
    assert m.predict(f()).short
    m.observe_running([RunningTask("r", f(), 12_500)])  # = 1.25 x its shape's longest short
    assert m.predict(f()).short
    idle = [RunningTask(f"q{i}", f("grep", job="job_g"), 100) for i in range(4)]
    m.observe_running([RunningTask("r", f(), 12_501), *idle])
    late = m.predict(f())
    assert late.reason == "overdue"
    # P(short) as if the late task had been learned long (it is not learned)
    learned = _confident()
    learned.learn_finished("r", f(), 60_000)
    assert late.p_short == pytest.approx(learned.posterior(f()))
    assert m.counts == _confident().counts
    assert m.predict(f(job="job_2")).short  # another job of the shape: none of its is late
    # 1 of 5 running tasks overdue: the share 0.2 is not above the limit
    assert m.predict(f("grep", job="job_g")).short


def test_one_late_task_does_not_hold_a_job_with_much_short_evidence() -> None:
    m = _confident()
    for i in range(40):  # job_1 has now 49 short maps of its own
        m.learn_finished(f"more{i}", f(), 2_000)
    idle = [RunningTask(f"q{i}", f("grep", job="job_g"), 100) for i in range(30)]
    m.observe_running([RunningTask("r", f(), 12_501), *idle])
    assert m.predict(f()).short  # a straggler, most likely: its job stays short
    m.observe_running([*(RunningTask(f"r{i}", f(), 12_501) for i in range(6)), *idle])
    assert m.predict(f()).reason == "overdue"  # six late: a slower wave


def test_cluster_wide_overdue_share_vetoes_everything() -> None:
    m = _confident()
    m.observe_running(
        [RunningTask(f"r{i}", f(), 20_000) for i in range(2)]
        + [RunningTask(f"q{i}", f("grep", job="job_g"), 100) for i in range(3)]
    )
    assert m.overdue_share == pytest.approx(0.4)
    assert m.predict(f("grep", job="job_g")).reason == "cluster-overdue"


def test_predict_many_scores_each_group_once(monkeypatch: pytest.MonkeyPatch) -> None:
    m = _confident()
    calls: list[tuple[str, ...]] = []
    real = m._score
    monkeypatch.setattr(m, "_score", lambda feats: calls.append(tuple(feats)) or real(feats))
    preds = m.predict_many([f()] * 1000 + [f("grep", job="job_g")] * 1000 + [f(user="new")])
    assert len(preds) == 2001 and len(calls) == 3
    assert [p.label for p in (preds[0], preds[1000], preds[2000])] == ["short", "short", "long"]


def test_invalid_parameters() -> None:
    for kw in ({"threshold_s": 0}, {"min_confidence": 1.5}, {"alpha": 0},
               {"shape_correlation": -0.1}, {"shape_correlation": 1.5},
               {"reduces_correlation": -0.1}, {"reduces_correlation": 1.5}):
        with pytest.raises(ValueError):
            NaiveBayesTaskClassifier(**kw)  # type: ignore[arg-type]


def test_extreme_counts_do_not_overflow() -> None:
    m = NaiveBayesTaskClassifier()
    for i in range(3000):
        m.learn(f(), False)
        m.learn(f(f"app{i}", job=f"job_{i}"), True)
    for feats in (f(), f("app7", job="job_7"), f("new", job="job_new")):
        p = m.posterior(feats)
        assert p is not None and 0.0 <= p <= 1.0 and not math.isnan(p)


def test_job_rows_are_bounded_their_tasks_stay_in_the_shape(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("yarn_advisor.classifiers.model.naive_bayes.MAX_JOB_ROWS", 3)
    m = NaiveBayesTaskClassifier()
    for j in range(5):
        _short_tasks(m, 2, prefix=f"j{j}-", job=f"job_{j}")
    m.learn_finished("again", f(job="job_0"), 5_000)  # job_0 learned last: kept
    jobs = sorted(k for k in m.counts if k.startswith("J,S="))
    assert jobs == ["J,S=job_0|MAP", "J,S=job_3|MAP", "J,S=job_4|MAP"]
    assert m.counts[f()[-1]][2] == 11  # every task still in its shape
