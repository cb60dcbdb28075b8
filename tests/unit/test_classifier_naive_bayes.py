"""Naive Bayes arithmetic (Eq. 2-3), decision rules and censored learning."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.naive_bayes import CategoricalNB

from yarn_advisor.classifiers.features import TaskProps, features
from yarn_advisor.classifiers.naive_bayes import NaiveBayesTaskClassifier, RunningTask


def f(app: str, stage: str = "MAP", progress: str = "0", demand: str = "1024") -> tuple[str, ...]:
    return features(TaskProps("MAPREDUCE", app, stage, progress, demand))


# The tiny example: two short sort maps, one long sort reduce, one long wc map.
TRAIN = [
    (f("sort"), False),
    (f("sort"), False),
    (f("sort", "REDUCE", "100"), True),
    (f("wc"), True),
]


def _trained(**kw: object) -> NaiveBayesTaskClassifier:
    m = NaiveBayesTaskClassifier(**kw)  # type: ignore[arg-type]
    for feats, is_long in TRAIN:
        m.learn(feats, is_long)
    return m


def test_eq2_3_hand_computed() -> None:
    # P(short) = P(long) = (2+1)/(4+2) = 1/2
    # {F}:            P(MR|s) = 3/3,  P(MR|l) = 3/3            (K = 1)
    # {F,A}:          P(sort|s) = 3/4, P(sort|l) = 2/4         (K = 2)
    # 4 finer levels: P(v|s) = 3/5,   P(v|l) = 1/5             (K = 3)
    # short ~ 1/2 * 3/4 * (3/5)^4 = 243/5000; long ~ 1/2 * 1/2 * (1/5)^4 = 2/5000
    m = _trained(temper=False)
    assert m.posterior(f("sort")) == pytest.approx(243 / 245)


def test_eq2_3_tempered_is_geometric_mean_of_levels() -> None:
    m = _trained(temper=True)
    odds = (1.5 * 3**4) ** (1 / 6)  # prior odds 1, likelihood ratios 1, 3/2, 3, 3, 3, 3
    assert m.posterior(f("sort")) == pytest.approx(odds / (1 + odds))


def test_untempered_equals_sklearn_categorical_nb() -> None:
    m = _trained(temper=False)
    query = f("sort")
    rows = [feats for feats, _ in TRAIN] + [query]
    codes = [{v: i for i, v in enumerate(dict.fromkeys(col))} for col in zip(*rows, strict=True)]
    x = np.array([[codes[j][v] for j, v in enumerate(r)] for r in rows])
    y = np.array([int(is_long) for _, is_long in TRAIN])
    nb = CategoricalNB(alpha=1.0, class_prior=[0.5, 0.5]).fit(x[:-1], y)
    assert m.posterior(query) == pytest.approx(nb.predict_proba(x[-1:])[0, 0])


def test_unknown_task_is_long() -> None:
    m = NaiveBayesTaskClassifier()
    p = m.predict(f("sort"))
    assert (p.short, p.p_short, p.reason, p.label) == (False, None, "unknown", "long")
    other_framework = features(TaskProps("SPARK", "x", "STAGE1", "?", "?"))
    assert _trained().predict(other_framework).reason == "unknown"


def test_unseen_values_back_off_to_known_levels() -> None:
    m = _trained(temper=False)
    # only {F} is known for a new app: P = prior = 1/2, and its stage has no history
    pred = m.predict(f("grep"))
    assert pred.p_short == pytest.approx(0.5) and pred.reason == "no-history"
    # a new progress bucket of a known app stage still uses {F},{F,A},{F,A,S},{F,A,S,D}
    assert m.posterior(f("sort", progress="<50")) == pytest.approx(
        1 / (1 + (1 / 2 * 1 / 2 * (1 / 5) ** 2) / (1 / 2 * 3 / 4 * (3 / 5) ** 2))
    )


def test_decision_needs_support_and_confidence() -> None:
    m = NaiveBayesTaskClassifier(min_support=3, min_confidence=0.85)
    for n in range(1, 9):
        m.learn_finished(f"t{n}", f("sort"), 5_000)
        pred = m.predict(f("sort"))
        # only shorts seen, every level has one value: P(short) = prior = (n+1)/(n+2)
        assert pred.p_short == pytest.approx((n + 1) / (n + 2))
        expected = "no-history" if n < 3 else "low-confidence" if n < 5 else "short"
        assert (pred.reason, pred.short) == (expected, expected == "short")


def test_a_reduce_needs_history_at_its_job_progress() -> None:
    # Reduces of "sort" that started after the maps ended were always short;
    # one starting while maps still run (P <50) has no history at that
    # progress: long ("no-history"), though its stage is well known.
    m = NaiveBayesTaskClassifier(min_support=3, min_confidence=0.5)
    for n in range(10):
        m.learn_finished(f"r{n}", f("sort", "REDUCE", "100"), 5_000)
        m.learn_finished(f"m{n}", f("sort", "MAP", "0"), 5_000)
    assert m.predict(f("sort", "REDUCE", "100")).short
    early = m.predict(f("sort", "REDUCE", "<50"))
    assert (early.short, early.reason) == (False, "no-history")
    assert m.predict(f("sort", "MAP", "<50")).short  # maps: the stage's history suffices
    for n in range(3):
        m.learn_finished(f"e{n}", f("sort", "REDUCE", "<50"), 5_000)
    assert m.predict(f("sort", "REDUCE", "<50")).short


def test_censored_learning_once_and_not_again_at_finish() -> None:
    m = NaiveBayesTaskClassifier(threshold_s=60)
    assert not m.learn_running("t1", f("sort"), 59_999)
    assert m.class_counts == [0, 0]
    assert m.learn_running("t1", f("sort"), 60_000)
    assert not m.learn_running("t1", f("sort"), 90_000)
    assert not m.learn_finished("t1", f("sort"), 120_000)
    assert m.class_counts == [0, 1]
    assert m.counts[f("sort")[-1]] == [0, 1]
    assert m.learn_finished("t2", f("sort"), 59_999)  # short: strictly below the threshold
    assert m.learn_finished("t3", f("sort"), 60_000)  # long: at the threshold
    assert not m.learn_finished("t3", f("sort"), 60_000)  # idempotent
    assert m.class_counts == [1, 2]


def test_observe_running_learns_censored_and_ages() -> None:
    m = NaiveBayesTaskClassifier()
    running = [RunningTask("a", f("sort"), 61_000), RunningTask("b", f("sort"), 1_000)]
    assert m.observe_running(running) == 1
    assert m.observe_running(running) == 0
    assert m.running_age_ms == {f("sort")[2]: 61_000}


def _confident(n: int = 9, longest: int = 10_000) -> NaiveBayesTaskClassifier:
    m = NaiveBayesTaskClassifier(overdue_factor=1.25, max_overdue_share=0.2)
    for i in range(n):
        m.learn_finished(f"s{i}", f("sort"), longest if i == 0 else 2_000)
        m.learn_finished(f"g{i}", f("grep"), 2_000)
    return m


def test_overdue_running_task_vetoes_its_group() -> None:
    m = _confident()
    assert m.predict(f("sort")).short
    m.observe_running([RunningTask("r", f("sort"), 12_500)])  # = 1.25 x longest short
    assert m.predict(f("sort")).short
    m.observe_running([RunningTask("r", f("sort"), 12_501)])
    assert m.predict(f("sort")).reason == "overdue"
    m.observe_running(
        [RunningTask("r", f("sort"), 12_501)]
        + [RunningTask(f"q{i}", f("grep"), 100) for i in range(4)]
    )  # 1 of 5 running tasks overdue: the share 0.2 is not above the limit
    assert m.predict(f("grep")).short


def test_cluster_wide_overdue_share_vetoes_everything() -> None:
    m = _confident()
    m.observe_running(
        [RunningTask(f"r{i}", f("sort"), 20_000) for i in range(2)]
        + [RunningTask(f"q{i}", f("grep"), 100) for i in range(3)]
    )
    assert m.overdue_share == pytest.approx(0.4)
    assert m.predict(f("grep")).reason == "cluster-overdue"


def test_predict_many_scores_each_group_once(monkeypatch: pytest.MonkeyPatch) -> None:
    m = _confident()
    calls: list[tuple[str, ...]] = []
    real = m._score
    monkeypatch.setattr(
        m, "_score", lambda feats, *rest: calls.append(tuple(feats)) or real(feats, *rest)
    )
    preds = m.predict_many([f("sort")] * 1000 + [f("grep")] * 1000 + [f("new")])
    assert len(preds) == 2001 and len(calls) == 3
    assert [p.label for p in (preds[0], preds[1000], preds[2000])] == ["short", "short", "long"]


def test_invalid_parameters() -> None:
    for kw in ({"threshold_s": 0}, {"min_confidence": 1.5}, {"alpha": 0}):
        with pytest.raises(ValueError):
            NaiveBayesTaskClassifier(**kw)  # type: ignore[arg-type]


def test_extreme_counts_do_not_overflow() -> None:
    m = NaiveBayesTaskClassifier(temper=False)
    for i in range(3000):
        m.learn(f("sort"), False)
        m.learn(f(f"app{i}"), True)
    p = m.posterior(f("sort"))
    assert p is not None and 0.0 <= p <= 1.0 and not math.isnan(p)
