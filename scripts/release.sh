#!/usr/bin/env bash
# Cut a release of the collection (docs/releasing.md): `make release VERSION=major|minor|patch|X.Y.Z`.
#   1. checks the argument and the checkout (clean, unreleased changelog fragments with a release summary, no tag yet);
#   2. bumps galaxy.yml's version and the tarball execution-environment.yml installs;
#   3. antsibull-changelog release: changelogs/changelog.yaml and CHANGELOG.rst get the version's section (the
#      fragments' changes and the plugins whose version_added is this version), the fragments are removed;
#   4. builds build/storageperf-k8s-X.Y.Z.tar.gz and checks it with galaxy-importer, Galaxy's own import check (in
#      .venv-release, without containers: scripts/galaxy-importer.cfg);
#   5. commits "Release X.Y.Z" and tags it X.Y.Z (annotated). Nothing is pushed.
# A failure before the commit puts every tracked file back as it was.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export PATH=$ROOT/.venv/bin:$PATH  # antsibull-changelog runs ansible-doc

die() { printf 'release: %s\n' "$*" >&2; exit "${2:-1}"; }
log() { printf '\033[1m[release]\033[0m %s\n' "$*"; }

[[ $# -eq 1 && -n $1 ]] || die "usage: make release VERSION=major|minor|patch|X.Y.Z (scripts/release.sh <the same>)" 2
[[ -x .venv/bin/antsibull-changelog ]] || die ".venv has no antsibull-changelog: run make setup first"

current=$(sed -n 's/^version: *\([^ #]*\).*$/\1/p' galaxy.yml)
[[ $current =~ ^([0-9]+)\.([0-9]+)\.([0-9]+)$ ]] || die "galaxy.yml's version '$current' is not X.Y.Z"
major=${BASH_REMATCH[1]} minor=${BASH_REMATCH[2]} patch=${BASH_REMATCH[3]}
# every version changelogs/changelog.yaml has released
released=$(.venv/bin/python -c 'import yaml; print(*(yaml.safe_load(open("changelogs/changelog.yaml"))["releases"] or {}))')
case $1 in
  major) version=$((major + 1)).0.0 ;;
  minor) version=$major.$((minor + 1)).0 ;;
  patch) version=$major.$minor.$((patch + 1)) ;;
  *)
    [[ $1 =~ ^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$ ]] \
      || die "VERSION='$1': give major, minor, patch or a version X.Y.Z (numbers without leading zeros)" 2
    version=$1
    ;;
esac
above() { [[ $1 != "$2" && $(printf '%s\n' "$1" "$2" | sort -V | tail -1) == "$1" ]]; }
for r in $released; do
  above "$version" "$r" || die "VERSION=$version is not above $r, which changelogs/changelog.yaml has released" 2
done
[[ $version == "$current" ]] || above "$version" "$current" || die "VERSION=$version is below galaxy.yml's $current" 2

[[ -z $(git status --porcelain --untracked-files=no) ]] \
  || die "the checkout has uncommitted changes: commit or stash them first (a release is one commit of its own)"
! git rev-parse -q --verify "refs/tags/$version" >/dev/null || die "tag $version exists already"
shopt -s nullglob
fragments=(changelogs/fragments/*.yml changelogs/fragments/*.yaml)
((${#fragments[@]})) || die "changelogs/fragments/ is empty: nothing to release"
grep -lq '^release_summary:' "${fragments[@]}" \
  || die "no fragment has a release_summary: write changelogs/fragments/$version.yml with 'release_summary: >-' and a few lines on the release"

restore() {
  log "failed: every tracked file is put back as it was (nothing committed, no tag)"
  git checkout -q HEAD -- .
}
trap restore ERR

log "storageperf.k8s $current -> $version"
sed -i "s/^version: .*/version: $version/" galaxy.yml
sed -i "s#build/storageperf-k8s-[0-9][0-9.]*\.tar\.gz#build/storageperf-k8s-$version.tar.gz#g" execution-environment.yml

log "antsibull-changelog release --version $version"
.venv/bin/antsibull-changelog release --version "$version"
.venv/bin/antsibull-changelog lint-changelog-yaml changelogs/changelog.yaml

log "building build/storageperf-k8s-$version.tar.gz"
mkdir -p build
rm -f build/storageperf-k8s-*.tar.gz
.venv/bin/ansible-galaxy collection build --force --output-path build . >/dev/null
tarball=build/storageperf-k8s-$version.tar.gz
[[ -f $tarball ]]

bash scripts/setup.sh release
log "galaxy-importer on $tarball"
bash scripts/galaxy-import.sh "$tarball"

git add -A galaxy.yml execution-environment.yml CHANGELOG.rst changelogs
git commit -q -m "Release $version"
trap - ERR
git tag -a "$version" -m "storageperf.k8s $version"
log "committed and tagged $version ($(git rev-parse --short HEAD)); nothing pushed: git push origin HEAD $version"
