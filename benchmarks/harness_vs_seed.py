"""Seed 000 and seed 002 per step through the collection's playbooks (the harness `make demo` runs), beside the seeds.

    .venv/bin/python benchmarks/harness_vs_seed.py [--time-scale 0.01] [--drivers ontap-nas] [--hog] [--json FILE]
    .venv/bin/python benchmarks/harness_vs_seed.py --reports reports/localhost --time-scale 0.01   # runs already made

benchmarks/calibration.py measures the twin itself: it submits each step's objects while the controller under test is
stalled and starts the clock at the release. This script measures what a user of the collection sees: it starts a
twin (3 nodes, as scripts/demo.sh does), runs playbooks/bench_attach_stress.yml and playbooks/bench_csi_lifecycle.yml
with -e compare=true (one run per driver), reads the result.json each run writes (reports/<host>/<run_id>/) and
prints every step scaled back to cluster seconds (wall / time scale) beside the seeds' figures, which it takes from
benchmarks/calibration.py. Here the clock includes the client's own time to send the requests, which no time scale
shrinks. --hog runs one CPU-bound process (python3 -c 'while True: pass') beside everything, as issue 18 asks.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.calibration import SEED000, SF, fmt, ratio, report, seed_table, table  # noqa: E402
from tests.support.twin import Twin  # noqa: E402

# the collection's step names -> calibration.py's (seed 002's)
STEP_NAMES = SF.SEED002_STEPS
# the variants compare=true runs -> calibration.py's modes
MODES = {"concurrency off": "off", "concurrency on": "on"}
ATTACH_MODES = {"parallel attach off": "serial", "parallel attach on": "parallel"}
ECONOMY_STEPS = "create_volume,publish,unpublish,delete_volume"  # what seed 002 measured of the economy drivers


def results(reports: list[Path], benchmark: str) -> list[dict[str, Any]]:
    """Every result document of `benchmark` under `reports` (reports dirs, one cluster's, or runs'), oldest first."""
    docs = [json.loads(p.read_text()) for r in reports for p in r.rglob("result.json")]
    return sorted((d for d in docs if d.get("benchmark") == benchmark), key=lambda d: d.get("started", ""))


def first_run_steps(variant: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {s["name"]: s for s in variant["runs"][0]["steps"]}


def lifecycle_figures(docs: list[dict[str, Any]], time_scale: float) -> tuple[int, dict[str, Any]]:
    """{storage class: {"off"|"on": {step: cluster seconds}}} of the newest compare run per storage class."""
    out: dict[str, Any] = {}
    volumes = 100
    for doc in docs:  # oldest first: a newer run of the same class replaces an older one
        params = doc.get("parameters") or {}
        volumes = int(params.get("volumes") or volumes)
        modes = {}
        for variant in doc["variants"]:
            mode = MODES.get(variant["name"])
            if mode:
                modes[mode] = {STEP_NAMES[n]: s["wall_s"] / time_scale for n, s in first_run_steps(variant).items()
                               if s.get("status") == "ok" and s.get("wall_s") is not None}
        if modes:
            out[params.get("storage_class", "?")] = modes
    return volumes, out


def attach_figures(docs: list[dict[str, Any]], time_scale: float) -> dict[str, float]:
    """Seed 000's scale 0 -> 28 (and back) of the newest attach-stress compare run, in cluster seconds."""
    out: dict[str, float] = {}
    for variant in (docs[-1]["variants"] if docs else []):
        mode = ATTACH_MODES.get(variant["name"])
        steps = first_run_steps(variant)
        if mode and steps.get("scale_up", {}).get("status") == "ok":
            out[mode] = steps["scale_up"]["wall_s"] / time_scale
            out[mode + "_down"] = steps["scale_down"]["wall_s"] / time_scale
    return out


def seed000_table(r: dict[str, float], heading: str) -> str:
    if "serial" not in r or "parallel" not in r:
        return ""
    rows = [[name, fmt(SEED000[k]), fmt(r[k]), ratio(r[k], SEED000[k])]
            for name, k in (("serial (parallel attach off)", "serial"), ("parallel (parallel attach on)", "parallel"))]
    seed_ratio, twin_ratio = SEED000["serial"] / SEED000["parallel"], r["serial"] / r["parallel"]
    rows.append(["serial / parallel", f"{seed_ratio:.1f}x", f"{twin_ratio:.1f}x", f"{twin_ratio / seed_ratio:.2f}"])
    return "\n".join([f"{heading} Seed 000 through playbooks/bench_attach_stress.yml: 28 pods x 2 disks, scale 0 -> 28", "",
                      table(rows, ["step", "seed", "twin", "twin/seed"]), "",
                      f"Scale 28 -> 0 until every disk is detached: {fmt(r['serial_down'])} and {fmt(r['parallel_down'])} "
                      "(seed: \"a few minutes\", detach stays serial).", ""])


def worst(res: dict[str, Any], attach: dict[str, float]) -> list[str]:
    """The largest departures from the seeds: each step's twin/seed, ON and OFF, and each OFF/ON ratio's."""
    dev: list[tuple[float, str]] = []
    volumes = int(res.get("volumes", 100))
    for sc, modes in res.get("seed002", {}).items():
        seed = seed_table(volumes).get(sc, {})
        for step, (s_off, s_on) in seed.items():
            off, on = modes.get("off", {}).get(step), modes.get("on", {}).get(step)
            if off:
                dev.append((off / s_off, f"{sc} {step} OFF"))
            if on:
                dev.append((on / s_on, f"{sc} {step} ON"))
            if off and on:
                dev.append(((off / on) / (s_off / s_on), f"{sc} {step} OFF/ON ratio"))
    if "serial" in attach and "parallel" in attach:
        dev += [(attach["serial"] / SEED000["serial"], "seed 000 serial"),
                (attach["parallel"] / SEED000["parallel"], "seed 000 parallel"),
                ((attach["serial"] / attach["parallel"]) / (SEED000["serial"] / SEED000["parallel"]), "seed 000 ratio")]
    out = sorted(dev, key=lambda d: -abs(d[0] - 1))
    within = sum(1 for d in dev if abs(d[0] - 1) <= 0.2)
    return [f"Within 20% of the seed: {within} of {len(dev)} figures. Furthest: "
            + ", ".join(f"{name} {v:.2f}" for v, name in out[:6])] if dev else []


def print_tables(reports: list[Path], time_scale: float, heading: str, save: str | None) -> None:
    volumes, lifecycle = lifecycle_figures(results(reports, "csi_lifecycle"), time_scale)
    attach = attach_figures(results(reports, "attach_stress"), time_scale)
    res = {"volumes": volumes, "seed002": lifecycle}
    if save:
        Path(save).write_text(json.dumps({"time_scale": time_scale, "seed000": attach, **res}, indent=1))
    out = [seed000_table(attach, heading), report(res, time_scale, heading) if lifecycle else "", *worst(res, attach)]
    print("\n".join(o for o in out if o))


def measure(a: argparse.Namespace, reports: Path) -> None:
    """Run the demo's playbooks on a fresh twin, every result under `reports`."""
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if a.hog else None
    try:
        with tempfile.TemporaryDirectory(prefix="harness-seed-") as d, \
                Twin(Path(d) / "twin", nodes=3, time_scale=a.time_scale) as tw:
            runs: list[tuple[str, dict[str, Any]]] = [("bench_attach_stress", {})] if a.attach else []
            for sc in filter(None, a.drivers.split(",")):
                runs.append(("bench_csi_lifecycle", {"storage_class": sc, **({"steps": ECONOMY_STEPS} if "economy" in sc else {})}))
            for playbook, extra in runs:
                t0 = time.monotonic()
                run = tw.playbook(REPO / "playbooks" / f"{playbook}.yml", timeout=3600,
                                  extra_vars={"compare": True, "reports_dir": str(reports), "volumes": a.volumes, **extra}
                                  if playbook == "bench_csi_lifecycle" else {"compare": True, "reports_dir": str(reports)})
                print(f"{playbook} {extra.get('storage_class', '')}: rc {run.rc}, {time.monotonic() - t0:.0f} s wall",
                      file=sys.stderr, flush=True)
                if run.rc:
                    print(run.stdout[-3000:], file=sys.stderr)
    finally:
        if hog:
            hog.kill()
            hog.wait()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--time-scale", type=float, default=0.01, help="the twin's; with --reports, the one those runs had")
    p.add_argument("--drivers", default="ontap-nas", help="storage classes of the CSI lifecycle runs (comma list)")
    p.add_argument("--volumes", type=int, default=100)
    p.add_argument("--no-attach", dest="attach", action="store_false", help="leave out the attach-stress run")
    p.add_argument("--hog", action="store_true", help="one CPU-bound process beside the twin and the playbooks")
    p.add_argument("--reports", metavar="DIR", nargs="+",
                   help="print the result.json files under these directories instead of running (the newest run of each)")
    p.add_argument("--keep", metavar="DIR", help="write the runs' reports here (default: a temporary directory)")
    p.add_argument("--json", metavar="FILE", help="also write the figures (cluster seconds) here")
    p.add_argument("--heading", default="####", help="Markdown level of each table's title")
    a = p.parse_args()
    if not a.reports and a.drivers:
        try:  # before the twin starts: a size without a seed table would only fail at the tables, after the runs
            seed_table(a.volumes)
        except ValueError as e:
            p.error(str(e))
    if a.reports:
        print_tables([Path(r) for r in a.reports], a.time_scale, a.heading, a.json)
        return 0
    with tempfile.TemporaryDirectory(prefix="harness-reports-") as d:
        reports = Path(a.keep or d)
        measure(a, reports)
        print_tables([reports], a.time_scale, a.heading, a.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
