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
# 0.01 makes the seeds' minutes take seconds; the twin keeps their ratios (docs/calibration.md).
TIME_SCALE=${TIME_SCALE:-0.01}
export STORAGEPERF_TWIN_DIR=$TWIN_DIR

python -m twin up --dir "$TWIN_DIR" --nodes 3 --time-scale "$TIME_SCALE"
trap 'python -m twin down --dir "$TWIN_DIR" >/dev/null' EXIT

ansible-playbook -i inventories/twin playbooks/cluster_info.yml

reports=()
for pb in bench_attach_stress bench_csi_lifecycle; do
  if [[ -f playbooks/$pb.yml ]]; then
    ansible-playbook -i inventories/twin "playbooks/$pb.yml" -e compare=true
    latest=$(ls -td reports/*/*/ 2>/dev/null | head -1 || true)
    [[ -n $latest && -f $latest/report.html ]] && reports+=("$ROOT/${latest%/}/report.html")
  fi
done

if ((${#reports[@]})); then
  printf '\nReports:\n'
  printf '  %s\n' "${reports[@]}"
fi
