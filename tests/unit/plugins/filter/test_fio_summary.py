"""fio_summary on output of real fio runs made by the test itself, then with noise injected.

Each run is a second or less of fio on the test's temporary directory (no O_DIRECT: tmpfs may
refuse it), with the options the benchmark role uses: several jobs, each its own group.
"""
from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.storageperf.k8s.plugins.filter.fio_summary import FilterModule
from ansible_collections.storageperf.k8s.plugins.module_utils.report import schema

fio_summary = FilterModule().filters()["fio_summary"]

pytestmark = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed (apt-get install fio)")


def run_fio(tmp_path, *args: str, fmt: str = "json") -> str:
    out = tmp_path / "fio.json"
    cmd = ["fio", f"--output-format={fmt}", f"--output={out}", f"--directory={tmp_path}", "--filename=testfile",
           "--size=4M", "--bs=4k", "--ioengine=psync", "--runtime=1", "--time_based", "--thread", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return out.read_text()


@pytest.fixture(scope="module")
def three_groups(tmp_path_factory):
    """randwrite x2 with group_reporting, randread x2 without, a latency job: three groups."""
    d = tmp_path_factory.mktemp("fio")
    return run_fio(d, "--name=randwrite_4k", "--rw=randwrite", "--numjobs=2", "--group_reporting",
                   "--name=randread_4k", "--rw=randread", "--numjobs=2", "--stonewall",
                   "--name=latency_4k", "--rw=randwrite", "--iodepth=1", "--numjobs=1", "--stonewall")


def test_jobs_and_groups_of_a_real_run(three_groups):
    s = fio_summary(three_groups)
    assert s["fio_version"].startswith("fio-")
    # group_reporting folds randwrite into one entry; randread reports each of its 2 jobs
    assert [j["name"] for j in s["jobs"]] == ["randwrite_4k", "randread_4k", "randread_4k", "latency_4k"]
    assert [g["name"] for g in s["groups"]] == ["randwrite_4k", "randread_4k", "latency_4k"]
    assert [g["jobs"] for g in s["groups"]] == [1, 2, 1]
    write = s["groups"][0]["write"]
    assert write["iops"] > 0 and write["bw_bytes"] > 0 and write["total_ios"] > 0
    clat = write["clat_ns"]
    assert 0 < clat["min"] <= clat["p50"] <= clat["p90"] <= clat["p99"] <= clat["p99_9"] <= clat["max"]
    assert "read" not in s["groups"][0]
    # the randread group is the sum of its jobs
    reads = [j["read"] for j in s["jobs"] if j["name"] == "randread_4k"]
    assert s["groups"][1]["read"]["iops"] == pytest.approx(sum(r["iops"] for r in reads))
    assert s["groups"][1]["read"]["total_ios"] == sum(r["total_ios"] for r in reads)
    assert s["groups"][1]["approximate"] is True  # json without bins: percentiles of the worst job
    assert s["groups"][1]["read"]["clat_ns"]["p99"] == max(r["clat_ns"]["p99"] for r in reads)
    assert s["errors"] == [] and s["noise"] == []


def test_steps_fit_the_result_document(three_groups):
    steps = fio_summary(three_groups)["steps"]
    assert [st["name"] for st in steps] == ["randwrite_4k", "randread_4k", "latency_4k"]
    st = steps[0]
    assert st["label"] == "randwrite 4k psync ×2"
    # seconds from fio's own milliseconds and nanoseconds: compared with what fio printed, not with ceilings that
    # only a machine fast enough stays under
    [raw] = [j["write"] for j in json.loads(three_groups)["jobs"] if j["jobname"] == "randwrite_4k"]
    assert st["status"] == "ok" and st["wall_s"] == round(raw["runtime"] / 1000, 3) > 0.5
    assert st["metrics"]["iops"] > 0 and st["metrics"]["bw_bytes"] > 0
    lat = st["latency"]
    assert 0 < lat["p50"] <= lat["p99"] <= lat["max"] == pytest.approx(raw["clat_ns"]["max"] / 1e9)
    doc = {"schema_version": 1, "run_id": "fio-test", "benchmark": "fio", "status": "ok",
           "started": "2026-01-01T00:00:00Z", "finished": "2026-01-01T00:00:05Z", "cluster": {}, "components": {},
           "parameters": {}, "variants": [{"name": "tmp", "settings": {}, "runs": [{"repetition": 1, "steps": steps}]}]}
    assert schema.problems(doc) == []


def test_json_plus_bins_give_exact_group_percentiles(tmp_path):
    text = run_fio(tmp_path, "--name=randread_4k", "--rw=randread", "--numjobs=2", fmt="json+")
    s = fio_summary(text)
    group = s["groups"][0]
    assert group["jobs"] == 2 and group["approximate"] is False
    p50s = [j["read"]["clat_ns"]["p50"] for j in s["jobs"]]
    assert min(p50s) * 0.5 <= group["read"]["clat_ns"]["p50"] <= max(p50s) * 2
    # the histogram stays inside the parser
    assert all("bins" not in x["read"]["clat_ns"] for x in s["jobs"] + s["groups"])


def test_noise_around_the_document(three_groups):
    text = ("fio: this platform does not support process shared mutexes, forcing use of threads\n"
            + three_groups + "\nstorageperf: fio exit code 0\n")
    s = fio_summary(text)
    assert len(s["groups"]) == 3
    assert s["noise"] == ["fio: this platform does not support process shared mutexes, forcing use of threads",
                          "storageperf: fio exit code 0"]
    assert s["errors"] == ["fio: this platform does not support process shared mutexes, forcing use of threads"]


def test_noise_inside_the_document(three_groups):
    lines = three_groups.splitlines()
    at = next(i for i, line in enumerate(lines) if '"clat_ns"' in line)
    lines.insert(at, "fio: io_u error on file /data/testfile: No space left on device: write offset=4096, buflen=4096")
    lines.insert(3, "sh: 1: cannot create /data/x: Read-only file system")
    s = fio_summary("\n".join(lines))
    assert [g["name"] for g in s["groups"]] == ["randwrite_4k", "randread_4k", "latency_4k"]
    assert s["groups"][0]["write"]["iops"] == fio_summary(three_groups)["groups"][0]["write"]["iops"]
    assert any("No space left" in n for n in s["noise"]) and any("Read-only" in n for n in s["noise"])


def test_log_lines_and_decoded_json(three_groups):
    assert fio_summary(three_groups.splitlines())["groups"][0]["iops"] > 0
    assert fio_summary(json.loads(three_groups))["groups"][0]["iops"] > 0


def test_gtod_reduce_loses_latency_and_says_so(tmp_path):
    s = fio_summary(run_fio(tmp_path, "--name=fast", "--rw=randwrite", "--gtod_reduce=1"))
    assert s["steps"][0]["latency"] is None
    assert s["steps"][0]["metrics"]["iops"] > 0
    assert any("no completion-latency percentiles" in e for e in s["errors"])


@pytest.mark.parametrize("text,match", [
    ("", "no JSON document"),
    ("fio: pid=0, err=22/file:filesetup.c:1155, func=total_file_size, error=Invalid argument\n", "err=22"),
    ('{\n  "fio version" : "fio-3.33",\n  "jobs" : [\n    {\n', "incomplete JSON"),
])
def test_no_result_is_a_clear_error(text, match):
    with pytest.raises(AnsibleFilterError, match=match):
        fio_summary(text)


def test_truncated_output_of_a_real_run(three_groups):
    with pytest.raises(AnsibleFilterError, match="incomplete JSON"):
        fio_summary(three_groups[: len(three_groups) // 2])
