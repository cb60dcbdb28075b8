"""The relaxed decision rule: a task just under min_confidence is called short
only while the long tasks learned cover what that could cost."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from yarn_advisor.classifiers.model.budget import MIN_LONG, Budget, group_size
from yarn_advisor.classifiers.model.checkpoint import CheckpointError
from yarn_advisor.classifiers.model.features import TaskProps, features
from yarn_advisor.classifiers.model.naive_bayes import NaiveBayesTaskClassifier

NEW_SIZE_P = (200 / (1 + 199 * 0.3) + 0.5) / (200 / (1 + 199 * 0.3) + 1)  # 0.884


def f(job: str, size: str = "m256|r8", user: str = "alice", stage: str = "MAP"
      ) -> tuple[str, ...]:
    return features(TaskProps(framework="MAPREDUCE", stage=stage, queue="etl", user=user,
                              app="job", size=size, demand="1024", job=job, progress="0"))


def _cluster(long_jobs: int, **params: float) -> NaiveBayesTaskClassifier:
    """Other users' long jobs of 29 maps each, then alice's one job of 200 short maps."""
    m = NaiveBayesTaskClassifier(**params)
    for j in range(long_jobs):
        user = ("bob", "carol", "dave", "erin")[j % 4]
        for i in range(29):
            m.learn_finished(f"l{j}-{i}", f(f"job_l{j}", user=user), 300_000)
    for i in range(200):
        m.learn_finished(f"a{i}", f("job_a"), 20_000)
    return m


def test_a_users_new_size_is_short_where_long_tasks_abound() -> None:
    # 580 long tasks learned: 1 % of them (5.8) covers the new job's expected
    # long tasks, (1 - 0.884) x 32 (at least half of its 64-bucket maps) = 3.7.
    m = _cluster(20)
    new = m.predict_and_note(f("job_n", size="m64|r1"))
    assert new.p_short == pytest.approx(NEW_SIZE_P)
    assert (new.short, new.reason) == (True, "short-within-budget")
    # the same job stage again (its next task, or the next cycle): still short
    assert m.predict_and_note(f("job_n", size="m64|r1")).short
    # off, or too few long tasks for that risk (116 x 1 % = 1.2 < 3.7): long
    assert m.predict_and_note(f("job_x", size="m64|r1")).reason == "low-confidence"  # account spent
    assert _cluster(20, relaxed_budget=0.0).predict(f("job_n", size="m64|r1")).reason == (
        "low-confidence")
    assert _cluster(4).predict(f("job_n", size="m64|r1")).reason == "low-confidence"
    # a bigger job risks more: 0.116 x 256 = 30 > 5.8
    assert _cluster(20).predict(f("job_n", size="m512|r1")).reason == "low-confidence"
    # under relaxed_confidence nothing is relaxed
    assert _cluster(20, relaxed_confidence=0.9).predict(
        f("job_n", size="m64|r1")).reason == "low-confidence"


def test_the_account_is_settled_by_what_the_called_stage_turns_out() -> None:
    m = _cluster(20)
    called = f("job_n", size="m64|r1")
    assert m.predict_and_note(called).short
    refused = f("job_m", size="m64|r8")
    assert not m.predict_and_note(refused).short  # the open stage's 3.7 leaves 2.1 of 5.8
    for i in range(32):  # job_n's maps run long: each one a long task called short
        m.learn_finished(f"n{i}", called, 300_000)
    assert m.budget.long_called_short == 32
    assert m.budget.expected == 0  # settled: no longer expected, counted
    assert not m.predict_and_note(called).short and not m.predict_and_note(refused).short


def test_a_stage_that_ran_its_tasks_closes() -> None:
    b = Budget()
    b.open("J,S=job_n|MAP", 0.1, 32)
    assert b.expected == pytest.approx(3.2)
    for _ in range(20):
        b.learned("J,S=job_n|MAP", is_long=False)
    assert b.expected == pytest.approx(1.2)
    assert not b.allows(4.0, 500, 0.01)  # 5 - 1.2 < 4
    for _ in range(12):
        b.learned("J,S=job_n|MAP", is_long=False)
    assert b.expected == 0 and not b.is_open("J,S=job_n|MAP")
    assert b.allows(4.0, 500, 0.01)
    b.learned("J,S=job_n|MAP", is_long=True)  # called short, so a long task of it counts
    b.learned("J,S=job_x|MAP", is_long=True)  # never called short: does not
    assert b.long_called_short == 1


def test_the_oldest_open_stage_goes_with_its_expected_tasks(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("yarn_advisor.classifiers.model.budget.MAX_OPEN", 2)
    b = Budget()
    for k, p_long in enumerate((0.1, 0.2, 0.4)):
        b.open(f"s{k}", p_long, 10)
    assert not b.is_open("s0") and b.expected == pytest.approx(6.0)
    assert Budget.from_json(b.to_json()).expected == pytest.approx(6.0)


def test_tasks_called_short_at_full_confidence_count_when_long() -> None:
    m = _cluster(20)
    rerun = f("job_b")  # alice's size again: P(short) 0.99
    assert m.predict_and_note(rerun).reason == "short"
    for i in range(6):
        m.learn_finished(f"b{i}", rerun, 300_000)
    assert m.budget.long_called_short == 6  # 5.8 + 6 x 1 %: spent
    assert m.predict_and_note(f("job_n", size="m64|r1")).reason == "low-confidence"


def test_the_account_survives_a_checkpoint(tmp_path: Path) -> None:
    m = _cluster(20)
    assert m.predict_and_note(f("job_n", size="m64|r1")).short
    m.learn_finished("x", f("job_n", size="m64|r1"), 300_000)
    m.save(tmp_path / "nb.json")
    back = NaiveBayesTaskClassifier.load(tmp_path / "nb.json")
    assert back.budget.to_json() == m.budget.to_json()
    assert back.budget.long_called_short == 1 and back.budget.is_open(f("job_n")[3])
    x = f("job_x", size="m64|r1")
    assert back.predict_and_note(x) == m.predict_and_note(x)
    # a checkpoint from before the account: an empty one
    data = json.loads((tmp_path / "nb.json").read_text())
    del data["budget"]
    assert NaiveBayesTaskClassifier.from_dict(data).budget.to_json() == Budget().to_json()


@pytest.mark.parametrize("bad", [
    [], {"long_called_short": -1, "called": [], "open": []},
    {"long_called_short": 0, "called": [1], "called_before": [], "open": []},
    {"long_called_short": 0, "called": [], "called_before": None, "open": []},
    {"long_called_short": 0, "called": [], "called_before": [], "open": [["J,S=j|MAP", 1.5, 3]]},
    {"long_called_short": 0, "called": [], "called_before": [], "open": [["J,S=j|MAP", 0.1]]},
    {"long_called_short": 0, "called": [], "called_before": [], "open": [["J,S=j|MAP", 0.1, 0]]},
])
def test_a_malformed_account_is_an_unusable_checkpoint(bad: object) -> None:
    data = _cluster(1).to_dict()
    data["budget"] = bad
    with pytest.raises(CheckpointError, match="budget"):
        NaiveBayesTaskClassifier.from_dict(data)


def test_group_size_is_half_the_stage_bucket() -> None:
    shape = f("j", size="m64|r8")[4]
    assert (group_size(shape, reduce=False), group_size(shape, reduce=True)) == (32, 4)
    assert group_size(f("j", size="m1|r0")[4], reduce=True) == 1
    assert group_size(f("j", size="m1|r0")[4], reduce=False) == 1
    assert group_size(f("j", size="m?|r?")[4], reduce=False) == 1
    assert group_size(f("j", size="m16|r2", user="a|b")[4], reduce=False) == 8
    assert group_size("garbled", reduce=False) == 1


def test_the_stages_called_are_a_bounded_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("yarn_advisor.classifiers.model.budget.MAX_CALLED", 3)
    b = Budget()
    for k in range(5):
        b.called(f"s{k}")
    data = b.to_json()
    assert set(data["called"]) | set(data["called_before"]) == {f"s{k}" for k in range(5)}
    b.called("s5")  # the second generation is full: the first one goes
    for k in range(6):
        b.learned(f"s{k}", is_long=True)
    assert b.long_called_short == 3  # s3, s4, s5
    assert Budget.from_json(b.to_json()).to_json() == b.to_json()


def test_the_account_opens_after_enough_long_tasks() -> None:
    b = Budget()
    assert not b.allows(0.0, MIN_LONG - 1, 1.0)
    assert b.allows(0.0, MIN_LONG, 0.01)
    assert not b.allows(1.01, MIN_LONG, 0.01)
