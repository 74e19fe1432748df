# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read Helm 3 releases from their storage Secrets, without the helm binary.

Helm 3 (driver "secret", its default) keeps every revision of a release in a Secret
`sh.helm.release.v1.<release>.v<revision>` of type `helm.sh/release.v1` in the release namespace,
labelled owner=helm, name=<release>, status=<deployed|superseded|failed|...>, version=<revision>.
`data.release` is base64 (the Secret encoding) of base64(gzip(JSON of the release)) (helm
pkg/storage/driver/util.go encodeRelease). The JSON holds name, namespace, version, info.status,
chart.metadata{name,version,appVersion}, chart.values (the chart's defaults) and config (the user's values).
"""
from __future__ import annotations

import base64
import binascii
import gzip
import json
from typing import TYPE_CHECKING, Any

from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError

if TYPE_CHECKING:  # annotations only: importing the client pulls in the kubernetes library
    from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.client import Client

RELEASE_SECRET_TYPE = "helm.sh/release.v1"
GZIP_MAGIC = b"\x1f\x8b\x08"


class HelmError(StoragePerfError):
    pass


def decode_release(data: str | bytes) -> Any:
    """The release JSON from a Secret's `data.release` (as the API returns it: base64 text)."""
    try:
        raw = base64.b64decode(data)
        if not raw.startswith(GZIP_MAGIC) and not raw.lstrip().startswith(b"{"):
            raw = base64.b64decode(raw)  # the Secret's own base64 around Helm's base64
        if raw.startswith(GZIP_MAGIC):
            raw = gzip.decompress(raw)
        return json.loads(raw.decode("utf-8"))
    except (binascii.Error, ValueError, OSError, EOFError) as e:
        raise HelmError("not a Helm 3 release payload (%s)" % e) from e


def encode_release(release: dict[str, Any]) -> str:
    """The `data.release` value Helm writes for a release dict (inverse of decode_release)."""
    helm_payload = base64.b64encode(gzip.compress(json.dumps(release).encode("utf-8")))
    return base64.b64encode(helm_payload).decode("ascii")


def merged_values(release: dict[str, Any]) -> dict[str, Any]:
    """Effective values: the chart's defaults with the user's config merged over them (as helm does)."""
    return _merge(dict((release.get("chart") or {}).get("values") or {}), release.get("config") or {})


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _merge(out[k], v)
        else:
            out[k] = v
    return out


def list_releases(client: Client, namespace: str | None, chart_name: str | None = None) -> list[dict[str, Any]]:
    """The latest deployed revision of each release in namespace (optionally only of one chart), decoded.

    Each item: {name, namespace, revision, status, chart, chart_version, app_version, values, config}.
    """
    items, _ = client.list("v1", "Secret", namespace=namespace, label_selector="owner=helm")
    latest: dict[str, dict[str, Any]] = {}
    for secret in items:
        if secret.get("type") != RELEASE_SECRET_TYPE or not (secret.get("data") or {}).get("release"):
            continue
        labels = secret["metadata"].get("labels") or {}
        if labels.get("status") not in ("deployed", None):
            continue
        try:
            rel = decode_release(secret["data"]["release"])
        except HelmError:
            continue
        meta = (rel.get("chart") or {}).get("metadata") or {}
        if chart_name and meta.get("name") != chart_name:
            continue
        if (rel.get("info") or {}).get("status", "deployed") != "deployed":
            continue
        item = dict(name=rel.get("name") or labels.get("name"), namespace=rel.get("namespace") or namespace,
                    revision=int(rel.get("version") or labels.get("version") or 0),
                    status=(rel.get("info") or {}).get("status", "deployed"), chart=meta.get("name"),
                    chart_version=meta.get("version"), app_version=meta.get("appVersion"),
                    values=merged_values(rel), config=rel.get("config") or {}, secret=secret["metadata"]["name"])
        if item["name"] not in latest or item["revision"] > latest[item["name"]]["revision"]:
            latest[item["name"]] = item
    return sorted(latest.values(), key=lambda r: r["name"])


def upgrade_command(release: dict[str, Any], chart_ref: str, sets: dict[str, Any]) -> str:
    """The `helm upgrade` that persists `sets` ({key: value}) in a release, keeping its other values."""
    args = " ".join("--set %s=%s" % (k, json.dumps(v) if not isinstance(v, str) else v) for k, v in sorted(sets.items()))
    return "helm upgrade %s %s -n %s --reuse-values --version %s %s" % (
        release["name"], chart_ref, release["namespace"], release.get("chart_version") or "<chart version>", args)
