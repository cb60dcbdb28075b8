"""The Helm chart: lints, renders with default and with full values, validates.

Built-in kinds are validated strictly (unknown fields rejected) and offline
against the Kubernetes 1.30 schemas that kubernetes-validate bundles; the
Prometheus Operator's ServiceMonitor and PrometheusRule are decoded strictly
into the operator's own Go types (tests/deploy/crdcheck). The rendered
advisor configuration is loaded by the advisor's own configuration loader.
"""

from __future__ import annotations

import json
import re
import subprocess
import tomllib
from collections import Counter
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from conftest import CHART, ROOT, tool

from yarn_advisor.advisor.engine.settings import load_config

pytestmark = pytest.mark.deploy

K8S_VERSION = "1.30.0"
FULL_VALUES = Path(__file__).with_name("values-full.yaml")
OPERATOR_KINDS = {"ServiceMonitor", "PrometheusRule"}


def helm(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([tool("helm"), *args], capture_output=True, text=True, timeout=120,
                          check=False)


def render(*args: str) -> list[dict[str, Any]]:
    done = helm("template", "advisor", str(CHART), "--namespace", "hadoop",
                "--kube-version", K8S_VERSION, *args)
    assert done.returncode == 0, done.stderr
    return [d for d in yaml.safe_load_all(done.stdout) if d]


def one(docs: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    found = [d for d in docs if d["kind"] == kind]
    assert len(found) == 1, f"{len(found)} {kind}"
    return found[0]


def advisor_config(docs: list[dict[str, Any]]) -> dict[str, Any]:
    maps = [d for d in docs if d["kind"] == "ConfigMap" and "advisor.yaml" in d["data"]]
    assert len(maps) == 1
    return dict(yaml.safe_load(maps[0]["data"]["advisor.yaml"]))


@pytest.fixture(scope="module")
def default_docs() -> list[dict[str, Any]]:
    return render()


@pytest.fixture(scope="module")
def full_docs() -> list[dict[str, Any]]:
    return render("-f", str(FULL_VALUES))


@pytest.mark.parametrize("values", [[], ["-f", str(FULL_VALUES)]], ids=["default", "full"])
def test_helm_lint_strict(values: list[str]) -> None:
    done = helm("lint", "--strict", str(CHART), *values)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 chart(s) failed" in done.stdout


@pytest.mark.parametrize("which", ["default", "full"])
def test_manifests_validate_strictly_against_kubernetes_1_30(
        which: str, default_docs: list[dict[str, Any]], full_docs: list[dict[str, Any]],
        tmp_path: Path) -> None:
    docs = default_docs if which == "default" else full_docs
    builtin = [d for d in docs if d["kind"] not in OPERATOR_KINDS]
    for doc in builtin:
        kubernetes_validate.validate(doc, K8S_VERSION, strict=True)  # raises if invalid
    custom = [d for d in docs if d["kind"] in OPERATOR_KINDS]
    if which == "default":
        assert not custom, "the operator's kinds are optional, off by default"
        return
    assert {d["kind"] for d in custom} == OPERATOR_KINDS
    path = tmp_path / "custom.yaml"
    path.write_text(yaml.safe_dump_all(custom))
    done = subprocess.run([tool("crdcheck"), str(path)], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert "2 custom resources valid" in done.stdout


def test_strict_validation_rejects_an_unknown_field(default_docs: list[dict[str, Any]]) -> None:
    """The validator really is strict: a misspelt field fails."""
    deployment = json.loads(json.dumps(one(default_docs, "Deployment")))
    deployment["spec"]["template"]["spec"]["containers"][0]["readinesProbe"] = {}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, K8S_VERSION, strict=True)


def test_default_objects(default_docs: list[dict[str, Any]]) -> None:
    kinds = Counter(d["kind"] for d in default_docs)
    assert kinds == {"Deployment": 1, "Service": 1, "ServiceAccount": 1,
                     "PodDisruptionBudget": 1, "ConfigMap": 6}


def test_one_writer_by_default(default_docs: list[dict[str, Any]]) -> None:
    spec = one(default_docs, "Deployment")["spec"]
    assert spec["replicas"] == 1 and spec["strategy"]["type"] == "Recreate"
    assert one(default_docs, "PodDisruptionBudget")["spec"] == {
        "maxUnavailable": 1, "selector": spec["selector"]}


def test_two_advisors_need_ha(full_docs: list[dict[str, Any]]) -> None:
    spec = one(full_docs, "Deployment")["spec"]
    assert spec["replicas"] == 2 and spec["strategy"]["type"] == "RollingUpdate"
    assert one(full_docs, "PodDisruptionBudget")["spec"]["minAvailable"] == 1
    done = helm("template", "advisor", str(CHART), "--set", "replicaCount=2")
    assert done.returncode != 0 and "needs ha.enabled" in done.stderr


def test_pod_is_hardened_and_probed_on_the_health_endpoint(
        default_docs: list[dict[str, Any]]) -> None:
    pod = one(default_docs, "Deployment")["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["automountServiceAccountToken"] is False
    (container,) = pod["containers"]
    sc = container["securityContext"]
    assert sc["readOnlyRootFilesystem"] is True and sc["allowPrivilegeEscalation"] is False
    assert sc["capabilities"]["drop"] == ["ALL"]
    assert container["readinessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert container["livenessProbe"]["httpGet"]["port"] == "http"
    assert container["resources"]["requests"]["cpu"] and container["resources"]["requests"][
        "memory"]
    writable = {m["mountPath"] for m in container["volumeMounts"] if not m.get("readOnly")}
    assert writable == {"/var/lib/yarn-advisor", "/tmp"}


def test_image_tag_is_the_package_version(default_docs: list[dict[str, Any]]) -> None:
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    assert chart["appVersion"] == version
    image = one(default_docs, "Deployment")["spec"]["template"]["spec"]["containers"][0]["image"]
    assert image == f"yarn-advisor:{version}"


@pytest.mark.parametrize("which", ["default", "full"])
def test_rendered_config_is_accepted_by_the_advisor(
        which: str, default_docs: list[dict[str, Any]], full_docs: list[dict[str, Any]],
        tmp_path: Path) -> None:
    docs = default_docs if which == "default" else full_docs
    cfg = advisor_config(docs)
    port = one(docs, "Service")["spec"]["ports"][0]["port"]
    path = tmp_path / "advisor.yaml"
    path.write_text(yaml.safe_dump(cfg))
    loaded = load_config(path)  # ConfigError on any unknown key or bad value (policies too)
    assert (loaded.server.host, loaded.server.port) == ("0.0.0.0", port)
    assert str(loaded.state_dir) == "/var/lib/yarn-advisor"
    assert (loaded.ha is not None) == (which == "full")  # ha.enabled renders ha.zookeeper
    if which == "full":
        assert loaded.ha is not None
        zk = loaded.ha.zookeeper
        assert (zk.hosts, zk.path, zk.session_timeout_s) == (
            "zk-0.zk:2181,zk-1.zk:2181,zk-2.zk:2181", "/yarn-advisor/prod", 15)
        assert loaded.rm.auth.method == "kerberos"
        assert loaded.rm.auth.principal == "yarn-advisor@EXAMPLE.COM"
        mounted = {m["mountPath"] for m in one(docs, "Deployment")["spec"]["template"]["spec"]
                   ["containers"][0]["volumeMounts"]}
        assert {"/etc/yarn-advisor/tls", "/etc/yarn-advisor/kerberos"} <= mounted
        assert str(loaded.rm.tls.ca_bundle) == "/etc/yarn-advisor/tls/ca.crt"
        assert str(loaded.rm.tls.client_key) == "/etc/yarn-advisor/tls/tls.key"


def test_dashboards_ship_as_sidecar_config_maps(full_docs: list[dict[str, Any]]) -> None:
    shipped = {}
    for doc in full_docs:
        if doc["kind"] == "ConfigMap" and doc["metadata"]["labels"].get("grafana_dashboard"):
            assert doc["metadata"]["labels"]["grafana_dashboard"] == "1"
            assert doc["metadata"]["annotations"]["grafana_folder"] == "YARN"
            shipped.update(doc["data"])
    files = {p.name: p.read_text() for p in (CHART / "dashboards").glob("*.json")}
    assert {k: json.loads(v) for k, v in shipped.items()} == \
        {k: json.loads(v) for k, v in files.items()}


def test_prometheus_rule_ships_the_rule_files_with_the_job(
        full_docs: list[dict[str, Any]]) -> None:
    rule = one(full_docs, "PrometheusRule")
    expected = []
    for path in sorted((CHART / "rules").glob("*.yaml")):
        text = path.read_text().replace('job="yarn-advisor"', 'job="yarn-advisor-prod"')
        expected.extend(yaml.safe_load(text)["groups"])
    assert rule["spec"]["groups"] == expected
    monitor = one(full_docs, "ServiceMonitor")
    assert monitor["spec"]["endpoints"][0]["relabelings"][0]["replacement"] == \
        "yarn-advisor-prod"
    assert one(full_docs, "Service")["spec"]["publishNotReadyAddresses"] is True


def leaf_values(node: dict[str, Any], prefix: str = "") -> list[str]:
    """Value keys; free-form maps (config, probes, resources, contexts) count as one."""
    whole = {"config", "resources", "livenessProbe", "readinessProbe", "podSecurityContext",
             "securityContext"}
    out = []
    for key, value in node.items():
        path = prefix + key
        if isinstance(value, dict) and value and path not in whole:
            out.extend(leaf_values(value, path + "."))
        else:
            out.append(path)
    return out


def commented_keys(text: str) -> set[str]:
    """Key paths of values.yaml whose line comes right after a comment line."""
    out, stack, previous = set(), [], ""
    for line in text.splitlines():
        found = re.match(r"^( *)([A-Za-z]\w*):", line)
        if found:
            depth = len(found.group(1)) // 2
            stack = [*stack[:depth], found.group(2)]
            if previous.startswith("#"):
                out.add(".".join(stack))
        if line.strip():
            previous = line.strip()
    return out


def test_every_value_is_documented_in_values_and_readme() -> None:
    text = (CHART / "values.yaml").read_text()
    keys = leaf_values(yaml.safe_load(text))
    readme = (CHART / "README.md").read_text()
    assert not [k for k in keys if f"| `{k}` |" not in readme], "values missing in README.md"
    undocumented = [k for k in keys if k not in commented_keys(text)]
    assert not undocumented, f"values.yaml keys without a comment: {undocumented}"
