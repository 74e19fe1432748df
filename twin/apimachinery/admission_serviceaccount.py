"""The ServiceAccount admission plugin (plugin/pkg/admission/serviceaccount/admission.go), on pod creation only:

- a pod without spec.serviceAccountName (nor the deprecated spec.serviceAccount) gets "default";
- the ServiceAccount must exist, else 403 Forbidden `pods "<name>" is forbidden: error looking up service account
  <ns>/<sa>: serviceaccount "<sa>" not found` (the name is metadata.generateName while the name is yet to be made);
- unless spec.automountServiceAccountToken, or else the account's automountServiceAccountToken, is false, every
  container and init container without a mount at /var/run/secrets/kubernetes.io/serviceaccount gets a read-only
  mount of the projected volume kube-api-access-<5 random characters> (a bound token of 3607 s, ca.crt from
  ConfigMap kube-root-ca.crt, the namespace from the downward API; defaultMode 420), added to spec.volumes unless a
  kube-api-access-* volume is there already;
- a pod without imagePullSecrets gets the account's.

Mirror pods (annotation kubernetes.io/config.mirror) are left alone. It runs in the store's write path
(store.before_write) so pods that controllers create pass it too, as they pass the real API server's; a pod in a
namespace that is missing or terminating is left to the namespace checks that follow (404 / 403), as
NamespaceLifecycle comes first upstream.
"""
from __future__ import annotations

import secrets
from typing import Any

from . import errors

DEFAULT_SA = "default"
MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
VOLUME_PREFIX = "kube-api-access-"
TOKEN_EXPIRATION = 3607  # serviceaccount.WarnOnlyBoundTokenExpirationSeconds
ROOT_CA_CONFIGMAP = "kube-root-ca.crt"
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"  # utilrand.String's alphabet (no vowels, no look-alikes)


def token_volume(name: str) -> dict:
    """TokenVolumeSource: the projected volume the plugin adds."""
    return {"name": name, "projected": {"sources": [
        {"serviceAccountToken": {"expirationSeconds": TOKEN_EXPIRATION, "path": "token"}},
        {"configMap": {"name": ROOT_CA_CONFIGMAP, "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace",
                                    "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}],
        "defaultMode": 420}}


def _dicts(value: Any) -> list[dict]:
    return [x for x in value if isinstance(x, dict)] if isinstance(value, list) else []


def _should_automount(sa: dict, spec: dict) -> bool:
    for flag in (spec.get("automountServiceAccountToken"), sa.get("automountServiceAccountToken")):
        if isinstance(flag, bool):
            return flag
    return True


def _mount_token(spec: dict) -> None:
    """mountServiceAccountToken: one volume, a mount in every (init) container that has none at MOUNT_PATH."""
    volumes = _dicts(spec.get("volumes"))
    existing = next((v["name"] for v in volumes if str(v.get("name", "")).startswith(VOLUME_PREFIX)), "")
    name = existing or VOLUME_PREFIX + "".join(secrets.choice(_ALPHANUMS) for _ in range(5))
    needs_volume = False
    for key in ("initContainers", "containers"):
        for c in _dicts(spec.get(key)):
            mounts = c.get("volumeMounts")
            if mounts is None:
                mounts = c["volumeMounts"] = []
            if not isinstance(mounts, list) or any(isinstance(m, dict) and m.get("mountPath") == MOUNT_PATH
                                                   for m in mounts):
                continue
            mounts.append({"name": name, "readOnly": True, "mountPath": MOUNT_PATH})
            needs_volume = True
    if needs_volume and not existing:
        if not isinstance(spec.get("volumes"), list):
            spec["volumes"] = []
        spec["volumes"].append(token_volume(name))


def install(store: Any) -> None:
    """Run the plugin on every pod the store creates."""
    pods_key = store.rt("", "v1", "pods").key
    ns_rt, sa_rt = store.rt("", "v1", "namespaces"), store.rt("", "v1", "serviceaccounts")

    def admit(rtype: Any, obj: dict, old: dict | None) -> None:
        if old is not None or rtype.key != pods_key:
            return
        md, spec = obj.get("metadata") or {}, obj.get("spec")
        if not isinstance(spec, dict) or MIRROR_ANNOTATION in (md.get("annotations") or {}):
            return
        ns = md.get("namespace", "")
        if not store.exists(ns_rt, None, ns) or store.get(ns_rt, None, ns)["metadata"].get("deletionTimestamp"):
            return
        name = spec.get("serviceAccountName") or spec.get("serviceAccount") or DEFAULT_SA
        if not isinstance(name, str):
            return  # decoding answers 400 for it
        spec["serviceAccountName"] = name
        if not store.exists(sa_rt, ns, name):
            pod = md.get("generateName") or md.get("name", "")
            raise errors.forbidden(f'pods "{pod}" is forbidden: error looking up service account {ns}/{name}: '
                                   f'serviceaccount "{name}" not found', {"name": pod, "kind": "pods"})
        sa = store.get(sa_rt, ns, name)
        if _should_automount(sa, spec):
            _mount_token(spec)
        if not spec.get("imagePullSecrets") and sa.get("imagePullSecrets"):
            spec["imagePullSecrets"] = [{"name": s.get("name", "")} for s in _dicts(sa["imagePullSecrets"])]

    store.before_write.append(admit)
