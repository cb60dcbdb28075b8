"""Configuration loading: defaults, overrides, and every error at once."""

from __future__ import annotations

from pathlib import Path

import pytest
from yarn_advisor.config.schema import ConfigError, from_dict, load


def test_defaults_are_safe() -> None:
    cfg = load()
    assert cfg.dry_run is True
    assert cfg.rm.tls.verify is True
    assert cfg.rm.timeout.read_s > 0
    assert cfg.rm.retry.attempts >= 1


def test_file_overrides_defaults_key_by_key(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text("rm:\n  urls: [https://rm1:8090, https://rm2:8090]\n  timeout: {read_s: 4}\n")
    cfg = load(f)
    assert cfg.rm.urls == ["https://rm1:8090", "https://rm2:8090"]
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
        "rm.urls[0]: must start with http:// or https://",
        "rm.timeout.typo: unknown key",
        "rm.timeout.read_s: must be > 0",
        "rm.auth.method: must be one of simple, kerberos, none",
        "sense.interval_s: must be float, got 'fast'",
        "sense.nm_jmx.scheme: must be http or https",
        "server.port: must be 0..65535",
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
    with pytest.raises(ConfigError, match=r"rm\.tls\.client_key: needs client_cert"):
        from_dict({"rm": {"tls": {"client_key": "/k.pem"}}})


def test_classifier_min_support_is_checked() -> None:
    assert load().classifier.min_support == 3
    with pytest.raises(ConfigError) as info:
        from_dict({"classifier": {"min_support": 0}})
    assert info.value.errors == ["classifier.min_support: must be 1..1000"]
