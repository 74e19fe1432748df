"""What the controller costs around a benchmark's figures: wall, measured steps and controller CPU per run.

    .venv/bin/python benchmarks/controller_cost.py [--fleet 20] [--volumes 10] [--only lifecycle,info,advise]
                                                   [--tasks 15] [--dir D] [--counts]
                                                   [--forks N] [--env ANSIBLE_PIPELINING=True ...]

--forks runs every playbook at -f N instead of -f <clusters>; --env (repeatable) sets an environment variable
for ansible-playbook (after the script's own, so ANSIBLE_CONFIG=other.cfg replaces the repository's): how the
Ansible settings in docs/performance.md were measured.

--counts runs each playbook once on one twin cluster and prints {playbook: {tasks, modules}} as JSON (what
tests/functional/test_controller_cost_counts.py holds against docs/performance.md). docs/performance.md says how to
read the figures.

Rows (issue 33): `bench_csi_lifecycle.yml -e volumes=N` on one cluster and on a fleet of 3 at `-f 3`;
`cluster_info.yml` and `advise.yml` on one cluster and on a fleet of --fleet clusters at `-f <fleet>`.
All against twins at time scale 0.01 started here (and stopped here).

Controller CPU is ansible-playbook and every process it waited for (workers, modules): the rusage of the
child, so the twins' processes, started by `python -m twin up` in their own sessions, are not counted.
Twin CPU-s: what the twin's processes (its session) spent during the run, on the same CPUs: not the
controller's, but what a fleet run on this machine shares them with.
Measured steps: the sum of the result document's step durations (what the benchmark reports as the
cluster's). Per task, the callback in benchmarks/callback_plugins/task_profile.py records the wall time, and
every module process a worker starts; the rows give the tasks (results that were not skipped) and module runs of
the whole run divided by its clusters (so a fleet's once-per-run tasks count a fraction), and the tables after
them the costliest tasks of each playbook.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent
FLEET_INVENTORY = REPO / "inventories" / "twin-fleet"


def twin(*args: str) -> None:
    subprocess.run([str(VENV_BIN / "python"), "-m", "twin", *args], cwd=REPO, check=True, capture_output=True,
                   timeout=300)


def fleet_inventory(directory: Path, clusters: int) -> Path:
    """inventories/twin-fleet with clusters hosts (its group_vars read each host's files from its directory)."""
    inventory = directory / "inventory"
    inventory.mkdir(parents=True, exist_ok=True)
    hosts = "".join(f"        twin-{k}:\n" for k in range(1, clusters + 1))
    (inventory / "hosts.yml").write_text(
        "all:\n  children:\n    k8s_clusters:\n      hosts:\n" + hosts
        + "      vars:\n        ansible_connection: local\n"
        + "        ansible_python_interpreter: \"{{ ansible_playbook_python }}\"\n")
    if not (inventory / "group_vars").exists():
        (inventory / "group_vars").symlink_to(FLEET_INVENTORY / "group_vars")
    return inventory


def env_of(twin_dir: Path) -> dict[str, str]:
    """The twin's throwaway credentials (DIR/env), as `set -a; . DIR/env` would export them."""
    env = dict(os.environ)
    for line in (twin_dir / "env").read_text().splitlines():
        if "=" in line and not line.startswith("#"):
            key, value = line.split("=", 1)
            env[key.removeprefix("export ").strip()] = value.strip().strip("'\"")
    return env


SETTINGS: dict[str, str] = {}  # --env: what a user would set, on top of the script's own environment


def run(playbook: str, inventory: Path, twin_dir: Path, forks: int, extra: dict, profile: Path) -> dict:
    env = env_of(twin_dir)
    env.update(STORAGEPERF_TWIN_DIR=str(twin_dir), ANSIBLE_CONFIG=str(REPO / "ansible.cfg"),
               ANSIBLE_COLLECTIONS_PATH=str(REPO / "collections"),
               ANSIBLE_CALLBACK_PLUGINS=str(REPO / "benchmarks" / "callback_plugins"),
               ANSIBLE_CALLBACKS_ENABLED="task_profile", TASK_PROFILE_FILE=str(profile),
               PATH=f"{VENV_BIN}:{env.get('PATH', '')}")
    env.update(SETTINGS)
    if profile.exists():
        profile.unlink()
    cmd = [str(VENV_BIN / "ansible-playbook"), str(REPO / "playbooks" / playbook), "-i", str(inventory),
           "-f", str(forks), "-e", json.dumps(extra)]
    start = time.monotonic()
    proc = subprocess.run(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=1800)
    wall = time.monotonic() - start
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout[-4000:])
        raise SystemExit(f"{playbook} failed (rc {proc.returncode})")
    lines = [json.loads(line) for line in profile.read_text().splitlines()] if profile.exists() else []
    return {"wall": wall, "tasks": [x for x in lines if "status" in x], "modules": [x for x in lines if "module" in x],
            "split": next((x for x in lines if "playbook_cpu" in x), {})}


class Cpu:
    """Controller CPU of the children reaped between enter and exit (ansible-playbook and its descendants)."""

    def __enter__(self) -> Cpu:
        u = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.before = u.ru_utime + u.ru_stime
        return self

    def __exit__(self, *exc: object) -> None:
        u = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.seconds = u.ru_utime + u.ru_stime - self.before


def twin_cpu(twin_dir: Path) -> float:
    """CPU-s so far of every twin process (a fleet's front and its clusters share the session of twin.pid)."""
    sid = int((twin_dir / "twin.pid").read_text().split()[0])
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # the process ended between the listing and the read
            continue
        if int(fields[3]) == sid:  # fields after the name: state, ppid, pgrp, session, ... utime, stime
            total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def measured_steps(reports: Path) -> float:
    total = 0.0
    for result in reports.rglob("result.json"):
        doc = json.loads(result.read_text())
        for variant in doc.get("variants", []):
            for run in variant.get("runs", []):
                total += sum(float(step.get("wall_s") or 0) for step in run.get("steps", []))
    return total


def timed(playbook: str, inventory: Path, twin_dir: Path, forks: int, extra: dict, work: Path, profile: str) -> dict:
    twin_before = twin_cpu(twin_dir)
    with Cpu() as cpu:
        got = run(playbook, inventory, twin_dir, forks, extra, work / profile)
    got["cpu"] = cpu.seconds
    got["twin_cpu"] = twin_cpu(twin_dir) - twin_before
    return got


def counts(got: dict, clusters: int) -> tuple[float, float]:
    """Task results that were not skipped, and module runs, of the whole run per cluster."""
    return (sum(1 for t in got["tasks"] if t["status"] != "skipped") / clusters, len(got["modules"]) / clusters)


def costliest(tasks: list[dict], n: int) -> list[tuple[str, str, float, int]]:
    by_task: dict[tuple[str, str], list[float]] = defaultdict(list)
    for t in tasks:
        if t["seconds"] is not None:
            by_task[(t["task"], t["action"].rsplit(".", 1)[-1])].append(t["seconds"])
    rows = [(name, action, sum(s) / len({t["host"] for t in tasks}), len(s)) for (name, action), s in by_task.items()]
    return sorted(rows, key=lambda r: -r[2])[:n]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fleet", type=int, default=20, help="clusters of the large fleet (cluster_info, advise)")
    ap.add_argument("--volumes", type=int, default=10)
    ap.add_argument("--only", default="lifecycle,info,advise")
    ap.add_argument("--tasks", type=int, default=12, help="costliest tasks listed per playbook")
    ap.add_argument("--dir", type=Path)
    ap.add_argument("--counts", action="store_true", help="one cluster only: print the counts per playbook as JSON")
    ap.add_argument("--forks", type=int, help="-f for every run (default: the run's clusters)")
    ap.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                    help="environment of ansible-playbook, e.g. ANSIBLE_PIPELINING=True (repeatable)")
    args = ap.parse_args()
    SETTINGS.update(item.split("=", 1) for item in args.env)
    only = set(args.only.split(","))
    base = args.dir or Path(tempfile.mkdtemp(prefix="controller-cost-"))
    if args.counts:
        args.fleet = 1
    rows: list[str] = []
    profiles: dict[str, list[dict]] = {}
    modules: dict[str, list[dict]] = {}
    splits: dict[str, dict] = {}
    sizes = {1} | ({3} if "lifecycle" in only and not args.counts else set()) | (
        {args.fleet} if only & {"info", "advise"} else set())
    found: dict[str, dict[str, float]] = {}
    for clusters in sorted(sizes):
        work = base / f"fleet-{clusters}"
        twin_dir = work / "twin"
        twin("up", "--dir", str(twin_dir), "--clusters", str(clusters), "--nodes", "2", "--time-scale", "0.01")
        try:
            # one cluster is the embedded default (inventories/twin), a fleet is inventories/twin-fleet's layout
            inventory = fleet_inventory(work, clusters) if clusters > 1 else REPO / "inventories" / "twin"
            plays = []
            if "lifecycle" in only and clusters in (1, 3):
                plays.append(("bench_csi_lifecycle.yml", {"volumes": args.volumes}))
            if "info" in only and clusters in (1, args.fleet):
                plays.append(("cluster_info.yml", {}))
            if "advise" in only and clusters in (1, args.fleet):
                plays.append(("advise.yml", {}))
            for playbook, extra in plays:
                reports = work / "reports" / playbook
                shutil.rmtree(reports, ignore_errors=True)
                got = timed(playbook, inventory, twin_dir, args.forks or clusters, dict(extra, reports_dir=str(reports)), work,
                            f"profile-{playbook}.jsonl")
                tasks_per, modules_per = counts(got, clusters)
                if clusters == 1:
                    found[playbook] = {"tasks": tasks_per, "modules": modules_per}
                steps = measured_steps(reports) / clusters if playbook.startswith("bench") else None
                rows.append(f"| `{playbook}` | {clusters} | {got['wall']:.1f} s | "
                            f"{'%.1f s' % steps if steps is not None else ''} | {got['cpu'] / clusters:.2f} | "
                            f"{tasks_per:.3g} | {modules_per:.3g} | {got['twin_cpu'] / clusters:.2f} |")
                profiles[f"{playbook} x{clusters}"] = got["tasks"]
                modules[f"{playbook} x{clusters}"] = got["modules"]
                splits[f"{playbook} x{clusters}"] = got["split"]
        finally:
            twin("down", "--dir", str(twin_dir))
    if not args.dir:
        shutil.rmtree(base, ignore_errors=True)
    if args.counts:
        print(json.dumps(found, indent=2, sort_keys=True))
        return 0
    print("| playbook | clusters (-f) | wall | measured steps per cluster | controller CPU-s per cluster "
          "| tasks per cluster | module runs per cluster | twin CPU-s per cluster |")
    print("|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    for name, tasks in profiles.items():
        print(f"\n{name}: costliest tasks (wall per cluster, summed over the runs of the task)")
        print("| task | action | s per cluster | results |")
        print("|---|---|---|---|")
        for task, action, seconds, results in costliest(tasks, args.tasks):
            print(f"| {task} | {action} | {seconds:.2f} | {results} |")
        clusters = int(name.rsplit("x", 1)[1])
        by_module = Counter(m["module"].rsplit(".", 1)[-1] for m in modules[name])
        print("module runs per cluster: " + ", ".join(f"{m} {n / clusters:.3g}" for m, n in by_module.most_common()))
        cpu: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
        for m in modules[name]:
            cpu[m["module"].rsplit(".", 1)[-1]][0] += m.get("module_cpu") or 0.0
            cpu[m["module"].rsplit(".", 1)[-1]][1] += m.get("worker_cpu") or 0.0
        print("module CPU-s per cluster (the module's process + the worker's payload): " + ", ".join(
            f"{m} {c[0] / clusters:.2f} + {c[1] / clusters:.2f}" for m, c in sorted(cpu.items(), key=lambda i: -sum(i[1]))))
        split = splits[name]
        if split:
            module_total = sum(sum(c) for c in cpu.values())
            print(f"controller CPU-s per cluster: ansible-playbook's own {split['playbook_cpu'] / clusters:.2f}, module runs "
                  f"{module_total / clusters:.2f}, the rest of the workers (forks, templating, tasks that run in the "
                  f"controller) {(split['workers_cpu'] - module_total) / clusters:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
