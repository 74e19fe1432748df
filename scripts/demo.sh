#!/usr/bin/env bash
# The README's main job: start the cluster twin, run the collection's playbooks against it the way a
# user runs them against a real cluster, print the results and the report's path, stop the twin.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export PATH="$ROOT/.venv/bin:$PATH"
export ANSIBLE_CONFIG="$ROOT/ansible.cfg"
export ANSIBLE_COLLECTIONS_PATH="$ROOT/collections"
TWIN_DIR=${STORAGEPERF_TWIN_DIR:-$ROOT/.twin}
# 0.05 makes the seeds' minutes take seconds and keeps their per-step figures through the playbooks: at 0.01 a
# concurrency-on step (16-42 s in the seeds) lasts 0.16-0.42 s, no longer than the client's and the twin's own CPU
# for its 100 objects, which no time scale shrinks (docs/calibration.md "Through the collection").
TIME_SCALE=${TIME_SCALE:-0.05}
# CLUSTERS=3 make demo: a fleet of twin clusters, every playbook on all of them at once (inventories/twin-fleet)
CLUSTERS=${CLUSTERS:-1}
export STORAGEPERF_TWIN_DIR=$TWIN_DIR
INVENTORY=inventories/twin
FORKS=()
if ((CLUSTERS < 1 || CLUSTERS > 3)); then
  echo "CLUSTERS=$CLUSTERS: the demo runs 1 cluster (inventories/twin) or a fleet of 2 or 3 (inventories/twin-fleet)" >&2
  exit 2
elif ((CLUSTERS > 1)); then
  INVENTORY=inventories/twin-fleet
  FORKS=(--forks "$CLUSTERS" --limit "$(seq -s, -f 'twin-%g' 1 "$CLUSTERS")")
fi

python -m twin up --dir "$TWIN_DIR" --nodes 3 --time-scale "$TIME_SCALE" --clusters "$CLUSTERS"
trap 'python -m twin down --dir "$TWIN_DIR" >/dev/null' EXIT
# The twin's throwaway ACK/ECS keys and ONTAP user go where a real controller keeps its credentials, its
# environment (an AWX credential, `export`): no inventory holds them (docs/credentials.md).
set -a
# shellcheck source=/dev/null
. "$TWIN_DIR/env"
set +a

ansible-playbook -i "$INVENTORY" "${FORKS[@]}" playbooks/cluster_info.yml

# The two benchmarks share nothing on the cluster (ACK disks and pods on one node; Trident volumes through ONTAP)
# and spend most of their wall in the cluster's own (scaled) time, so they run side by side: the demo takes the
# longer one's time, not their sum (docs/performance.md "make demo"). Each writes its own log, shown whole and in
# order: the first as it runs, the second from its start once the first is done. DEMO_SERIAL=1 runs them one
# after the other.
benchmarks=()
for pb in bench_attach_stress bench_csi_lifecycle; do
  [[ -f playbooks/$pb.yml ]] && benchmarks+=("$pb")
done
if [[ ${DEMO_SERIAL:-0} == 1 ]]; then
  for pb in "${benchmarks[@]}"; do
    ansible-playbook -i "$INVENTORY" "${FORKS[@]}" "playbooks/$pb.yml" -e compare=true
  done
else
  logs=$(mktemp -d)
  trap 'python -m twin down --dir "$TWIN_DIR" >/dev/null; rm -rf "$logs"' EXIT
  pids=()
  for pb in "${benchmarks[@]}"; do
    ansible-playbook -i "$INVENTORY" "${FORKS[@]}" "playbooks/$pb.yml" -e compare=true >"$logs/$pb.log" 2>&1 &
    pids+=($!)
  done
  printf '\n%s run side by side; the output of each follows in turn.\n' "${benchmarks[*]}"
  failed=()
  for i in "${!benchmarks[@]}"; do
    # the whole log, then what it gains until the playbook exits (checked every 0.1 s, not tail's 1 s)
    tail -n +1 -s 0.1 -f --pid="${pids[$i]}" "$logs/${benchmarks[$i]}.log"
    wait "${pids[$i]}" || failed+=("${benchmarks[$i]}")
  done
  if ((${#failed[@]})); then
    echo "failed: ${failed[*]} (its output above says why)" >&2
    exit 1
  fi
fi

reports=()
for pb in "${benchmarks[@]}"; do
  # the newest run of this benchmark on each cluster (reports/<cluster>/<benchmark>-<run id>/)
  for cluster_dir in reports/*/; do
    latest=$(ls -td "$cluster_dir${pb#bench_}"-*/ 2>/dev/null | head -1 || true)
    [[ -n $latest && -f $latest/report.html && $latest -nt $TWIN_DIR/twin.pid ]] && reports+=("$ROOT/${latest%/}/report.html")
  done
done

if ((${#reports[@]})); then
  if ((CLUSTERS == 1)); then
    # every step of this run beside the seeds' figures (seed 000 and seed 002's tables in plugins/module_utils/report/seed_figures.py)
    printf '\nPer step, scaled back to cluster seconds, beside the seeds:\n\n'
    python benchmarks/harness_vs_seed.py --time-scale "$TIME_SCALE" --reports "${reports[@]%/report.html}" || true
  fi
  printf '\nReports:\n'
  printf '  %s\n' "${reports[@]}"
fi
# a fleet's playbooks each also wrote one report of every cluster side by side (reports/fleet-<UTC time>/)
fleet_reports=()
for fleet_dir in reports/fleet-*/; do
  [[ -f ${fleet_dir}fleet.html && $fleet_dir -nt $TWIN_DIR/twin.pid ]] && fleet_reports+=("$ROOT/${fleet_dir}fleet.html")
done
if ((${#fleet_reports[@]})); then
  printf '\nFleet reports:\n'
  printf '  %s\n' "${fleet_reports[@]}"
fi
