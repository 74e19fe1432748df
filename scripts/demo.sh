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

reports=()
for pb in bench_attach_stress bench_csi_lifecycle; do
  if [[ -f playbooks/$pb.yml ]]; then
    ansible-playbook -i "$INVENTORY" "${FORKS[@]}" "playbooks/$pb.yml" -e compare=true
    # the newest run of each cluster (reports/<cluster>/<run id>/)
    for cluster_dir in reports/*/; do
      latest=$(ls -td "$cluster_dir"*/ 2>/dev/null | head -1 || true)
      [[ -n $latest && -f $latest/report.html && $latest -nt $TWIN_DIR/twin.pid ]] && reports+=("$ROOT/${latest%/}/report.html")
    done
  fi
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
