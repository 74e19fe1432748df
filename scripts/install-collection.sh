#!/usr/bin/env bash
# Build the collection exactly as it ships (galaxy.yml build_ignore applies) and install it into
# ./collections, so that playbooks and tests run the shipped artefact, not the working tree.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build collections .cache
# Several test runs may install at once; one at a time, or they delete each other's files.
exec 9>.cache/install-collection.lock
flock 9
rm -f build/storageperf-k8s-*.tar.gz
.venv/bin/ansible-galaxy collection build --force --output-path build . >/dev/null
.venv/bin/ansible-galaxy collection install --force --no-deps -p collections build/storageperf-k8s-*.tar.gz >/dev/null
echo "installed $(ls build/storageperf-k8s-*.tar.gz) into collections/"
