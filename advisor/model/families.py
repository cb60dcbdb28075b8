"""Prometheus metric families under the advisor's one prefix (``yarn_advisor_``).

Shared by the generic metrics (``advisor.observe.metrics``) and each policy's
own metrics hook, so every family is named and built the same way. Memory is
exported in bytes (:data:`MIB` converts the RM's MiB).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

NS = "yarn_advisor"
TOP_N = 10  # targets named in labels per (policy, kind) and cycle, at most
MIB = 1024 * 1024  # the RM counts memory in MiB; the metrics in bytes


def _family(kind: type[GaugeMetricFamily] | type[CounterMetricFamily], name: str, doc: str,
            labels: Sequence[str], rows: Iterable[tuple[Sequence[str], float]]) -> Metric:
    family = kind(f"{NS}_{name}", doc, labels=list(labels))
    for values, value in rows:
        family.add_metric(list(values), value)
    return family


def gauge(name: str, doc: str, labels: Sequence[str],
          rows: Iterable[tuple[Sequence[str], float]]) -> Metric:
    """A gauge family with one sample per row."""
    return _family(GaugeMetricFamily, name, doc, labels, rows)


def counter(name: str, doc: str, labels: Sequence[str],
            rows: Iterable[tuple[Sequence[str], float]]) -> Metric:
    """A counter family (exposed as ``<name>_total``) with one sample per row."""
    return _family(CounterMetricFamily, name, doc, labels, rows)


def single(name: str, doc: str, value: float) -> Metric:
    """A gauge without labels."""
    return GaugeMetricFamily(f"{NS}_{name}", doc, value=value)
