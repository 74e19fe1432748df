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
link=collections/ansible_collections/storageperf/k8s
# The same files (FILES.json lists each one's sha256) stay where they are: ansible-playbook keys its role cache by
# the role's real path, so switching the link under a running playbook, even to equal files, crashes it.
built=$(tar -xzOf build/storageperf-k8s-*.tar.gz FILES.json | sha256sum)
if [[ -f $link/FILES.json && $(sha256sum < "$link/FILES.json") == "$built" ]]; then
  echo "collections/ already holds $(ls build/storageperf-k8s-*.tar.gz)"
  exit 0
fi
ANSIBLE_COLLECTIONS_PATH="$ROOT/$dest" .venv/bin/ansible-galaxy collection install --force --no-deps -p "$dest" build/storageperf-k8s-*.tar.gz >/dev/null
[[ -L $link || ! -e $link ]] || rm -rf "$link"   # a plain directory from an older layout
ln -sfn "$ROOT/$dest/ansible_collections/storageperf/k8s" "$link.new"
mv -T "$link.new" "$link"
# playbooks still running keep using the build they started with: drop only builds that are both
# older than an hour and not among the newest five
ls -1d .cache/collection-builds/* | sort | head -n -5 | while read -r old; do
  if [[ -n $(find "$old" -maxdepth 0 -mmin +60) ]]; then rm -rf "$old"; fi
done
echo "installed $(ls build/storageperf-k8s-*.tar.gz) into collections/"
