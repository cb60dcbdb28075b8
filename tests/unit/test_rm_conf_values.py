"""``sense.rm_conf_values``: RM settings taken as given instead of read from ``/conf``
(which keeps the value the RM started with after ``yarn rmadmin
-refreshClusterMaxPriority``)."""

from __future__ import annotations

from test_sense_ha import BUSY, FakeHttp, _manifest_urls, _sensor

KEY = "yarn.cluster.max-application-priority"


def test_a_given_rm_setting_is_taken_and_not_read() -> None:
    (url,) = _manifest_urls(BUSY)
    http = FakeHttp(BUSY / "cycle-0020.yaml")
    sensor = _sensor(http, [url])
    assert sensor.sense(1_795_308_500_000).max_app_priority == 10  # as the RM's /conf says
    read = sum(KEY in u for u in http.asked)
    sensor.params = sensor.params.model_copy(update={"rm_conf_values": {KEY: "25"}})
    assert sensor.sense(1_795_308_530_000).max_app_priority == 25
    assert sum(KEY in u for u in http.asked) == read  # /conf not asked again
