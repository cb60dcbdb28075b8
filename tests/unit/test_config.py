"""Configuration loading: defaults, overrides, every error at once, and the docs agree."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from yarn_advisor.advisor.engine.settings import load_config as load
from yarn_advisor.advisor.engine.settings import with_overrides
from yarn_advisor.config.base import ConfigError
from yarn_advisor.config.schema import DEFAULTS, AdvisorConfig, from_dict

ROOT = Path(__file__).resolve().parents[2]


def test_defaults_are_safe() -> None:
    cfg = load()
    assert cfg.dry_run is True
    assert cfg.rm.tls.verify is True
    assert cfg.rm.timeout.read_s > 0
    assert cfg.rm.retry.attempts >= 1
    assert {n: s.enabled for n, s in cfg.policies.sections().items()} == {
        "haste": True, "matchmaking": True, "opera": True, "anacrac": True, "prism": True}


def test_file_overrides_defaults_key_by_key(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text("rm:\n  urls: [https://rm1:8090, https://rm2:8090]\n  timeout: {read_s: 4}\n")
    cfg = load(f)
    assert cfg.rm.urls == ("https://rm1:8090", "https://rm2:8090")
    assert cfg.rm.timeout.read_s == 4.0
    assert cfg.rm.timeout.connect_s == 3.0  # untouched default kept


def test_all_errors_reported_at_once_with_key_paths() -> None:
    with pytest.raises(ConfigError) as info:
        from_dict({
            "rm": {"urls": ["rm1:8088"], "timeout": {"read_s": -1, "typo": 1},
                   "auth": {"method": "ntlm"}},
            "sense": {"interval_s": "fast", "nm_jmx": {"scheme": "ftp"}},
            "server": {"port": 70000},
            "bogus": True,
        })
    errors = info.value.errors
    bogus = next(e for e in errors if e.startswith("bogus: unknown key (known: "))
    assert "dry_run, " in bogus and " rm, " in bogus
    expected = [
        "rm.urls: urls[0]: must start with http:// or https://",
        "rm.timeout.typo: unknown key (known: connect_s, read_s, total_s)",
        "rm.timeout.read_s: must be > 0",
        "rm.auth.method: must be one of 'simple', 'kerberos' or 'none', got 'ntlm'",
        "sense.interval_s: must be float, got 'fast'",
        "sense.nm_jmx.scheme: must be one of 'http' or 'https', got 'ftp'",
        "server.port: must be <= 65535",
    ]
    for want in expected:
        assert any(e.startswith(want) for e in errors), (want, errors)
    assert len(errors) == 8


def test_wrong_types_are_not_coerced() -> None:
    with pytest.raises(ConfigError) as info:
        from_dict({"dry_run": "no", "sense": {"fetch_workers": 2.5}})
    assert sorted(info.value.errors) == [
        "dry_run: must be bool, got 'no'",
        "sense.fetch_workers: must be int, got 2.5",
    ]


def test_infinite_and_nan_numbers_are_rejected() -> None:
    with pytest.raises(ConfigError) as info:
        from_dict({"sense": {"interval_s": float("inf")},
                   "rm": {"timeout": {"read_s": float("nan")}}})
    assert sorted(info.value.errors) == ["rm.timeout.read_s: must be a finite number",
                                         "sense.interval_s: must be a finite number"]


def test_unreadable_or_non_mapping_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("rm: [unclosed\n")
    with pytest.raises(ConfigError, match="cannot read"):
        load(bad)
    listy = tmp_path / "list.yaml"
    listy.write_text("- a\n- b\n")
    with pytest.raises(ConfigError, match="top level must be a mapping"):
        load(listy)
    with pytest.raises(ConfigError, match="cannot read"):
        load(tmp_path / "missing.yaml")


def test_client_key_without_cert_is_rejected() -> None:
    with pytest.raises(ConfigError, match=r"rm\.tls: client_key needs client_cert"):
        from_dict({"rm": {"tls": {"client_key": "/k.pem"}}})


def test_classifier_min_support_is_checked() -> None:
    assert load().classifier.min_support == 3
    with pytest.raises(ConfigError) as info:
        from_dict({"classifier": {"min_support": 0}})
    assert info.value.errors == ["classifier.min_support: must be >= 1"]


def test_a_validated_config_is_immutable_and_can_be_derived() -> None:
    cfg = load()
    with pytest.raises(ValueError):
        cfg.dry_run = False  # type: ignore[misc]
    enforce = with_overrides(cfg, {"dry_run": False, "policies": {"haste": {"dry_run": True}}})
    assert (enforce.dry_run, enforce.policies.sections()["haste"].dry_run) == (False, True)
    assert cfg.dry_run is True and enforce.fingerprint() != cfg.fingerprint()
    with pytest.raises(ConfigError, match=r"policies\.haste\.params\.beta"):
        with_overrides(cfg, {"policies": {"haste": {"params": {"beta": [1]}}}})


def _leaves(data: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(data, dict) and data:
        out: dict[str, Any] = {}
        for k, v in data.items():
            out.update(_leaves(v, f"{prefix}.{k}" if prefix else k))
        return out
    return {prefix: data}


def test_defaults_yaml_is_exactly_the_models_defaults() -> None:
    """config/defaults.yaml documents each key; it must say what the loader does."""
    documented = yaml.safe_load(DEFAULTS.read_text())
    actual = AdvisorConfig().model_dump(mode="json", by_alias=True)
    assert _leaves(documented) == _leaves(actual)


def test_the_configuration_reference_names_only_real_keys() -> None:
    """Every key in the configuration table (docs/configuration.md) exists in the
    model, and every section of the model appears in the table."""
    readme = (ROOT / "docs" / "configuration.md").read_text()
    table = readme[readme.index("## Configuration reference"):]
    end = table.find("\n## ", 5)
    table = table if end < 0 else table[:end]
    keys = {k for k in _leaves(AdvisorConfig().model_dump(by_alias=True))}
    sections = {k.split(".")[0] for k in keys}
    named = set()
    for cell in re.findall(r"^\| `([^`]+)`", table, re.M):
        base, _, rest = cell.partition(" / ")
        named.add(base)
        stem = base.rsplit(".", 1)[0]
        named |= {f"{stem}{part.strip().strip('`')}" for part in rest.split("/") if part.strip()}
    for key in named:
        if key.endswith(".*") or key == "policies":
            continue
        assert any(k == key or k.startswith(key + ".") for k in keys), key
    assert sections <= {n.split(".")[0] for n in named}


@pytest.mark.parametrize(("content", "problem"), [
    (b"rm:\n  urls: [http://r\xe9m:8088]\n", "cannot read: 'utf-8' codec can't decode"),
    (b"", "the file is empty"),
    (b"# only a comment\n", "the file is empty"),
    (b"dry_run: true\ndry_run: false\n", "duplicate key 'dry_run'"),
    (b"rm:\n  timeout: {read_s: 3, read_s: 4}\n", "duplicate key 'read_s'"),
])
def test_a_file_the_operator_may_not_mean_is_refused(tmp_path: Path, content: bytes,
                                                     problem: str) -> None:
    f = tmp_path / "advisor.yaml"
    f.write_bytes(content)
    with pytest.raises(ConfigError) as info:
        load(f)
    assert problem in str(info.value)


def test_a_bad_config_file_is_one_clear_message_and_exit_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from yarn_advisor.advisor.cli.main import main

    f = tmp_path / "advisor.yaml"
    f.write_bytes(b"\xff\xfe bad")
    assert main(["run", "--config", str(f), "--once"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("yarn-advisor: invalid configuration:") and "Traceback" not in err
