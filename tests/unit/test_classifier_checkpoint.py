"""Checkpoint round trip; corrupted or incompatible checkpoints start fresh."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest

from yarn_advisor.classifiers.model.features import LEVEL_NAMES, TaskProps, features
from yarn_advisor.classifiers.model.naive_bayes import (
    SHAPE_LEVEL,
    CheckpointError,
    NaiveBayesTaskClassifier,
    RunningTask,
    load_or_fresh,
)


def f(app: str, stage: str = "MAP") -> tuple[str, ...]:
    return features(TaskProps(framework="MAPREDUCE", stage=stage, queue="q", user="u", app=app,
                              size="m32|r1", demand="1024", job=f"job_{app}", progress="0"))


def _model() -> NaiveBayesTaskClassifier:
    m = NaiveBayesTaskClassifier()
    for i in range(20):
        m.learn_finished(f"s{i}", f("sort"), 3_000 + i)
        m.learn_finished(f"r{i}", f("sort", "REDUCE"), 90_000)
    m.observe_running([RunningTask("c1", f("grep"), 61_000)])
    return m


def test_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "nb.json"
    m = _model()
    m.save(path)
    assert not list(tmp_path.glob("*.tmp"))
    back = NaiveBayesTaskClassifier.load(path)
    assert back.to_dict() == m.to_dict()
    assert back.counts == m.counts and any(row[0] % 1 for row in m.counts.values())  # fractions
    for q in (f("sort"), f("sort", "REDUCE"), f("grep"), f("new")):
        assert back.predict(q) == m.predict(q)
    # learned ids survive a restart: the censored task is not learned again
    assert not back.learn_finished("c1", f("grep"), 120_000)
    assert back.short_max_ms == {f("sort")[LEVEL_NAMES.index(SHAPE_LEVEL)]: 3_019}


def test_load_or_fresh_applies_configured_decision_parameters(tmp_path: Path) -> None:
    path = tmp_path / "nb.json"
    _model().save(path)
    model, warning = load_or_fresh(path, min_confidence=0.99)
    assert warning is None and model.min_confidence == 0.99 and model.class_counts == [20, 21]


def test_missing_checkpoint_is_a_quiet_fresh_start(tmp_path: Path) -> None:
    model, warning = load_or_fresh(tmp_path / "absent.json")
    assert warning is None and model.class_counts == [0, 0]


def _corrupt(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "nb.json"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.update(version=99), "version 99"),
        (lambda d: d.update(format="other"), "not a task-classifier checkpoint"),
        (lambda d: d.update(version=1), "version 1, expected 2"),  # the five-level model's
        (lambda d: d.update(levels=["F", "F,A"]), "other feature levels"),
        (lambda d: d["counts"].update({"J,S=job_x|MAP": [1, -2, 1, 1]}), "non-negative"),
        (lambda d: d["counts"].update({"J,S=job_x|MAP": [1, 2, 3]}), "non-negative"),
        (lambda d: d["counts"].update({"J,S=job_x|MAP": [1.5, float("nan"), 1, 1]}),
         "non-negative"),
        (lambda d: d["counts"].update({"J,S=job_x|MAP": [1, 1, 2, 3]}), "at most tasks"),
        (lambda d: d["counts"].update({"X=1": [1, 2, 3, 1]}), "belongs to no level"),
        (lambda d: d.update(class_counts="many"), "class_counts"),
        (lambda d: d.update(seen=[["t", "yes"]]), "'seen'"),
        (lambda d: d.pop("short_max_ms"), "short_max_ms"),
        (lambda d: d.update(threshold_s=-5), "threshold_s"),
    ],
)
def test_invalid_checkpoint_is_reported_and_model_starts_fresh(
    tmp_path: Path, mutate: object, message: str
) -> None:
    data = _model().to_dict()
    mutate(data)  # type: ignore[operator]
    path = _corrupt(tmp_path, json.dumps(data))
    with pytest.raises(CheckpointError, match=message):
        NaiveBayesTaskClassifier.load(path)
    model, warning = load_or_fresh(path)
    assert model.class_counts == [0, 0]
    assert warning is not None and str(path) in warning and "fresh" in warning


def test_truncated_and_binary_checkpoints(tmp_path: Path) -> None:
    good = json.dumps(_model().to_dict())
    for text in (good[: len(good) // 2], "\x00\xff garbage", ""):
        model, warning = load_or_fresh(_corrupt(tmp_path, text))
        assert model.class_counts == [0, 0] and warning is not None
    (tmp_path / "nb.json").write_bytes(b"\xff\xfe\x00\x01")
    assert load_or_fresh(tmp_path / "nb.json")[1] is not None


def test_checkpoint_of_another_threshold_is_not_used(tmp_path: Path) -> None:
    path = tmp_path / "nb.json"
    _model().save(path)
    model, warning = load_or_fresh(path, threshold_s=30)
    assert model.class_counts == [0, 0] and model.threshold_s == 30
    assert warning is not None and "threshold 60s" in warning


def _props(app: str, maps: str, stage: str = "MAP") -> TaskProps:
    return TaskProps(framework="MAPREDUCE", stage=stage, queue="q", user="u|v", app=app,
                     size=f"m{maps}|r4", demand="1024", job=f"job_{app}{maps}", progress="0")


def test_checkpoint_before_reduce_groups_is_migrated_exactly(tmp_path: Path) -> None:
    # Learned with R (three shapes of one reduce group, a "|" in the user name),
    # then saved as a checkpoint of before R: loading rebuilds R's rows exactly.
    m = NaiveBayesTaskClassifier(shape_correlation=0.3)
    for i in range(12):
        for maps, ms in (("8", 4_000), ("16", 5_000), ("64", 80_000)):
            m.learn_finished(f"{maps}-{i}", features(_props("etl", maps)), ms + i)
    m.learn_finished("r1", features(_props("etl", "8", "REDUCE")), 2_000)
    old = m.to_dict()
    r_prefix = LEVEL_NAMES[-1] + "="
    assert sum(k.startswith(r_prefix) for k in old["counts"]) == 2  # MAP and REDUCE groups
    old["levels"] = list(LEVEL_NAMES[:-1])
    old["counts"] = {k: v for k, v in old["counts"].items() if not k.startswith(r_prefix)}
    path = tmp_path / "old.json"
    path.write_text(json.dumps(old))
    back = NaiveBayesTaskClassifier.load(path, shape_correlation=0.3)
    assert back.counts.keys() == m.counts.keys()
    for k, row in m.counts.items():
        assert back.counts[k] == pytest.approx(row), k
    new_shape = features(_props("etl", "32"))
    assert back.predict(new_shape) == m.predict(new_shape)
    # without the migration the old checkpoint is refused (a fresh model)
    old["levels"] = ["F,S,Q,U"]
    path.write_text(json.dumps(old))
    fresh, why = load_or_fresh(path)
    assert why is not None and "other feature levels" in why and not fresh.counts


def test_params_rebuild_the_same_model() -> None:
    m = NaiveBayesTaskClassifier(threshold_s=30, min_confidence=0.8, shape_correlation=0.2,
                                 reduces_correlation=0.1, long_while_maps_wait=False)
    # every constructor parameter is there, with this model's value
    assert set(m.params()) == set(inspect.signature(NaiveBayesTaskClassifier).parameters)
    again = NaiveBayesTaskClassifier(**m.params())
    assert again.params() == m.params()
    assert (again.reduces_correlation, again.threshold_s) == (0.1, 30.0)
