#!/usr/bin/env bash
# The whole test suite (the README's test command runs this through `make test`).
# Stages: lint (ruff, mypy, ansible-lint; each also a stage of its own), sanity (ansible-test), integration (ansible-test targets against a twin),
# molecule, then one pytest run over units, twin and functional tests, whose summary line closes the output. Without
# arguments every stage runs, lint, sanity and the unit tests beside integration and molecule, then pytest over twin
# and functional tests (run_default); with some, those in order.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export PATH="$ROOT/.venv/bin:$PATH"
export ANSIBLE_CONFIG="$ROOT/ansible.cfg"
export ANSIBLE_COLLECTIONS_PATH="$ROOT/collections"
export PYTHONPATH="$ROOT/collections:$ROOT"
STAGES=("$@")  # none: run_default (every stage)

stage() { printf '\n\033[1m== %s (%s) ==\033[0m\n' "$*" "$(date -u +%T)"; }  # the time: where a run's minutes went

# ansible-test wants the collection at .../ansible_collections/<ns>/<name> as a real directory, and
# outside this git checkout (inside it, it would list files through git and skip the ignored copy).
# One tree per stage ($1: mypy, sanity, integration): the default run has stages that use one at the same time.
AT_BASE=${TMPDIR:-/tmp}/storageperf-ansible-test-$(printf %s "$ROOT" | md5sum | cut -c1-8)
ansible_test_tree() {
  local dest=$AT_BASE-$1/ansible_collections/storageperf/k8s
  rm -rf "$AT_BASE-$1" && mkdir -p "$dest"
  git ls-files -co --exclude-standard -z | grep -zv '^collections/' | xargs -0 cp --parents -t "$dest" 2>/dev/null || true
  echo "$dest"
}

# mypy (settings in pyproject.toml): twin/ from here, as it runs from the checkout; plugins/ in the
# ansible_collections/storageperf/k8s tree that ansible-test uses, the only layout where their imports
# (ansible_collections.storageperf.k8s.plugins.module_utils...) resolve and plugins/modules/x.py does not
# clash with plugins/module_utils/x.py. sed turns that tree's paths back into plugins/...; pipefail keeps
# mypy's exit status.
run_mypy() {
  mypy twin
  local tree root=$AT_BASE-mypy
  tree=$(ansible_test_tree mypy)
  (cd "$root" && MYPYPATH=$root mypy --config-file "$ROOT/pyproject.toml" "${tree#"$root/"}/plugins") \
    | sed "s|^${tree#"$root/"}/||"
}

# One function per linter, so that .pre-commit-config.yaml runs each exactly as here (`scripts/test.sh ruff` ...;
# tests/unit/test_precommit_hooks.py holds the two to the same tools).
run_ruff() { ruff check plugins twin tests benchmarks; }
run_ansible_lint() { ansible-lint --offline -q; }

run_lint() {
  stage "lint: ruff, mypy, ansible-lint (production profile)"
  run_ruff
  run_mypy
  run_ansible_lint
}

# Sanity with the newest ansible-core that meta/runtime.yml accepts (.venv's, requirements-dev.txt) and with the
# oldest (.venv-oldest, requirements-oldest.txt), each reading its own tests/sanity/ignore-<version>.txt.
run_sanity() {
  local tree venv
  tree=$(ansible_test_tree sanity)
  for venv in "$ROOT/.venv" "$ROOT/.venv-oldest"; do
    stage "ansible-test sanity: $("$venv/bin/ansible-test" --version)"
    (cd "$tree" && "$venv/bin/ansible-test" sanity --venv --python 3.11 --color no \
        --skip-test pylint ${SANITY_EXTRA:-})
  done
}

run_integration() {
  stage "ansible-test integration (against a twin and, with root and glusterd, a glusterd pool)"
  local tree twin_dir gluster_dir=""
  tree=$(ansible_test_tree integration)
  twin_dir=$ROOT/build/integration-twin
  python -m twin up --dir "$twin_dir" --nodes 3 --time-scale 0.01 >/dev/null
  # the gluster_* targets run their glusterd parts only against this pool (scripts/gluster-pool.sh needs root for
  # its namespaces); without it they check their arguments only
  if [[ $(id -u) == 0 ]] && command -v glusterd >/dev/null; then
    gluster_dir=$ROOT/build/integration-gluster
    bash scripts/gluster-pool.sh up --dir "$gluster_dir" >/dev/null || {
      bash scripts/gluster-pool.sh down --dir "$gluster_dir" >/dev/null; python -m twin down --dir "$twin_dir" >/dev/null
      return 1; }
  fi
  printf 'k8s_kubeconfig: %s\ntwin_dir: %s\ngluster_pool_dir: "%s"\n' "$twin_dir/kubeconfig" "$twin_dir" "$gluster_dir" \
    > "$tree/tests/integration/integration_config.yml"
  # the twin and the pool are stopped on failure too: errexit would leave the function without running a RETURN trap
  local rc=0
  (cd "$tree" && ansible-test integration --local --python 3.11 --color no) || rc=$?
  python -m twin down --dir "$twin_dir" >/dev/null
  [[ -z $gluster_dir ]] || bash scripts/gluster-pool.sh down --dir "$gluster_dir" >/dev/null
  return $rc
}

run_molecule() {
  stage "molecule"
  # One scenario per role, each against its own twin (extensions/molecule/, .config/molecule/config.yml), in its own
  # ephemeral directory, so MOLECULE_WORKERS (2) of them run at once; each one's output is printed whole when it
  # ends. (molecule's own --workers gives every step of a scenario a new ephemeral directory, which loses the twin
  # that create started.) xargs exits 123 when any scenario failed.
  local out rc=0
  out=$(mktemp -d)
  find extensions/molecule -mindepth 2 -maxdepth 2 -name molecule.yml -printf '%h\n' | xargs -n1 basename | sort |
    xargs -P "${MOLECULE_WORKERS:-2}" -I{} bash -c \
      'molecule test -s "$1" >"$2/$1.log" 2>&1; rc=$?; flock "$2" cat "$2/$1.log"; echo "molecule scenario $1: exit $rc"; exit $rc' \
      _ {} "$out" || rc=$?
  rm -rf "$out"
  return $rc
}

# The unit tests: no twin, no timing; in the default run, in the static lane (one process, as the other lane's
# stages use the second CPU).
run_units() {
  stage "pytest: unit tests"
  python -m pytest tests/unit -q -p no:cacheprovider -n "${UNIT_WORKERS:-0}"
}

run_pytest() {
  local paths=("$@")  # none: pyproject.toml's testpaths, every test
  stage "pytest: ${paths[*]:-every test}"
  local rc=0
  # Workers (pytest-xdist): most tests wait on a twin's cluster time or a playbook's processes rather than use a CPU:
  # with one worker per CPU the CPUs were a third idle (vmstat), so one worker more than CPUs (load ~4.5 on 2 CPUs,
  # 13 % idle). Every test owns its twins, ports and directories. The load widens the spread of a probe's
  # repetitions, the gate's evidence: the rollout tests' probes have the margin for it (parallel attach 4x measured
  # against 2.1x asked, since its probe is the seed's 28 pods). PYTEST_WORKERS=0 runs it in this process.
  # --durations names the slowest tests, where the suite's time goes.
  python -m pytest "${paths[@]}" -q -p no:cacheprovider --timeout 900 --durations=40 \
    -n "${PYTEST_WORKERS:-$(( $(nproc) + 1 ))}" --dist worksteal "${PYTEST_ARGS[@]}" || rc=$?
  # exit 5 = no tests collected; that is a failure of the suite, not a pass
  return $rc
}

# The default run (make test, CI): the static checks (lint, sanity: CPU, no twin) and the unit tests run beside the
# twin-backed stages (integration, molecule: mostly waiting on their twins' cluster time), which saves the shorter
# lane's minutes (the static lane ended 3 minutes before molecule, so the unit tests' 1.5 minutes fit in it); the
# static lane's output is held and printed whole after the other's. Then pytest over twin and functional tests,
# alone: they judge speedups measured on this machine. The static lane is a process group of its own (set -m),
# killed if this script ends early.
run_default() {
  local static_log static_pid static_rc=0
  static_log=$(mktemp)
  set -m
  (set -e; run_lint; run_sanity; run_units) >"$static_log" 2>&1 &
  static_pid=$!
  set +m
  trap 'kill -- -'"$static_pid"' 2>/dev/null; rm -f '"$static_log" EXIT
  run_integration
  run_molecule
  wait "$static_pid" || static_rc=$?
  trap - EXIT
  cat "$static_log"
  rm -f "$static_log"
  if [[ $static_rc != 0 ]]; then
    echo "lint, sanity or the unit tests failed (exit $static_rc): see its output above" >&2
    return "$static_rc"
  fi
  run_pytest tests/functional tests/twin
}

PYTEST_ARGS=()
if [[ $# == 0 ]]; then
  run_default
  exit 0
fi
for s in "${STAGES[@]}"; do
  case $s in
    lint) run_lint ;;
    ruff) run_ruff ;;
    mypy) run_mypy ;;
    ansible-lint) run_ansible_lint ;;
    sanity) run_sanity ;;
    integration) run_integration ;;
    molecule) run_molecule ;;
    pytest) run_pytest ;;
    units) run_units ;;
    twin-tests) python -m pytest tests/twin -q -p no:cacheprovider --timeout 900 ;;
    functional) python -m pytest tests/functional -q -p no:cacheprovider --timeout 900 ;;
    *) echo "unknown stage $s (lint sanity integration molecule pytest units twin-tests functional ruff mypy ansible-lint)" >&2; exit 2 ;;
  esac
done
