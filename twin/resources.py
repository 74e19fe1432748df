"""The resource types the twin serves: built-ins plus CRDs registered at run time."""
from __future__ import annotations

from dataclasses import dataclass, field

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


@dataclass(frozen=True)
class ResourceType:
    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    subresources: tuple[str, ...] = ()
    # kinds whose spec changes bump metadata.generation (objects with a spec/status split)
    has_generation: bool = False
    categories: tuple[str, ...] = ()
    crd: bool = False
    served_versions: tuple[str, ...] = field(default=())

    @property
    def key(self) -> tuple[str, str]:
        """Storage key: one store per group/plural, whatever version a client asks for."""
        return (self.group, self.plural)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def singular(self) -> str:
        return self.kind.lower()

    @property
    def prefix(self) -> str:
        return f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"


def _r(group, version, plural, kind, namespaced, short=(), sub=(), gen=False, cats=()):
    return ResourceType(group, version, plural, kind, namespaced, tuple(short), tuple(sub), gen, tuple(cats))


BUILTIN = [
    _r("", "v1", "namespaces", "Namespace", False, ["ns"], ["status", "finalize"]),
    _r("", "v1", "nodes", "Node", False, ["no"], ["status"]),
    _r("", "v1", "pods", "Pod", True, ["po"], ["status", "log", "binding", "eviction"], cats=["all"]),
    _r("", "v1", "services", "Service", True, ["svc"], ["status"], cats=["all"]),
    _r("", "v1", "endpoints", "Endpoints", True, ["ep"]),
    _r("", "v1", "configmaps", "ConfigMap", True, ["cm"]),
    _r("", "v1", "secrets", "Secret", True),
    _r("", "v1", "events", "Event", True, ["ev"]),
    _r("", "v1", "serviceaccounts", "ServiceAccount", True, ["sa"]),
    _r("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", True, ["pvc"], ["status"]),
    _r("", "v1", "persistentvolumes", "PersistentVolume", False, ["pv"], ["status"]),
    _r("storage.k8s.io", "v1", "storageclasses", "StorageClass", False, ["sc"]),
    _r("storage.k8s.io", "v1", "csidrivers", "CSIDriver", False),
    _r("storage.k8s.io", "v1", "csinodes", "CSINode", False),
    _r("storage.k8s.io", "v1", "volumeattachments", "VolumeAttachment", False, [], ["status"]),
    _r("apps", "v1", "statefulsets", "StatefulSet", True, ["sts"], ["status", "scale"], True, ["all"]),
    _r("apps", "v1", "deployments", "Deployment", True, ["deploy"], ["status", "scale"], True, ["all"]),
    _r("apps", "v1", "replicasets", "ReplicaSet", True, ["rs"], ["status", "scale"], True, ["all"]),
    _r("apps", "v1", "daemonsets", "DaemonSet", True, ["ds"], ["status"], True, ["all"]),
    _r("apps", "v1", "controllerrevisions", "ControllerRevision", True),
    _r("batch", "v1", "jobs", "Job", True, [], ["status"], True, ["all"]),
    _r("coordination.k8s.io", "v1", "leases", "Lease", True),
    _r("rbac.authorization.k8s.io", "v1", "roles", "Role", True),
    _r("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", True),
    _r("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", False),
    _r("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", False),
    _r("apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", False, ["crd", "crds"], ["status"], True),
]

# Groups that exist for subresources only (Scale lives in autoscaling/v1).
EXTRA_GROUP_VERSIONS = {"autoscaling": ["v1"]}


class Registry:
    """Lookup of resource types by (group, version, plural), kind, or short name."""

    def __init__(self) -> None:
        self._by_gvr: dict[tuple[str, str, str], ResourceType] = {}
        self._crd_owned: dict[str, list[tuple[str, str, str]]] = {}
        for r in BUILTIN:
            self.add(r)

    def add(self, r: ResourceType) -> None:
        self._by_gvr[(r.group, r.version, r.plural)] = r

    def get(self, group: str, version: str, plural: str) -> ResourceType | None:
        return self._by_gvr.get((group, version, plural))

    def by_key(self, key: tuple[str, str]) -> ResourceType | None:
        for r in self._by_gvr.values():
            if r.key == key:
                return r
        return None

    def by_kind(self, api_version: str, kind: str) -> ResourceType | None:
        group, _, version = api_version.rpartition("/")
        for r in self._by_gvr.values():
            if r.group == group and r.version == version and r.kind == kind:
                return r
        return None

    def all(self) -> list[ResourceType]:
        return list(self._by_gvr.values())

    def group_versions(self) -> dict[str, list[str]]:
        """group -> served versions, preferred first."""
        out: dict[str, list[str]] = {}
        for r in self._by_gvr.values():
            vs = out.setdefault(r.group, [])
            if r.version not in vs:
                vs.append(r.version)
        for g, vs in EXTRA_GROUP_VERSIONS.items():
            out.setdefault(g, list(vs))
        return out

    def in_group_version(self, group: str, version: str) -> list[ResourceType]:
        return [r for r in self._by_gvr.values() if r.group == group and r.version == version]

    # CRDs -------------------------------------------------------------------------------
    def register_crd(self, crd: dict) -> None:
        spec = crd["spec"]
        names = spec["names"]
        self.unregister_crd(crd["metadata"]["name"])
        keys = []
        served = [v for v in spec.get("versions", []) if v.get("served", True)]
        for v in served:
            subs = tuple(s for s in ("status", "scale") if s in (v.get("subresources") or {}))
            r = ResourceType(spec["group"], v["name"], names["plural"], names["kind"],
                             spec.get("scope", "Namespaced") == "Namespaced",
                             tuple(names.get("shortNames", [])), subs, True,
                             tuple(names.get("categories", [])), True, tuple(x["name"] for x in served))
            self.add(r)
            keys.append((r.group, r.version, r.plural))
        self._crd_owned[crd["metadata"]["name"]] = keys

    def unregister_crd(self, name: str) -> None:
        for k in self._crd_owned.pop(name, []):
            self._by_gvr.pop(k, None)
