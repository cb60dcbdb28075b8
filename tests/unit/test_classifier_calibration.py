"""The calibrated confidence: the model picks the threshold at which it calls a task
short from how its own scores turned out on the cluster (classifiers/model/calibration.py)."""

from __future__ import annotations

import json

import pytest

from yarn_advisor.classifiers.model.budget import Calls
from yarn_advisor.classifiers.model.calibration import BINS, NOTHING, Calibration
from yarn_advisor.classifiers.model.naive_bayes import NaiveBayesTaskClassifier


def outcomes(cal: Calibration, p: float, short: int, long: int, stage: str = "J=x|MAP") -> None:
    cal.note(stage, p)
    for _ in range(short):
        cal.learned(stage, False)
    for _ in range(long):
        cal.learned(stage, True)
    cal.recompute()


def test_cold_start_has_no_threshold_until_the_budget_affords_a_long_task() -> None:
    cal = Calibration(budget=0.02)
    outcomes(cal, 0.97, 500, 0)
    assert cal.threshold is None  # no long task learned: none may be called short yet
    for i in range(49):
        cal.learned(f"J=other{i}|MAP", True)  # long tasks never scored
    cal.recompute()
    assert cal.threshold is None  # 0.02 x 49 < 1
    cal.learned("J=other49|MAP", True)
    cal.recompute()
    assert cal.threshold == pytest.approx(int(0.97 * BINS) / BINS)


def test_the_threshold_falls_where_scores_are_reliable_and_not_where_they_are_not() -> None:
    reliable, unreliable = Calibration(), Calibration()
    for cal, long_at_07 in ((reliable, 0), (unreliable, 40)):
        for i in range(2000):
            cal.learned(f"J=long{i}|MAP", True)  # a mostly long cluster
        outcomes(cal, 0.95, 300, 5, "J=a|MAP")
        outcomes(cal, 0.70, 300, long_at_07, "J=b|MAP")
        outcomes(cal, 0.40, 100, 100, "J=c|MAP")
    # reliable: 5 long at or above 0.7 of 2005 allowed (0.02 x 2005 - 1 = 39): the floor's bin
    assert reliable.threshold == pytest.approx(int(0.70 * BINS) / BINS)
    # unreliable: 45 long at or above 0.7 > 39.8: only 0.95 and above
    assert unreliable.threshold == pytest.approx(int(0.95 * BINS) / BINS)
    assert Calibration(floor=0.5).threshold is None


def test_a_model_calls_short_at_its_calibrated_threshold_and_predicting_changes_nothing(
        ) -> None:
    model = NaiveBayesTaskClassifier()
    feats = ("F,S,Q,U=MR|MAP|q|alice", "F,S,Q,U,A=MR|MAP|q|alice|etl",
             "F,S,Q,U,A,P=MR|MAP|q|alice|etl|100", "J,S=job_new|MAP",
             "F,S,Q,U,A,Z,D=MR|MAP|q|alice|etl|m8|r0|1024",
             "F,S,Q,U,A,R,D=MR|MAP|q|alice|etl|r0|1024")
    for i in range(6):  # alice's history: 6 short, 1 long -> P(short) about 0.81
        model.learn(tuple(f.replace("job_new", f"job_{i}") for f in feats), i == 5)
    p = model.posterior(feats)
    assert p is not None and 0.6 < p < 0.9
    assert model.predict(feats).reason == "low-confidence"  # cold start: min_confidence 0.9
    # this cluster: 3000 long tasks elsewhere; alice's stages at this score turned out short
    for i in range(3000):
        model.learn(tuple(f.replace("alice", "bob").replace("job_new", f"b{i}")
                          for f in feats), True)
    for i in range(400):
        calls = Calls()
        model.predict(tuple(f.replace("job_new", f"seen{i}") for f in feats), calls)
        model.note(calls)
        model.calibration.learned(f"J,S=seen{i}|MAP", False)
    model.calibration.recompute()
    assert model.confidence() < p
    before = json.dumps(model.to_dict(), sort_keys=True)
    calls = Calls()
    pred = model.predict(feats, calls)
    assert pred.short and pred.reason == "short"
    assert json.dumps(model.to_dict(), sort_keys=True) == before  # decide stays pure
    # checkpointed with the model: a restored model calls the same
    restored = NaiveBayesTaskClassifier.from_dict(json.loads(json.dumps(model.to_dict())))
    assert restored.confidence() == model.confidence() and restored.predict(feats).short
    assert NaiveBayesTaskClassifier(calibrate=False).confidence() == 0.9


def test_a_malformed_calibration_is_an_unusable_checkpoint() -> None:
    model = NaiveBayesTaskClassifier()
    data = model.to_dict()
    data["calibration"]["long"] = [1, 2]
    from yarn_advisor.classifiers.model.checkpoint import CheckpointError
    with pytest.raises(CheckpointError, match="calibration"):
        NaiveBayesTaskClassifier.from_dict(data)
    old = model.to_dict()
    del old["calibration"]  # a checkpoint from before: an empty record
    assert NaiveBayesTaskClassifier.from_dict(old).calibration.threshold is None


def test_realized_and_allowed_rates() -> None:
    cal = Calibration(budget=0.02)
    for i in range(100):
        cal.note(f"J=s{i}|MAP", 0.99, i < 3)
        cal.learned(f"J=s{i}|MAP", True)
    assert cal.rates() == (0.03, 0.02)


def test_calls_realized_beyond_the_budget_make_the_threshold_stricter() -> None:
    def calibrated(called: int) -> Calibration:
        cal = Calibration(budget=0.02)
        for i in range(1000):  # long tasks, `called` called short
            if i < called:
                cal.note(f"J=l{i}|MAP", 0.3, True)
            cal.learned(f"J=l{i}|MAP", True)
        outcomes(cal, 0.99, 500, 0, "J=a|MAP")
        outcomes(cal, 0.90, 500, 15, "J=b|MAP")
        outcomes(cal, 0.80, 500, 30, "J=c|MAP")
        return cal
    # within the budget: 0.02 x 1045 - 1 = 19.9 long tasks above allowed: 0.90 (15)
    assert calibrated(0).threshold == pytest.approx(0.9)
    # 30 realized of 1045 (2.9 %): aim 1.1 %, 10.8 allowed: only 0.99
    assert calibrated(30).threshold == pytest.approx(0.99)
    # over twice the budget: nothing is called short until long tasks make room
    assert calibrated(50).threshold == NOTHING


def _alice(job: str, maps: str) -> tuple[str, ...]:
    return ("F,S,Q,U=MR|MAP|q|alice", "F,S,Q,U,A=MR|MAP|q|alice|etl",
            "F,S,Q,U,A,P=MR|MAP|q|alice|etl|100", f"J,S={job}|MAP",
            f"F,S,Q,U,A,Z,D=MR|MAP|q|alice|etl|{maps}|r0|1024",
            "F,S,Q,U,A,R,D=MR|MAP|q|alice|etl|r0|1024")


def _calibrated(evidence: bool) -> NaiveBayesTaskClassifier:
    """A mostly long cluster whose calibrated threshold is 0.97, and alice, whose
    jobs recur with new sizes, every one of her tasks short."""
    model = NaiveBayesTaskClassifier(evidence=evidence)
    for i in range(12):  # one short task in each of 12 sizes
        model.learn(_alice(f"job_{i}", f"m{2 ** i}"), False)
    for i in range(3000):
        model.learn(tuple(f.replace("alice", "bob") for f in _alice(f"b{i}", "m8")), True)
    outcomes(model.calibration, 0.97, 500, 0, "J,S=seen|MAP")
    assert model.confidence() == pytest.approx(0.97)
    return model


def test_the_frequency_evidence_calls_a_user_short_whose_every_size_was_short() -> None:
    new_size = _alice("job_new", "m8192")
    with_evidence, without = _calibrated(True), _calibrated(False)
    p = without.posterior(new_size)
    assert p is not None and p < 0.97  # a new size hands the model little: held back
    assert without.predict(new_size).reason == "low-confidence"
    before = json.dumps(with_evidence.to_dict(), sort_keys=True)
    calls = Calls()
    pred = with_evidence.predict(new_size, calls)
    assert pred.short and pred.p_short == 1.0  # all 12 of alice's tasks were short
    assert json.dumps(with_evidence.to_dict(), sort_keys=True) == before  # decide stays pure
    # the calibration records the score the call was made with, in the learn step
    with_evidence.note(calls)
    with_evidence.calibration.learned("J,S=job_new|MAP", True)
    assert with_evidence.calibration.long[BINS - 1] == 1
    # one long task of alice's lowers her share under the threshold: long again
    with_evidence.learn(_alice("job_x", "m4"), True)
    assert with_evidence.predict(new_size).reason == "low-confidence"


def test_the_evidence_waits_for_the_calibration_at_cold_start() -> None:
    model = NaiveBayesTaskClassifier(evidence=True)
    for i in range(12):
        model.learn(_alice(f"job_{i}", f"m{2 ** i}"), False)
    assert model.calibration.threshold is None
    new_size = _alice("job_new", "m8192")
    pred = model.predict(new_size)  # the fixed min_confidence on the model's own score
    assert pred.p_short == model.posterior(new_size) < 1.0


def test_a_long_task_counts_as_called_short_only_if_its_stage_last_was() -> None:
    """A job whose first task was called short and whose later ones, once its own
    tasks ran long, were called long: only the long tasks learned while its last
    call was short count against the budget (counting every long task of a stage
    ever called short held the Google cell's threshold over the budget)."""
    model = NaiveBayesTaskClassifier()
    for i in range(10):  # alice's jobs of this shape: all short
        model.learn(_alice(f"job_{i}", "m8"), False)
    job = _alice("job_x", "m8")
    assert model.predict_and_note(job).short  # called short (cold start: 0.9)
    model.learn(job, True)  # ... and its first task ran long
    assert model.calibration.long_called_short == 1
    pred = model.predict_and_note(job)  # its own long task now speaks for the rest
    assert not pred.short and pred.reason == "low-confidence"
    for _ in range(10):
        model.learn(job, True)
    assert model.calibration.long_learned == 11
    assert model.calibration.long_called_short == 1
    assert model.calibration.rates()[0] == pytest.approx(1 / 11)


def test_a_learned_task_is_recorded_with_the_oldest_prediction_of_its_stage() -> None:
    """The first tasks of a job predicted long (score 0.3), a later one short (0.99):
    the first long task learned belongs to the first prediction, not to the
    stage's last score, and was not called short."""
    cal = Calibration(budget=0.02)
    cal.note("J=x|MAP", 0.3, False)
    cal.note("J=x|MAP", 0.3, False)
    cal.note("J=x|MAP", 0.99, True)
    cal.learned("J=x|MAP", True)
    cal.learned("J=x|MAP", True)
    assert cal.long[int(0.3 * BINS)] == 2 and cal.long[int(0.99 * BINS)] == 0
    assert cal.long_called_short == 0
    cal.learned("J=x|MAP", False)  # the third prediction's task
    assert cal.short[int(0.99 * BINS)] == 1
    cal.learned("J=x|MAP", True)  # more tasks than predictions: the stage's last
    assert cal.long[int(0.99 * BINS)] == 1 and cal.long_called_short == 1


def test_waiting_predictions_are_bounded_over_all_stages(monkeypatch: pytest.MonkeyPatch) -> None:
    from yarn_advisor.classifiers.model import calibration
    monkeypatch.setattr(calibration, "MAX_PENDING_TOTAL", 10)
    cal = Calibration()
    for stage in ("J=a|MAP", "J=b|MAP", "J=c|MAP"):
        for _ in range(4):
            cal.note(stage, 0.9)
    assert cal._pending == 8  # the stage least recently predicted was forgotten
    cal.learned("J=a|MAP", False)  # nothing of it is left to record
    assert sum(cal.short) == 0
    for _ in range(4):
        cal.learned("J=c|MAP", False)
    assert (cal._pending, sum(cal.short)) == (4, 4)
    cal.learned("J=c|MAP", False)  # none waiting: its last prediction's score
    assert (cal._pending, cal.short[calibration.bin_of(0.9)]) == (4, 5)


def test_a_stage_waiting_for_its_outcomes_counts_its_short_calls(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from yarn_advisor.classifiers.model import calibration
    monkeypatch.setattr(calibration, "MAX_PENDING", 3)
    cal = Calibration()
    for _ in range(3):
        cal.note("J=x|MAP", 0.6, True)
    assert cal.pending_short("J=x|MAP") == 3 and cal.pending_short("J=y|MAP") == 0
    cal.note("J=x|MAP", 0.6, False)  # the deque is full: its oldest short call is dropped
    assert cal.pending_short("J=x|MAP") == 2
    cal.learned("J=x|MAP", True)  # matched with the oldest waiting: a short call
    assert cal.pending_short("J=x|MAP") == 1 and cal.long_called_short == 1


def _more_likely_long(long_of_six: int = 4, at: float = 0.3, below: float = 0.5,
                      **params: float) -> NaiveBayesTaskClassifier:
    """A mostly long cluster (3,000 long tasks learned) calibrated to ``at``, and
    alice, ``long_of_six`` long tasks in six, scored between ``at`` and ``below``."""
    model = NaiveBayesTaskClassifier(**params)  # type: ignore[arg-type]
    for i in range(6):
        model.learn(_alice(f"job_{i}", "m8"), i >= 6 - long_of_six)
    for i in range(3000 - long_of_six):
        model.learn(tuple(f.replace("alice", "bob") for f in _alice(f"b{i}", "m8")), True)
    outcomes(model.calibration, at, 500, 0, "J,S=seen|MAP")
    assert model.confidence() == pytest.approx(at)
    p = model.posterior(_alice("job_big", "m8"))
    assert p is not None and at < p < below
    return model


def test_one_stage_holds_at_most_its_share_of_the_budget_called_short_unseen() -> None:
    """One call of a large stage risks all its tasks at one score (on the Google
    cell one job at P(short) 0.2 ran 2,541 long tasks called short): a stage
    scored under 0.5 may hold stage_share (0.2) of the long tasks the budget
    allows (0.02 x 3,000 = 60: 12 tasks) called short and not yet learned; then
    its tasks are called long until its outcomes come in, and other stages are
    not held."""
    model = _more_likely_long()
    big = _alice("job_big", "m8")
    assert all(model.predict_and_note(big).short for _ in range(12))
    before = json.dumps(model.to_dict(), sort_keys=True)
    assert model.predict(big, Calls()).reason == "stage-cap"
    assert json.dumps(model.to_dict(), sort_keys=True) == before  # decide stays pure
    assert model.predict_and_note(_alice("job_other", "m8")).short
    model.calibration.learned("J,S=job_big|MAP", False)  # one of its calls came out
    assert model.predict(big).short
    # within one batch, the batch's own short calls count
    calls = Calls()
    batch = _alice("job_batch", "m8")
    assert all(model.predict(batch, calls).short for _ in range(12))
    assert model.predict(batch, calls).reason == "stage-cap"
    # off (stage_share 0): every task of the stage is called short
    uncapped = _more_likely_long(stage_share=0.0)
    assert all(uncapped.predict_and_note(big).short for _ in range(40))


def test_the_stage_share_does_not_hold_calls_more_likely_short() -> None:
    model = _more_likely_long(long_of_six=1, at=0.7, below=0.9)  # alice about 0.81
    big = _alice("job_big", "m8")
    assert all(model.predict_and_note(big).short for _ in range(40))
    with pytest.raises(ValueError, match="stage_share"):
        NaiveBayesTaskClassifier(stage_share=1.5)
