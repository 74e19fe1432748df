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
link=collections/ansible_collections/storageperf/k8s
# Nothing in the tree changed since the last install (no file or directory newer than its stamp; a deleted file
# changes its directory): the build would be the installed one, so skip it (0.7 s or more of every make demo).
# The scan leaves out what the build ignores anyway (galaxy.yml build_ignore) and what this script writes.
# Remove .cache/collection-installed to force a build.
installed_stamp=.cache/collection-installed
if [[ -f $installed_stamp && -f $link/FILES.json ]] && [[ -z $(find . \( -path ./.git -o -path ./.venv -o -path ./.venv-oldest -o -path ./.venv-release \
      -o -path ./.twin -o -path ./.ansible -o -path ./.cache -o -path ./collections -o -path ./build -o -path ./reports -o -path ./twin \
      -o -path ./benchmarks -o -path ./scripts -o -path ./tests/output -o -name __pycache__ -o -name '.*_cache' \
      -o -name .hypothesis \) -prune -o -newer "$installed_stamp" -print -quit) ]]; then
  echo "collections/ already holds this tree's build (nothing changed since it was installed)"
  exit 0
fi
touch "$installed_stamp.next"  # taken before the build reads the tree: what changes during it counts as newer
stamp=$(date +%s%N)
dest=.cache/collection-builds/$stamp
rm -f build/storageperf-k8s-*.tar.gz
.venv/bin/ansible-galaxy collection build --force --output-path build . >/dev/null
# The same files (FILES.json lists each one's sha256) stay where they are: ansible-playbook keys its role cache by
# the role's real path, so switching the link under a running playbook, even to equal files, crashes it.
built=$(tar -xzOf build/storageperf-k8s-*.tar.gz FILES.json | sha256sum)
if [[ -f $link/FILES.json && $(sha256sum < "$link/FILES.json") == "$built" ]]; then
  mv "$installed_stamp.next" "$installed_stamp"
  echo "collections/ already holds $(ls build/storageperf-k8s-*.tar.gz)"
  exit 0
fi
ANSIBLE_COLLECTIONS_PATH="$ROOT/$dest" .venv/bin/ansible-galaxy collection install --force --no-deps -p "$dest" build/storageperf-k8s-*.tar.gz >/dev/null
[[ -L $link || ! -e $link ]] || rm -rf "$link"   # a plain directory from an older layout
ln -sfn "$ROOT/$dest/ansible_collections/storageperf/k8s" "$link.new"
mv -T "$link.new" "$link"
mv "$installed_stamp.next" "$installed_stamp"
# playbooks still running keep using the build they started with: drop only builds that are both
# older than an hour and not among the newest five
ls -1d .cache/collection-builds/* | sort | head -n -5 | while read -r old; do
  if [[ -n $(find "$old" -maxdepth 0 -mmin +60) ]]; then rm -rf "$old"; fi
done
echo "installed $(ls build/storageperf-k8s-*.tar.gz) into collections/"
