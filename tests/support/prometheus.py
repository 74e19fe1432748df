"""A Prometheus Pushgateway, a Prometheus server and a node-exporter of the Debian packages (bindep.txt), on free
127.0.0.1 ports, and promtool's check of a metrics text.

Each is the test's own process (never the packages' system services), with its storage under the test's
directory, stopped when the context ends. query() asks Prometheus' HTTP API; wait_for() polls a condition with
the process's own wait() as the pause (so a crashed server ends the wait at once), bounded for a server that never
gets there.
"""
from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.support.s3 import free_port

PROMETHEUS = shutil.which("prometheus")
PUSHGATEWAY = shutil.which("prometheus-pushgateway")
NODE_EXPORTER = shutil.which("prometheus-node-exporter")
PROMTOOL = shutil.which("promtool")


def wait_for(proc: subprocess.Popen, condition: Callable[[], Any], what: str, bound: float = 30) -> Any:
    """condition()'s first truthy value; fails when proc exits or after `bound` seconds."""
    deadline = time.monotonic() + bound
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {bound} s; last {value!r}")
        try:
            proc.wait(timeout=0.2)
            raise AssertionError(f"{what}: {proc.args[0]} exited with {proc.returncode}")
        except subprocess.TimeoutExpired:
            pass


def _listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


@contextmanager
def _server(cmd: list[str], port: int, log: Path) -> Iterator[subprocess.Popen]:
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
        try:
            wait_for(proc, lambda: _listening(port), f"{cmd[0]} on port {port} (log {log})")
            yield proc
        finally:
            proc.terminate()
            proc.wait(timeout=30)


@contextmanager
def pushgateway(tmp: Path) -> Iterator[str]:
    """The URL of a running Pushgateway, empty: its metrics in memory only (Debian's default persistence file,
    /var/lib/prometheus/pushgateway.data, would hand one test's pushes to the next)."""
    port = free_port()
    cmd = [str(PUSHGATEWAY), f"--web.listen-address=127.0.0.1:{port}", "--persistence.file="]
    with _server(cmd, port, tmp / "pushgateway.log"):
        yield f"http://127.0.0.1:{port}"


@contextmanager
def prometheus(tmp: Path, target: str) -> Iterator[tuple[str, subprocess.Popen]]:
    """(URL, process) of a Prometheus scraping `target` (host:port) every second, keeping the pushed labels."""
    port = free_port()
    config = tmp / "prometheus.yml"
    config.write_text(json.dumps({  # JSON is YAML
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "scrape_configs": [{"job_name": "pushgateway", "honor_labels": True,
                            "static_configs": [{"targets": [target]}]}]}))
    cmd = [str(PROMETHEUS), f"--config.file={config}", f"--storage.tsdb.path={tmp / 'tsdb'}",
           f"--web.listen-address=127.0.0.1:{port}"]
    with _server(cmd, port, tmp / "prometheus.log") as proc:
        yield f"http://127.0.0.1:{port}", proc


@contextmanager
def node_exporter(tmp: Path, textfile_dir: Path) -> Iterator[str]:
    """The /metrics URL of a node-exporter with only its textfile collector, reading textfile_dir's *.prom."""
    port = free_port()
    cmd = [str(NODE_EXPORTER), f"--web.listen-address=127.0.0.1:{port}", "--collector.disable-defaults",
           "--collector.textfile", f"--collector.textfile.directory={textfile_dir}"]
    with _server(cmd, port, tmp / "node-exporter.log"):
        yield f"http://127.0.0.1:{port}/metrics"


def scrape(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.read().decode("utf-8")


def promtool_check(text: str) -> subprocess.CompletedProcess:
    """`promtool check metrics` of a metrics text: its exit code and what it printed (errors, lint warnings)."""
    return subprocess.run([str(PROMTOOL), "check", "metrics"], input=text, capture_output=True, text=True, timeout=60)


def query(url: str, promql: str) -> list[dict[str, Any]]:
    """The result vector of an instant query through /api/v1/query."""
    with urllib.request.urlopen(f"{url}/api/v1/query?" + urllib.parse.urlencode({"query": promql}), timeout=10) as r:
        body = json.load(r)
    assert body["status"] == "success", body
    return body["data"]["result"]
