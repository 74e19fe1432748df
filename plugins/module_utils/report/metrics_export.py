# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Metric families (metric_families.py) out to Prometheus: the metrics.prom text file and the Pushgateway push.

Both go through the official client, prometheus-client (requirements.txt), in the Prometheus text format 0.0.4:
the format node-exporter's textfile collector reads, which is not OpenMetrics (no # UNIT, no # EOF, and a HELP
escapes only backslash and line feed: an OpenMetrics-escaped quote there is a parse error for the collector).
The Pushgateway's basic auth comes from the environment only (STORAGEPERF_PUSHGATEWAY_USERNAME / _PASSWORD), never from module arguments, files or
the URL, so that no secret reaches a log, an AWX job's arguments or a report. A push that fails is returned as
an error text for the caller to warn with: a Pushgateway that is down never costs a benchmark its run.
"""
from __future__ import annotations

import os
from typing import Any, Callable, Iterator

from ansible.module_utils.basic import missing_required_lib
from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError
from ansible_collections.storageperf.k8s.plugins.module_utils.report import document as D
from ansible_collections.storageperf.k8s.plugins.module_utils.report import metric_families as MF

from urllib.parse import urlsplit

try:
    from prometheus_client import CollectorRegistry
    from prometheus_client.core import GaugeMetricFamily
    from prometheus_client.exposition import basic_auth_handler, default_handler, generate_latest, push_to_gateway

    HAS_PROMETHEUS_CLIENT = True
except ImportError:
    HAS_PROMETHEUS_CLIENT = False

URL_OPTION = "metrics_pushgateway_url"
USERNAME_ENV = "STORAGEPERF_PUSHGATEWAY_USERNAME"
PASSWORD_ENV = "STORAGEPERF_PUSHGATEWAY_PASSWORD"  # nosec: the name of a variable, not a password
TEXTFILE = "metrics.prom"  # node-exporter's textfile collector reads *.prom


def check_url(url: str | None) -> str:
    """Refuse a Pushgateway URL that cannot work, naming metrics_pushgateway_url; '' means no push."""
    url = (url or "").strip()
    if not url:
        return ""
    parts = urlsplit(url)
    fix = ("give the Pushgateway's base URL, e.g. http://pushgateway.example:9091, or leave %s empty to write "
           "metrics.prom only" % URL_OPTION)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise StoragePerfError("%s=%r is not an http(s) URL with a host: %s" % (URL_OPTION, url, fix))
    if parts.username is not None or parts.password is not None:
        # the URL ends up in logs and job arguments: credentials go through the environment
        raise StoragePerfError("%s must not carry a user or password; set %s and %s in the environment instead"
                               % (URL_OPTION, USERNAME_ENV, PASSWORD_ENV))
    if parts.query or parts.fragment:
        raise StoragePerfError("%s=%r has a query or fragment: %s" % (URL_OPTION, url, fix))
    try:
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number or out of range
    except ValueError as e:
        raise StoragePerfError("%s=%r: %s; %s" % (URL_OPTION, url, e, fix)) from e
    return url.rstrip("/")


def check(url: str | None) -> str:
    """The URL as used ('' for no push) after check_url, and prometheus-client importable: before anything runs."""
    url = check_url(url)
    if not HAS_PROMETHEUS_CLIENT:
        raise StoragePerfError(missing_required_lib("prometheus-client") + " It is in the collection's "
                               "requirements.txt: pip install -r requirements.txt on the controller or in the EE.")
    return url


def export(doc: dict[str, Any], run_dir: str, cluster: str, url: str, timeout: float, check_mode: bool = False) -> dict[str, Any]:
    """metrics.prom of a result document into run_dir, and the same families pushed to url (checked by check()).

    A push that fails is a warning (result["warnings"]), never a failure: the run and the text file stay.
    """
    families = MF.families(doc, cluster)
    path = os.path.join(run_dir, TEXTFILE)
    key = MF.grouping_key(doc, cluster)
    result = dict(changed=False, pushed=False, pushgateway_url=url, path=path, grouping_key=dict(key, job=MF.JOB),
                  run_id=doc["run_id"], families=[f["name"] for f in families],
                  samples=sum(len(f["samples"]) for f in families))
    if check_mode:
        return result
    try:
        result["changed"] = write_textfile(run_dir, families)[1]
    except OSError as e:
        raise StoragePerfError("cannot write %s: %s" % (path, e), hint="Check that the run directory is writable.") from e
    if url:
        error = push(url, families, key, MF.JOB, timeout)
        result["pushed"] = not error
        if error:  # the module passes them to module.warn(); the task stays ok
            result["warnings"] = ["%s %s: the push of run %s failed (%s); the run and %s are kept"
                                  % (URL_OPTION, url, doc["run_id"], error, path)]
    return result


class _Families:
    """A collector that yields fixed families: the registry holds exactly what the document says."""

    def __init__(self, families: list[dict[str, Any]]) -> None:
        self._families = families

    def collect(self) -> Iterator[Any]:
        for fam in self._families:
            gauge = GaugeMetricFamily(fam["name"], fam["help"], labels=list(fam["labels"]))
            for labels, value in fam["samples"]:
                gauge.add_metric([labels[n] for n in fam["labels"]], value)
            yield gauge


def registry(families: list[dict[str, Any]]) -> Any:
    reg = CollectorRegistry(auto_describe=False)
    reg.register(_Families(families))
    return reg


def text(families: list[dict[str, Any]]) -> str:
    """The families in the Prometheus text format 0.0.4, as the textfile collector and promtool read it."""
    return generate_latest(registry(families)).decode("utf-8")


def write_textfile(directory: str, families: list[dict[str, Any]]) -> tuple[str, bool]:
    """metrics.prom in the directory, through a temp file and rename; (path, changed)."""
    path = os.path.join(directory, TEXTFILE)
    return path, D.write_text_atomic(path, text(families))


def _handler() -> Callable[..., Any]:
    username, password = os.environ.get(USERNAME_ENV), os.environ.get(PASSWORD_ENV)
    if not username:
        return default_handler

    def handler(url: str, method: str, timeout: float | None, headers: list[tuple[str, str]], data: bytes) -> Callable[[], None]:
        return basic_auth_handler(url, method, timeout, headers, data, username, password or "")
    return handler


def push(url: str, families: list[dict[str, Any]], grouping_key: dict[str, str], job: str, timeout: float) -> str:
    """PUT the families into the group job/<grouping key> (replacing that group only). '' or the error text."""
    try:
        push_to_gateway(url, job=job, registry=registry(families), grouping_key=grouping_key, timeout=timeout,
                        handler=_handler())
    except Exception as e:  # URLError, HTTPError, OSError, timeouts: the caller warns and the run is kept
        return "%s: %s" % (type(e).__name__, e)
    return ""
