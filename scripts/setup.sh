#!/usr/bin/env bash
# One-shot, idempotent set-up of a fresh Debian machine (run as root) for this repository:
# Debian packages from bindep.txt, a .venv with the pinned requirements (ranges of requirements.txt held to
# constraints.txt), a .venv-oldest with the oldest accepted ansible-core for sanity tests, a .venv-release with
# galaxy-importer (scripts/release.sh), kubernetes.core taken
# from the `ansible` wheel (Galaxy is not reachable here), this collection built and installed
# into ./collections, and the pip bootstrap stand-in that `ansible-test sanity` needs offline.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${PYTHON:-python3}
ANSIBLE_WHEEL_VERSION=12.3.0   # bundles kubernetes.core 6.2.0

log() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }

install_debian_packages() {
  local wanted=() installed=() missing=()
  mapfile -t wanted < <(sed -n 's/^\([a-z0-9.+-]*\) \[platform:dpkg.*$/\1/p' bindep.txt)
  # one dpkg-query for all of them (one per package took 0.6 s of every make demo)
  mapfile -t installed < <(dpkg-query -W -f='${Package} ${Status}\n' "${wanted[@]}" 2>/dev/null \
                             | sed -n 's/ install ok installed$//p')
  for p in "${wanted[@]}"; do
    [[ " ${installed[*]} " == *" $p "* ]] || missing+=("$p")
  done
  if ((${#missing[@]})); then
    log "apt-get install ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # glusterd, mariadbd, prometheus, prometheus-pushgateway and prometheus-node-exporter must not start as system
    # services: the tests start their own.
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    rm -f /usr/sbin/policy-rc.d
  fi
}

# A venv's stamp is the hash of the files it was installed from; a venv whose files changed since is reinstalled.
hash_of() { cat "$@" | sha256sum | cut -d' ' -f1; }
# venv_is_current DIR STAMP FILE...
venv_is_current() {
  local dir=$1 stamp=$2; shift 2
  [[ -x $dir/bin/python && -f $dir/$stamp && $(cat "$dir/$stamp") == "$(hash_of "$@")" ]]
}
pip_quiet() { "$@" 2>&1 | grep -v '^WARNING: Location' || true; }

# install_venv [demo]: with demo, only what `make demo` runs
install_venv() {
  # what the pip commands below read: requirements-dev.txt and its includes (requirements.txt,
  # requirements-twin.txt), requirements-s3*.txt, and constraints.txt, which pins requirements.txt's ranges
  local files=(requirements*.txt constraints.txt)
  venv_is_current .venv .requirements.sha "${files[@]}" && return
  [[ ${1:-} == demo ]] && venv_is_current .venv .requirements-demo.sha "${files[@]}" && return
  [[ -x .venv/bin/python ]] || "$PY" -m venv .venv
  if [[ ${1:-} == demo ]]; then
    # `make demo` runs the collection, the twin and the controller: half the files of the whole set (no linters,
    # test runners or the tests' own clients), so a fresh clone's demo starts sooner; `make test` adds the rest
    log "creating .venv with what make demo runs (make test adds the tools and the tests' clients)"
    local demo_reqs=(-r requirements.txt -r requirements-twin.txt "$(grep -m1 '^ansible-core==' requirements-dev.txt)"
                     -c constraints.txt)
    # uv (pinned in requirements-setup.txt), bytecode compiled as pip does (this machine's environment sets
    # PYTHONDONTWRITEBYTECODE, so what is not compiled here is compiled at every import); pip when uv cannot
    if ! { .venv/bin/pip install -q -r requirements-setup.txt >/dev/null 2>&1 \
           && .venv/bin/uv pip install -q --python .venv/bin/python --compile-bytecode "${demo_reqs[@]}"; }; then
      log "uv could not install the demo's requirements: pip installs them"
      pip_quiet .venv/bin/pip install -q --upgrade pip
      pip_quiet .venv/bin/pip install -q "${demo_reqs[@]}"
    fi
    .venv/bin/python -c 'import ansible, kubernetes, aiohttp, aliyunsdkcore, netapp_lib, matplotlib'
    hash_of "${files[@]}" > .venv/.requirements-demo.sha
    return
  fi
  log "creating .venv with the pinned requirements"
  pip_quiet .venv/bin/pip install -q --upgrade pip
  pip_quiet .venv/bin/pip install -q -r requirements-dev.txt -c constraints.txt
  # boto3 (reports_upload) and the local S3 server of its tests: --no-deps, requirements-s3.txt says why
  pip_quiet .venv/bin/pip install -q --no-deps -r requirements-s3-dev.txt
  .venv/bin/python -c 'import ansible, kubernetes, aiohttp, aliyunsdkcore, netapp_lib, molecule, boto3, moto, ansible_runner'
  hash_of "${files[@]}" > .venv/.requirements.sha
}

# install_single_venv DIR REQUIREMENTS WHY CHECK...: a venv of one requirements file, reinstalled when that file
# changes; CHECK is a command of the venv's bin/ that must run afterwards
install_single_venv() {
  local dir=$1 files=("$2") why=$3; shift 3
  venv_is_current "$dir" .requirements.sha "${files[@]}" && return
  log "creating $dir with $why (${files[0]})"
  [[ -x $dir/bin/python ]] || "$PY" -m venv "$dir"
  pip_quiet "$dir/bin/pip" install -q --upgrade pip
  pip_quiet "$dir/bin/pip" install -q -r "${files[0]}"
  "$dir/bin/$1" "${@:2}" >/dev/null
  hash_of "${files[@]}" > "$dir/.requirements.sha"
}

# the oldest ansible-core that meta/runtime.yml accepts, for `scripts/test.sh sanity` (ansible-test only)
install_oldest_venv() {
  install_single_venv .venv-oldest requirements-oldest.txt "the oldest accepted ansible-core" ansible-test --version
}

# galaxy-importer for scripts/release.sh and its test, apart: its pins (attrs<24) clash with .venv's
install_release_venv() {
  install_single_venv .venv-release requirements-release.txt galaxy-importer python -c 'import galaxy_importer.main'
}

install_kubernetes_core() {
  local dest=collections/ansible_collections/kubernetes/core
  [[ -f $dest/MANIFEST.json ]] && return
  log "extracting kubernetes.core from ansible==$ANSIBLE_WHEEL_VERSION"
  mkdir -p .cache/wheels collections/ansible_collections/kubernetes
  pip_quiet .venv/bin/pip download -q --no-deps -d .cache/wheels "ansible==$ANSIBLE_WHEEL_VERSION"
  local whl
  whl=$(ls .cache/wheels/ansible-"$ANSIBLE_WHEEL_VERSION"-*.whl | head -1)
  rm -rf .cache/kcore && mkdir -p .cache/kcore
  unzip -q "$whl" 'ansible_collections/kubernetes/core/*' -d .cache/kcore
  rm -rf "$dest" && mv .cache/kcore/ansible_collections/kubernetes/core "$dest"
}

install_pip_bootstrap_standin() {
  # ansible-test downloads get-pip.py from a host that is unreachable here; it accepts a cached copy.
  local f=$HOME/.ansible/test/cache/get_pip_24_2.py
  [[ -f $f ]] && return
  mkdir -p "$(dirname "$f")"
  cat > "$f" <<'PYEOF'
"""Stand-in for get-pip.py: ensurepip, then pip install what was asked."""
import subprocess
import sys

args = [a for a in sys.argv[1:] if a not in ("--no-setuptools", "--no-wheel")]
subprocess.check_call([sys.executable, "-m", "ensurepip", "--upgrade"])
if args:
    subprocess.check_call([sys.executable, "-m", "pip", "install", *args])
PYEOF
}

case "${1:-all}" in
  all)
    install_debian_packages
    install_venv
    install_oldest_venv
    install_release_venv
    install_kubernetes_core
    install_pip_bootstrap_standin
    scripts/install-collection.sh
    ;;
  demo)
    # what `make demo` runs; the oldest ansible-core's venv and ansible-test's stand-in are for `make test`
    install_debian_packages
    install_venv demo
    install_kubernetes_core
    scripts/install-collection.sh
    ;;
  python) install_venv; install_oldest_venv; install_release_venv; install_kubernetes_core; install_pip_bootstrap_standin; scripts/install-collection.sh ;;
  # what scripts/release.sh adds to a set-up checkout
  release) install_release_venv ;;
  *) echo "usage: $0 [all|demo|python|release]" >&2; exit 2 ;;
esac
