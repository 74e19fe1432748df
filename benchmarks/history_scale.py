"""How long the history takes over hundreds of result documents (issue 32: "hundreds of documents in seconds").

    .venv/bin/python benchmarks/history_scale.py [--documents 500] [--clusters 5] [--source result.json]
                                                 [--dir D] [--no-charts] [--module]

Copies one real result document (default: extensions/molecule/bench_report/files/result.json, csi_lifecycle at
100 volumes, two variants; `--source` takes any result.json, e.g. a `make demo` run with per-object timings) into
<dir>/reports/<cluster>/<run_id>/result.json, `--documents` times: new run ids and start times an hour apart,
every step's wall time and per-object figures scaled by a factor around 1 (+-8 %, a few runs 30 % slower), the
summaries finalized again. Every copy is validated against the result schema before it is written, so the history
reads what a benchmark would have written. Then it times, separately: finding the documents, reading and
judging them (history.build_history), and rendering and writing history.json/.md/.html (charts included unless
--no-charts); with --module, also the bench_history module end to end through ansible-playbook (Python start,
Ansible, the module's argument checks).
"""
from __future__ import annotations

import argparse
import copy
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "collections"))  # the installed collection (scripts/install-collection.sh)

from ansible_collections.storageperf.k8s.plugins.module_utils.report import document as D  # noqa: E402
from ansible_collections.storageperf.k8s.plugins.module_utils.report import history as H  # noqa: E402
from ansible_collections.storageperf.k8s.plugins.module_utils.report import history_render as HR  # noqa: E402

SOURCE = REPO / "extensions" / "molecule" / "bench_report" / "files" / "result.json"
START = 1782637200  # 2026-06-28T09:00:00Z


def iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime(t))


def copy_of(source: dict, i: int, rng: random.Random) -> dict:
    doc = copy.deepcopy(source)
    started = START + 3600 * i
    doc["run_id"] = "%s-%s-%06x" % (doc["benchmark"], time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(started)), i)
    doc["started"], doc["finished"] = iso(started), iso(started + 1800)
    doc.pop("sweep", None)
    for v in doc["variants"]:
        v.pop("summary", None)
        for r in v["runs"]:
            for s in r["steps"]:
                if s.get("wall_s") is None:
                    continue
                f = rng.uniform(0.92, 1.08) * (1.3 if rng.random() < 0.02 else 1.0)
                s["wall_s"] *= f
                if s.get("rate"):
                    s["rate"] /= f
                for o in s.get("objects") or ():
                    for key in ("start", "end", "latency"):
                        if isinstance(o.get(key), (int, float)):
                            o[key] *= f
                if s.get("latency"):
                    s["latency"] = {k: x * f for k, x in s["latency"].items()}
    return D.finalize(doc, status=doc.get("status"), finished=doc["finished"])


def generate(root: Path, source: dict, documents: int, clusters: int) -> None:
    rng = random.Random(32)
    for i in range(documents):
        D.write_atomic(copy_of(source, i, rng), str(root / ("cluster-%02d" % (i % clusters))))  # validates


def timed(label: str, fn):
    t = time.perf_counter()
    out = fn()
    print("%-44s %7.2f s" % (label, time.perf_counter() - t))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--documents", type=int, default=500)
    ap.add_argument("--clusters", type=int, default=5)
    ap.add_argument("--source", type=Path, default=SOURCE)
    ap.add_argument("--dir", type=Path)
    ap.add_argument("--no-charts", action="store_true")
    ap.add_argument("--module", action="store_true", help="also time playbooks/history.yml (bench_history)")
    a = ap.parse_args()
    work = a.dir or Path(tempfile.mkdtemp(prefix="history-scale-"))
    reports = work / "reports"
    shutil.rmtree(reports, ignore_errors=True)
    source = D.load(str(a.source))
    print("source %s (%d bytes), %d documents over %d clusters in %s" % (
        a.source, a.source.stat().st_size, a.documents, a.clusters, reports))
    timed("generate (copy, finalize, validate, write)", lambda: generate(reports, source, a.documents, a.clusters))
    entries = timed("find the documents", lambda: H.find_results(str(reports)))
    history = timed("read and judge them (build_history)", lambda: H.build_history(entries))
    timed("render and write json, md, html%s" % ("" if a.no_charts else " + charts"),
          lambda: HR.write_history(history, str(reports / HR.DIRNAME), charts=not a.no_charts))
    s = history["summary"]
    print("%d documents, %d series, %d runs, %d steps flagged (%d in the latest runs), html %d bytes" % (
        s["documents"], s["series"], s["runs"], s["flagged_steps"], s["regressions"],
        (reports / HR.DIRNAME / HR.FILENAMES["html"]).stat().st_size))
    if a.module:
        cmd = [str(Path(sys.executable).parent / "ansible-playbook"), str(REPO / "playbooks" / "history.yml"),
               "-e", json.dumps({"reports_dir": str(reports)})]
        env = {"ANSIBLE_CONFIG": str(REPO / "ansible.cfg"), "ANSIBLE_COLLECTIONS_PATH": str(REPO / "collections"),
               "PATH": "%s:/usr/bin:/bin" % Path(sys.executable).parent}
        proc = timed("playbooks/history.yml end to end", lambda: subprocess.run(cmd, cwd=REPO, env=env,
                                                                                capture_output=True, text=True))
        if proc.returncode != 0:
            print(proc.stdout[-2000:])
            return 1
    if not a.dir:
        shutil.rmtree(work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
