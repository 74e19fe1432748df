"""The resource types the twin serves: built-ins plus CRDs registered at run time."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .. import kinds

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
    # CRDs: the compiled openAPIV3Schema, additionalPrinterColumns and the scale subresource's paths
    schema: Any = field(default=None, compare=False, hash=False, repr=False)
    columns: tuple = field(default=(), compare=False, hash=False, repr=False)
    scale: Any = field(default=None, compare=False, hash=False, repr=False)
    # create-only kinds that are answered, never stored (the authorization.k8s.io and authentication.k8s.io reviews)
    verbs: tuple[str, ...] = ALL_VERBS

    @property
    def stored(self) -> bool:
        return self.verbs == ALL_VERBS

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


def _r(group, version, plural, kind, namespaced, short=(), sub=(), gen=False, cats=(), verbs=ALL_VERBS):
    return ResourceType(group, version, plural, kind, namespaced, tuple(short), tuple(sub), gen, tuple(cats),
                        verbs=tuple(verbs))


BUILTIN = [
    _r("", "v1", "namespaces", "Namespace", False, ["ns"], ["status", "finalize"]),
    _r("", "v1", "nodes", "Node", False, ["no"], ["status"]),
    _r("", "v1", "pods", "Pod", True, ["po"], ["status", "log", "exec", "attach", "portforward", "binding", "eviction"], cats=["all"]),
    _r("", "v1", "services", "Service", True, ["svc"], ["status"], cats=["all"]),
    _r("", "v1", "endpoints", "Endpoints", True, ["ep"]),
    _r("", "v1", "configmaps", "ConfigMap", True, ["cm"]),
    _r("", "v1", "secrets", "Secret", True),
    _r("", "v1", "events", "Event", True, ["ev"]),
    _r("", "v1", "serviceaccounts", "ServiceAccount", True, ["sa"], ["token"]),
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
    _r("apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", False, ["crd", "crds"],
       ["status"], True),
    _r("", "v1", "podtemplates", "PodTemplate", True),
    _r("", "v1", "resourcequotas", "ResourceQuota", True, ["quota"], ["status"]),
    _r("", "v1", "limitranges", "LimitRange", True, ["limits"]),
    _r("autoscaling", "v1", "horizontalpodautoscalers", "HorizontalPodAutoscaler", True, ["hpa"], ["status"], True, ["all"]),
    _r("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", True, ["pdb"], ["status"], True),
    _r("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False, ["pc"]),
    _r("authorization.k8s.io", "v1", "selfsubjectaccessreviews", "SelfSubjectAccessReview", False, verbs=["create"]),
    _r("authorization.k8s.io", "v1", "selfsubjectrulesreviews", "SelfSubjectRulesReview", False, verbs=["create"]),
    _r("authorization.k8s.io", "v1", "subjectaccessreviews", "SubjectAccessReview", False, verbs=["create"]),
    _r("authorization.k8s.io", "v1", "localsubjectaccessreviews", "LocalSubjectAccessReview", True, verbs=["create"]),
    _r("authentication.k8s.io", "v1", "selfsubjectreviews", "SelfSubjectReview", False, verbs=["create"]),
    _r("authentication.k8s.io", "v1", "tokenreviews", "TokenReview", False, verbs=["create"]),
] + [_r(k.group, k.version, k.plural, k.kind, k.namespaced, k.short_names, k.subresources, k.generation, k.categories)
     for k in kinds.KINDS]

# Groups that exist for subresources only (none: Scale's autoscaling/v1 also serves HPAs).
EXTRA_GROUP_VERSIONS: dict[str, list[str]] = {}


class Registry:
    """Lookup of resource types by (group, version, plural), kind, or short name."""

    def __init__(self) -> None:
        self._by_gvr: dict[tuple[str, str, str], ResourceType] = {}
        self._by_key: dict[tuple[str, str], ResourceType] = {}
        self._crd_owned: dict[str, list[tuple[str, str, str]]] = {}
        self.crd_openapi: dict[tuple[str, str, str], dict] = {}  # (group, version, plural) -> openAPIV3Schema
        self.generation = 0  # bumped whenever the set of served resources changes (discovery caches)
        for r in BUILTIN:
            self.add(r)

    def add(self, r: ResourceType) -> None:
        self._by_gvr[(r.group, r.version, r.plural)] = r
        self._by_key.setdefault(r.key, r)
        self.generation += 1

    def schema(self, r: ResourceType) -> Any:
        """The compiled schema of a CRD-served type (None: no schema known)."""
        cur = self._by_gvr.get((r.group, r.version, r.plural))
        return (cur or r).schema

    def crd_types(self, crd_name: str) -> list[ResourceType]:
        return [self._by_gvr[k] for k in self._crd_owned.get(crd_name, []) if k in self._by_gvr]

    def get(self, group: str, version: str, plural: str) -> ResourceType | None:
        return self._by_gvr.get((group, version, plural))

    def by_key(self, key: tuple[str, str]) -> ResourceType | None:
        r = self._by_key.get(key)
        if r is not None and (r.group, r.version, r.plural) in self._by_gvr:
            return r
        for r in self._by_gvr.values():
            if r.key == key:
                self._by_key[key] = r
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
        from ..validation import compile_crd_schema

        spec = crd["spec"]
        names = spec["names"]
        self.unregister_crd(crd["metadata"]["name"])
        keys = []
        served = [v for v in spec.get("versions", []) if v.get("served", True)]
        # the storage version first: it is the preferred version in discovery
        served.sort(key=lambda v: not v.get("storage"))
        for v in served:
            subres = v.get("subresources") or {}
            subs = tuple(s for s in ("status", "scale") if s in subres)
            schema = compile_crd_schema((v.get("schema") or {}).get("openAPIV3Schema"))
            r = ResourceType(spec["group"], v["name"], names["plural"], names["kind"],
                             spec.get("scope", "Namespaced") == "Namespaced",
                             tuple(names.get("shortNames", [])), subs, True,
                             tuple(names.get("categories", [])), True, tuple(x["name"] for x in served),
                             schema=schema, columns=tuple(v.get("additionalPrinterColumns") or ()),
                             scale=subres.get("scale"))
            self.add(r)
            keys.append((r.group, r.version, r.plural))
            self.crd_openapi[keys[-1]] = (v.get("schema") or {}).get("openAPIV3Schema") or {"type": "object"}
        self._crd_owned[crd["metadata"]["name"]] = keys

    def unregister_crd(self, name: str) -> None:
        for k in self._crd_owned.pop(name, []):
            self.crd_openapi.pop(k, None)
            r = self._by_gvr.pop(k, None)
            if r is not None and self._by_key.get(r.key) is r:
                self._by_key.pop(r.key, None)
            self.generation += 1
