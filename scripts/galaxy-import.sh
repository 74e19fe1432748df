#!/usr/bin/env bash
# galaxy-importer, the check Galaxy runs on an uploaded collection, on a built tarball, without containers
# (scripts/galaxy-importer.cfg), from .venv-release (scripts/setup.sh release creates it):
#   bash scripts/galaxy-import.sh build/storageperf-k8s-X.Y.Z.tar.gz
# Its log and importer_result.json (the contents and docs Galaxy would show) go to build/galaxy-importer/.
# Exits non-zero when the import fails, as the upload would.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
tarball=$(realpath "${1:?usage: scripts/galaxy-import.sh build/storageperf-k8s-X.Y.Z.tar.gz}")
[[ -x .venv-release/bin/python ]] || { echo "galaxy-import: no .venv-release: run bash scripts/setup.sh release" >&2; exit 1; }
out=$ROOT/build/galaxy-importer
rm -rf "$out" && mkdir -p "$out"
# Galaxy's environment: its own ansible-doc and ansible-lint first on PATH, none of this checkout's Ansible settings
# (the Makefile exports ANSIBLE_CONFIG and ANSIBLE_COLLECTIONS_PATH, which would show the importer collections
# that an upload does not have)
status=0
(cd "$out" && env -u ANSIBLE_CONFIG -u ANSIBLE_COLLECTIONS_PATH -u ANSIBLE_COLLECTIONS_PATHS \
   PATH="$ROOT/.venv-release/bin:$PATH" GALAXY_IMPORTER_CONFIG="$ROOT/scripts/galaxy-importer.cfg" \
   "$ROOT/.venv-release/bin/python" -m galaxy_importer.main "$tarball") > "$out/import.log" 2>&1 || status=$?
grep -v '^Loading ' "$out/import.log" || true
if ((status)) || ! grep -q '^Importer processing completed successfully$' "$out/import.log"; then
  echo "galaxy-import: galaxy-importer refused $tarball (exit $status; the whole log: $out/import.log)" >&2
  exit 1
fi
