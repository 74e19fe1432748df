#!/usr/bin/env bash
# Build the collection exactly as it ships (galaxy.yml build_ignore applies) and install it into
# ./collections, so that playbooks and tests run the shipped artefact, not the working tree.
#
# Each build is installed into its own directory and collections/ansible_collections/storageperf/k8s
# is a symlink switched atomically, so playbooks that are running keep a complete copy.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
mkdir -p build collections/ansible_collections/storageperf .cache/collection-builds
exec 9>.cache/install-collection.lock
flock 9
stamp=$(date +%s%N)
dest=.cache/collection-builds/$stamp
rm -f build/storageperf-k8s-*.tar.gz
.venv/bin/ansible-galaxy collection build --force --output-path build . >/dev/null
ANSIBLE_COLLECTIONS_PATH="$ROOT/$dest" .venv/bin/ansible-galaxy collection install --force --no-deps -p "$dest" build/storageperf-k8s-*.tar.gz >/dev/null
link=collections/ansible_collections/storageperf/k8s
[[ -L $link || ! -e $link ]] || rm -rf "$link"   # a plain directory from an older layout
ln -sfn "$ROOT/$dest/ansible_collections/storageperf/k8s" "$link.new"
mv -T "$link.new" "$link"
# keep a few older builds for playbooks still running from them
ls -1d .cache/collection-builds/* | sort | head -n -5 | xargs -r rm -rf
echo "installed $(ls build/storageperf-k8s-*.tar.gz) into collections/"
