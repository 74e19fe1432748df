"""sysbench_summary on output of real sysbench runs made by the test itself, then with noise injected.

Most runs use a small Lua test that appends to a file in the test's temporary directory (a second
each, no database); one module fixture starts a throw-away MariaDB to capture the OLTP reports
(oltp_point_select, oltp_insert) through the role's own Lua wrapper.
"""
from __future__ import annotations

import atexit
import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
from pathlib import Path

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.storageperf.k8s.plugins.filter.sysbench_summary import FilterModule
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.sysbench_scripts import WRAPPER_LUA
from ansible_collections.storageperf.k8s.plugins.module_utils.report import schema
from ansible_collections.storageperf.k8s.plugins.module_utils.report.metrics import format_metric, metric_info

sysbench_summary = FilterModule().filters()["sysbench_summary"]

# the wrapper the benchmark's ConfigMap holds (bench/sysbench_scripts.py), as a file sysbench can load
WRAPPER = Path(tempfile.mkdtemp(prefix="storageperf-sysbench-")) / "storageperf_sysbench.lua"
WRAPPER.write_text(WRAPPER_LUA)
atexit.register(shutil.rmtree, WRAPPER.parent, True)
PROBE = 'function event()\n  local f = assert(io.open("probe.dat", "a"))\n  f:write("x")\n  f:close()\nend\n'

pytestmark = pytest.mark.skipif(shutil.which("sysbench") is None, reason="sysbench is not installed")


def sysbench(cwd: Path, *args: str, test: str = "probe") -> str:
    env = dict(os.environ, STORAGEPERF_SYSBENCH_TEST=test)
    proc = subprocess.run(["sysbench", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def probe_dir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("sysbench")
    (d / "probe.lua").write_text(PROBE)
    return d


@pytest.fixture(scope="module")
def wrapped(probe_dir) -> str:
    """The role's wrapper: JSON report hook + the storageperf line, with the latency histogram."""
    return sysbench(probe_dir, str(WRAPPER), "--time=1", "--threads=2", "--histogram=on", "--percentile=99", "run")


def wrapper_line(text: str) -> dict:
    """The wrapper's own {"storageperf": ...} line as printed: the figures the summary must carry unchanged."""
    [line] = [line for line in text.splitlines() if line.startswith('{"storageperf":')]
    return json.loads(line)["storageperf"]


def test_json_report_histogram_and_wrapper_line(wrapped):
    s = sysbench_summary(wrapped, "probe")
    assert s["source"] == "json" and s["sysbench_version"] == "1.0.20" and s["threads"] == 2
    assert s["tps"] > 0 and s["qps"] == 0  # the probe runs no SQL
    # the run's exact length as sysbench measured it (not the JSON's whole seconds); how long that is beyond the
    # asked second depends on the machine, so it is compared with what sysbench printed, not with a ceiling
    printed = wrapper_line(wrapped)
    assert s["events"] == printed["events"] > 0 and s["time_s"] == printed["time_total"] > 0.9
    assert s["percentile"] == 99 and s["histogram_rows"] > 0
    lat = s["latency_ms"]
    assert 0 < lat["min"] <= lat["p50"] <= lat["p90"] <= lat["p95"] <= lat["p99"] <= lat["p99_9"] <= lat["max"] * 1.05
    assert lat["min"] <= lat["avg"] <= lat["max"]
    assert s["noise"] == [], s["noise"]


def test_step_fits_the_result_document(wrapped):
    step = sysbench_summary(wrapped, "oltp_insert")["step"]
    assert step["name"] == "oltp_insert" and step["label"] == "oltp insert ×2 threads"
    # seconds, from the wrapper's milliseconds: compared with the printed figure, not with a machine-speed ceiling
    assert step["metrics"]["tps"] > 0
    assert step["metrics"]["latency_avg_s"] == pytest.approx(wrapper_line(wrapped)["latency_avg_ms"] / 1000)
    assert 0 < step["latency"]["p50"] <= step["latency"]["p99"] <= step["latency"]["max"] * 1.05
    doc = {"schema_version": 1, "run_id": "sysbench-test", "benchmark": "sysbench", "status": "ok",
           "started": "2026-01-01T00:00:00Z", "finished": "2026-01-01T00:00:05Z", "cluster": {}, "components": {},
           "parameters": {}, "variants": [{"name": "tmp", "settings": {}, "runs": [{"repetition": 1, "steps": [step]}]}]}
    assert schema.problems(doc) == []


@pytest.fixture(scope="module")
def json_probe(probe_dir) -> Path:
    """The probe with sysbench's own JSON report for intermediate and cumulative reports (no wrapper)."""
    (probe_dir / "both.lua").write_text('require("probe")\nsysbench.hooks.report_intermediate = sysbench.report_json\n'
                                        'sysbench.hooks.report_cumulative = sysbench.report_json\n')
    return probe_dir


def test_intermediate_reports_and_the_last_cumulative(json_probe):
    text = sysbench(json_probe, "both.lua", "--time=2", "--threads=1", "--report-interval=1", "run")
    assert text.count('"tps"') >= 2
    s = sysbench_summary(text)
    # the cumulative report is the last object; its "time" is the whole run
    assert s["time_s"] == 2 and s["tps"] > 0
    # report_json prints latency with two decimals of a ms: a fast machine's probe reads 0.00, a slow one's more
    p95 = s["latency_ms"]["p95"]
    assert p95 >= 0 and (p95 == 0) == ("p95" in s["latency_below_ms"])


def _with_json_latency(text: str, printed: str) -> str:
    """Real report_json output with its cumulative "latency" field as sysbench would print another value."""
    head, sep, tail = text.rpartition('"latency": ')
    assert sep, text
    return head + sep + printed + tail[tail.index(","):]


@pytest.mark.parametrize("printed,measured", [("0.00", None), ("0.05", 0.05), ("12.52", 12.52)])
def test_latency_below_the_printed_resolution_is_a_bound(json_probe, printed, measured):
    text = sysbench(json_probe, "both.lua", "--time=1", "--threads=1", "run")
    s = sysbench_summary(_with_json_latency(text, printed), "oltp_insert")
    metrics = s["step"]["metrics"]
    if measured is None:
        assert s["latency_below_ms"] == {"p95": 0.01} and "latency_p95_s" not in metrics
        assert metrics["latency_p95_below_s"] == pytest.approx(1e-05)
        assert format_metric("latency_p95_below_s", metrics["latency_p95_below_s"]) == "< 10µs"
        assert metric_info("latency_p95_below_s") == ("latency p95", "below", None)
    else:
        assert s["latency_below_ms"] == {} and "latency_p95_below_s" not in metrics
        assert metrics["latency_p95_s"] == pytest.approx(measured / 1000)


def test_text_report_without_hook(probe_dir):
    s = sysbench_summary(sysbench(probe_dir, "probe.lua", "--time=1", "--threads=1", "run"))
    assert s["source"] == "text"
    assert s["events"] > 0 and s["tps"] == pytest.approx(s["events"] / s["time_s"], rel=0.01)
    assert s["latency_ms"]["min"] <= s["latency_ms"]["avg"] <= s["latency_ms"]["max"]
    assert s["percentile"] == 95 and "p95" in s["latency_ms"]
    assert s["step"]["latency"] is None  # no histogram: only the asked percentile, as a metric
    metrics = s["step"]["metrics"]
    # measured, or below the text report's 0.01 ms: one of the two, never a measured 0
    assert (metrics.get("latency_p95_s", 0) > 0) != ("latency_p95_below_s" in metrics)


def test_noise_is_kept_apart(wrapped):
    clean = sysbench_summary(wrapped)
    lines = wrapped.splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip() == "[")
    lines.insert(at, "WARNING: the --test option is deprecated")
    lines.insert(0, "+ sysbench /etc/storageperf/storageperf_sysbench.lua run")
    lines.append("storageperf: sysbench exit code 0")
    s = sysbench_summary("\n".join(lines))
    assert s["tps"] == clean["tps"] and s["latency_ms"] == clean["latency_ms"]
    assert s["noise"] == ["+ sysbench /etc/storageperf/storageperf_sysbench.lua run",
                          "WARNING: the --test option is deprecated", "storageperf: sysbench exit code 0"]
    assert sysbench_summary(lines)["tps"] == clean["tps"]  # a log as lines (k8s_log log_lines)


@pytest.mark.parametrize("text", ["", "FATAL: unable to connect to MySQL server on host 'db', port 3306, aborting...\n"
                                      "FATAL: error 2005: Unknown server host 'db' (-2)\n"])
def test_no_result_is_a_clear_error(text):
    with pytest.raises(AnsibleFilterError, match="holds no result"):
        sysbench_summary(text)


def test_name_must_be_text(wrapped):
    with pytest.raises(AnsibleFilterError, match="name must be"):
        sysbench_summary(wrapped, 42)


# --- a real database ---------------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def mariadb(tmp_path_factory):
    if not (shutil.which("mariadbd") and shutil.which("mariadb-install-db")):
        pytest.skip("MariaDB is not installed (apt-get install mariadb-server)")
    d = tmp_path_factory.mktemp("mariadb")
    subprocess.run(["mariadb-install-db", "--no-defaults", f"--datadir={d / 'data'}", "--user=root",
                    "--auth-root-authentication-method=normal", "--skip-test-db"],
                   check=True, capture_output=True, timeout=120)
    (d / "init.sql").write_text("CREATE DATABASE IF NOT EXISTS sbtest;\n")
    port = _free_port()
    proc = subprocess.Popen(["mariadbd", "--no-defaults", f"--datadir={d / 'data'}", "--user=root", f"--port={port}",
                             "--bind-address=127.0.0.1", f"--socket={d / 'sock'}", f"--pid-file={d / 'pid'}",
                             "--skip-name-resolve", f"--init-file={d / 'init.sql'}", "--innodb-buffer-pool-size=64M"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    ready, up = threading.Event(), []

    def watch_log():
        # mariadbd says when it accepts connections; the pipe is drained to the end so the server never blocks on
        # it, and its end (the server died) ends the wait too
        for line in proc.stderr:
            if "ready for connections" in line and not up:
                up.append(line)
                ready.set()
        ready.set()

    threading.Thread(target=watch_log, daemon=True).start()
    try:
        ready.wait(300)  # a bound for a server that hangs, not a measurement
        assert up, f"mariadbd never became ready for connections (exit code {proc.poll()})"
        opts = [f"--mysql-socket={d / 'sock'}", "--mysql-user=root", "--mysql-db=sbtest", "--tables=2",
                "--table-size=500", "--db-driver=mysql"]
        sysbench(d, str(WRAPPER), *opts, "prepare", test="oltp_point_select")
        yield d, opts
    finally:
        proc.terminate()
        proc.wait(timeout=60)


@pytest.mark.parametrize("test,reads", [("oltp_point_select", True), ("oltp_insert", False)])
def test_oltp_reports_of_mariadb(mariadb, test, reads):
    d, opts = mariadb
    text = sysbench(d, str(WRAPPER), *opts, "--time=1", "--threads=2", "--histogram=on", "run", test=test)
    s = sysbench_summary(text, test)
    assert s["source"] == "json" and s["tps"] > 0 and s["qps"] > 0
    assert (s["reads_per_s"] > 0) is reads and (s["writes_per_s"] > 0) is not reads
    assert s["step"]["name"] == test and s["step"]["latency"]["p99"] > 0
    assert s["noise"] == [], s["noise"]
