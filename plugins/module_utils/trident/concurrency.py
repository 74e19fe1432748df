# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""NetApp Trident: how it was installed, its version, its backends' drivers, and its concurrent core.

The concurrent core (Trident's controller without the global lock) is one switch with three spellings,
one per install method (NetApp docs, "controller scalability"):
- operator: TridentOrchestrator `spec.enableConcurrency: true`; the operator echoes it in
  `status.currentInstallationParams.enableConcurrency` as the STRING "true"/"false";
- Helm (the trident-operator chart): value `enableConcurrency`, which the chart renders into the
  TridentOrchestrator it creates, so the operator path applies, plus the release values to persist it;
- tridentctl: `tridentctl install --enable-concurrency`; an existing tridentctl install must be reinstalled.
All of them end as `--enable_concurrency=true` on the trident-main container of the trident-controller Deployment.

Support by version (tech preview before 26.02; a backend with an unsupported driver stops Trident or is
not added) is in SUPPORT below; `preflight` refuses before anything changes.
"""
from __future__ import annotations


import re
from typing import Any, Callable, Iterable

from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.container_args import get_flag
from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.helm import list_releases, upgrade_command
from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError

TRIDENT_API = "trident.netapp.io/v1"
CONTROLLER_LABEL = "app=controller.csi.trident.netapp.io"
CONTROLLER_NAMES = ("trident-controller", "trident-csi")  # trident-csi before 22.x
OPERATOR_LABEL = "app=operator.trident.netapp.io"
MAIN_CONTAINER = "trident-main"
CONCURRENCY_FLAG = "enable_concurrency"
K8S_QPS_FLAG = "k8s_api_qps"
HELM_CHART = "trident-operator"
HELM_CHART_REF = "netapp-trident/trident-operator"
DEFAULT_NAMESPACE = "trident"

# (first version, GA?, drivers supported with concurrency) — NetApp's controller-scalability docs and release notes.
SUPPORT = (
    ((25, 6), False, ("ontap-san",)),
    ((25, 10), False, ("ontap-san", "ontap-nas")),
    ((26, 2), True, ("ontap-nas", "ontap-san", "google-cloud-netapp-volumes")),
    ((26, 6), True, ("ontap-nas", "ontap-san", "google-cloud-netapp-volumes", "ontap-nas-economy",
                     "ontap-san-economy", "azure-netapp-files", "solidfire-san")),
)
FIRST_VERSION = SUPPORT[0][0]
GA_VERSION = next(v for v, ga, _ in SUPPORT if ga)

_VERSION_RE = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?(?:[-+].*)?$")


class TridentError(StoragePerfError):
    """A refusal or failure with a message that names what is wrong and how to fix it; details are facts to
    report beside it (unsupported_backends, version, ...)."""


class TridentNotInstalled(TridentError):
    """Nothing of Trident in the cluster (as opposed to an install that cannot be switched)."""


# versions -------------------------------------------------------------------------------------------
def parse_version(text: object) -> tuple[int, int, int] | None:
    """"25.06.1", "v26.02.0", "26.06.0-custom.1" -> (25, 6, 1); None when it is not a Trident version."""
    if text is None:
        return None
    m = _VERSION_RE.match(str(text).strip())
    if not m:
        return None
    return int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)


def format_version(v: tuple[int, ...] | None) -> str:
    return "%d.%02d.%d" % v if v else "unknown"


def support_for(version: tuple[int, ...]) -> tuple[tuple[int, int], bool, tuple[str, ...]] | None:
    """(since, ga, drivers) of the newest SUPPORT row at or below version; None before 25.06."""
    row = None
    for since, ga, drivers in SUPPORT:
        if tuple(version[:2]) >= since:
            row = (since, ga, drivers)
    return row


def first_version_supporting(driver: str | None) -> tuple[int, int] | None:
    for since, _, drivers in SUPPORT:
        if driver in drivers:
            return since
    return None


def image_version(image: str | None) -> str | None:
    """netapp/trident:25.06.0 -> "25.06.0" (None without a version tag)."""
    if not image:
        return None
    tag = image.split("@", 1)[0].rsplit("/", 1)[-1].partition(":")[2]
    return tag if parse_version(tag) else None


# install discovery ----------------------------------------------------------------------------------
class Install:
    """What discover() found: method (operator|helm|tridentctl), namespace and the objects that say so."""

    def __init__(self, method: str, namespace: str, orchestrator: dict[str, Any] | None = None, controller: dict[str, Any] | None = None,
                 helm_release: dict[str, Any] | None = None, operator: dict[str, Any] | None = None) -> None:
        self.method = method
        self.namespace = namespace
        self.orchestrator = orchestrator
        self.controller = controller
        self.helm_release = helm_release
        self.operator = operator
        self.version: tuple[int, int, int] | None = None
        self.version_source: str | None = None

    def summary(self) -> dict[str, Any]:
        out = dict(method=self.method, namespace=self.namespace,
                   version=format_version(self.version) if self.version else None, version_source=self.version_source,
                   orchestrator=(self.orchestrator or {}).get("metadata", {}).get("name"),
                   controller=(self.controller or {}).get("metadata", {}).get("name"))
        if self.helm_release:
            keys = ("name", "namespace", "revision", "chart", "chart_version", "app_version")
            out["helm_release"] = {k: self.helm_release.get(k) for k in keys}
        return out


def _cr_namespace(cr: dict[str, Any]) -> str | None:
    return (cr.get("status") or {}).get("namespace") or (cr.get("spec") or {}).get("namespace")


def find_orchestrator(client: Any, namespace: str | None = None) -> dict[str, Any] | None:
    """The TridentOrchestrator (cluster scoped) for namespace (or the only one); None without the CRD or CR."""
    if not client.has_resource(TRIDENT_API, "TridentOrchestrator"):
        return None
    items, _ = client.list(TRIDENT_API, "TridentOrchestrator")
    if namespace:
        items = [cr for cr in items if _cr_namespace(cr) in (namespace, None)]
    if len(items) > 1:
        raise TridentError("several TridentOrchestrators found (%s): set namespace to the one Trident runs in"
                           % ", ".join("%s (namespace %s)" % (cr["metadata"]["name"], _cr_namespace(cr)) for cr in items))
    return items[0] if items else None


def find_controller(client: Any, namespace: str | None = None) -> dict[str, Any] | None:
    """The trident-controller Deployment (by label, else by name) in namespace or anywhere."""
    items, _ = client.list("apps/v1", "Deployment", namespace=namespace, label_selector=CONTROLLER_LABEL)
    if len(items) > 1:
        raise TridentError("several Trident controller Deployments found (%s): set namespace to the one to change"
                           % ", ".join("%s/%s" % (d["metadata"]["namespace"], d["metadata"]["name"]) for d in items))
    if items:
        return items[0]
    for name in CONTROLLER_NAMES:
        dep = client.get("apps/v1", "Deployment", name, namespace=namespace or DEFAULT_NAMESPACE, missing_ok=True)
        if dep:
            return dep
    return None


def find_helm_release(client: Any, namespaces: Iterable[str | None], orchestrator: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """The trident-operator Helm release: named by the CR's Helm annotations, else any in the namespaces."""
    ann = ((orchestrator or {}).get("metadata") or {}).get("annotations") or {}
    if ann.get("meta.helm.sh/release-name"):
        namespaces = [ann.get("meta.helm.sh/release-namespace")] + list(namespaces)
    seen = set()
    for ns in namespaces:
        if not ns or ns in seen:
            continue
        seen.add(ns)
        releases = list_releases(client, ns, chart_name=HELM_CHART)
        if ann.get("meta.helm.sh/release-name"):
            named = [r for r in releases if r["name"] == ann["meta.helm.sh/release-name"]]
            releases = named or releases
        if releases:
            return releases[0]
    return None


def discover(client: Any, namespace: str | None = None) -> Install:
    """How Trident was installed; raises TridentError when it is not installed at all."""
    cr = find_orchestrator(client, namespace)
    ns = namespace or (cr and _cr_namespace(cr))
    controller = find_controller(client, ns)  # type: ignore[arg-type]  # a found CR is never {}
    if controller is not None and not ns:
        ns = controller["metadata"]["namespace"]
    ns = ns or DEFAULT_NAMESPACE
    operators, _ = client.list("apps/v1", "Deployment", namespace=None if cr else ns, label_selector=OPERATOR_LABEL)
    operator = operators[0] if operators else None
    op_ns = operator["metadata"]["namespace"] if operator else None
    release = find_helm_release(client, [op_ns, ns], cr)
    if cr is not None:
        install = Install("helm" if release else "operator", ns, cr, controller, release, operator)
    elif release is not None:
        raise TridentError(
            "Trident's Helm release %s (namespace %s) has no TridentOrchestrator: the trident-operator chart creates one; "
            "run `%s` so the chart renders it with concurrency"
            % (release["name"], release["namespace"], upgrade_command(release, HELM_CHART_REF, {"enableConcurrency": True})),
            install=dict(method="helm", namespace=ns))
    elif controller is not None:
        install = Install("tridentctl", ns, None, controller, None, operator)
    else:
        raise TridentNotInstalled("Trident is not installed (no TridentOrchestrator, no Deployment with label %s or named "
                                  "%s in namespace %s): install Trident first, or set namespace to where it runs"
                                  % (CONTROLLER_LABEL, " or ".join(CONTROLLER_NAMES), ns))
    install.version, install.version_source = detect_version(client, install)
    return install


def main_container(deployment: dict[str, Any] | None) -> dict[str, Any] | None:
    for c in ((deployment or {}).get("spec", {}).get("template", {}).get("spec", {}).get("containers") or []):
        if c.get("name") == MAIN_CONTAINER:
            return c
    return None


def main_args(deployment: dict[str, Any] | None) -> list[str] | None:
    c = main_container(deployment)
    if c is None:
        return None
    return list((c.get("command") or [])[1:]) + list(c.get("args") or [])


def detect_version(client: Any, install: Install) -> tuple[tuple[int, int, int] | None, str | None]:
    """(version tuple, where it was read): orchestrator status, TridentVersion, then the trident-main image."""
    v = parse_version(((install.orchestrator or {}).get("status") or {}).get("version"))
    if v:
        return v, "TridentOrchestrator status.version"
    if client.has_resource(TRIDENT_API, "TridentVersion"):
        items, _ = client.list(TRIDENT_API, "TridentVersion", namespace=install.namespace)
        for tv in items:
            v = parse_version(tv.get("trident_version") or (tv.get("spec") or {}).get("trident_version"))
            if v:
                return v, "TridentVersion %s/%s" % (install.namespace, tv["metadata"]["name"])
    c = main_container(install.controller)
    v = parse_version(image_version((c or {}).get("image")))
    if v:
        return v, "trident-main image %s" % c.get("image")  # type: ignore[union-attr]  # v came from c
    if install.helm_release:
        v = parse_version(install.helm_release.get("app_version"))
        if v:
            return v, "Helm release appVersion"
    return None, None


# backends -------------------------------------------------------------------------------------------
def _driver_in_config(config: object) -> str | None:
    """storageDriverName in a TridentBackend's config ({"ontap_config": {...}} or flat)."""
    if not isinstance(config, dict):
        return None
    if config.get("storageDriverName"):
        return config["storageDriverName"]
    for v in config.values():
        if isinstance(v, dict) and v.get("storageDriverName"):
            return v["storageDriverName"]
    return None


def list_backends(client: Any, namespace: str) -> list[dict[str, Any]]:
    """[{kind, name, backend, driver}] from TridentBackendConfigs and from TridentBackends without one."""
    out = []
    known: set[str] = set()  # TBC uids, backend names and UUIDs: a TridentBackend made from a TBC is reported through it
    if client.has_resource(TRIDENT_API, "TridentBackendConfig"):
        tbcs, _ = client.list(TRIDENT_API, "TridentBackendConfig", namespace=namespace)
        for tbc in tbcs:
            md = tbc["metadata"]
            info = (tbc.get("status") or {}).get("backendInfo") or {}
            known.update(x for x in (md.get("uid"), info.get("backendName"), info.get("backendUUID")) if x)
            out.append(dict(kind="TridentBackendConfig", name="%s/%s" % (md["namespace"], md["name"]),
                            backend=info.get("backendName"), driver=(tbc.get("spec") or {}).get("storageDriverName")))
    if client.has_resource(TRIDENT_API, "TridentBackend"):
        tbes, _ = client.list(TRIDENT_API, "TridentBackend", namespace=namespace)
        for tbe in tbes:
            if known & {x for x in (tbe.get("configRef"), tbe.get("backendName"), tbe.get("backendUUID")) if x}:
                continue
            md = tbe["metadata"]
            out.append(dict(kind="TridentBackend", name="%s/%s" % (md["namespace"], md["name"]),
                            backend=tbe.get("backendName"), driver=_driver_in_config(tbe.get("config"))))
    return out


def _describe(b: dict[str, Any]) -> str:
    name = "%s %s" % (b["kind"], b["name"])
    if b.get("backend"):
        name += " (backend %s)" % b["backend"]
    return name


# preflight ------------------------------------------------------------------------------------------
def preflight(install: Install, backends: list[dict[str, Any]], allow_tech_preview: bool) -> list[str]:
    """Refuse (TridentError) what cannot run concurrently; return a list of warnings otherwise."""
    warnings = []
    v = install.version
    if v is None:
        raise TridentError("cannot tell the Trident version (no TridentOrchestrator status.version, TridentVersion or "
                           "versioned trident-main image in namespace %s): check that Trident is running there"
                           % install.namespace)
    row = support_for(v)
    if row is None:
        raise TridentError("Trident %s has no concurrent core (it arrived in %s as a tech preview, GA in %s): upgrade "
                           "Trident to %s or later" % (format_version(v), format_version(FIRST_VERSION + (0,)),
                                                       format_version(GA_VERSION + (0,)), format_version(GA_VERSION + (0,))),
                           version=format_version(v))
    since, ga, drivers = row
    if not ga:
        if not allow_tech_preview:
            raise TridentError("Trident %s offers the concurrent core only as a tech preview (GA from %s): upgrade Trident "
                               "to %s or later, or set allow_tech_preview: true to enable it anyway (not for production)"
                               % (format_version(v), format_version(GA_VERSION + (0,)), format_version(GA_VERSION + (0,))),
                               version=format_version(v))
        warnings.append("Trident %s: the concurrent core is a tech preview in this version (GA from %s)"
                        % (format_version(v), format_version(GA_VERSION + (0,))))
    bad = [b for b in backends if b.get("driver") not in drivers]
    if bad:
        parts = []
        for b in bad:
            first = first_version_supporting(b.get("driver"))
            fix = ("supported from Trident %s" % format_version(first + (0,))) if first else "not supported in any version"
            parts.append("%s uses driver %s (%s)" % (_describe(b), b.get("driver") or "unknown", fix))
        raise TridentError("Trident %s supports the concurrent core only for %s; %s. Concurrency is global and such a "
                           "backend would stop Trident or not be added: remove or migrate those backends, or upgrade "
                           "Trident; nothing was changed"
                           % (format_version(v), ", ".join(drivers), "; ".join(parts)),
                           unsupported_backends=bad, supported_drivers=list(drivers), version=format_version(v))
    return warnings


# state ----------------------------------------------------------------------------------------------
def as_bool(value: object) -> bool:
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in ("true", "1", "yes", "on") if value is not None else False


def observed(install: Install) -> dict[str, Any]:
    """What the cluster says now: the CR's wish, the operator's echo and the controller's flag."""
    cr = install.orchestrator or {}
    status = cr.get("status") or {}
    params = status.get("currentInstallationParams") or {}
    args = main_args(install.controller)
    return dict(
        spec_enable_concurrency=as_bool((cr.get("spec") or {}).get("enableConcurrency")) if cr else None,
        spec_k8s_api_qps=(cr.get("spec") or {}).get("k8sAPIQPS") if cr else None,
        orchestrator_status=status.get("status"),
        current_enable_concurrency=params.get("enableConcurrency"),
        controller_flag=get_flag(args, CONCURRENCY_FLAG) if args is not None else None,
        controller_k8s_api_qps=get_flag(args, K8S_QPS_FLAG) if args is not None else None,
    )


def desired_spec(install: Install, enable: bool, k8s_api_qps: int | None) -> dict[str, Any]:
    """The merge patch for the TridentOrchestrator spec, or {} when it already says so."""
    spec = (install.orchestrator or {}).get("spec") or {}
    patch: dict[str, Any] = {}
    if as_bool(spec.get("enableConcurrency")) != enable or ("enableConcurrency" not in spec and enable):
        patch["enableConcurrency"] = enable
    if k8s_api_qps is not None and spec.get("k8sAPIQPS") != k8s_api_qps:
        patch["k8sAPIQPS"] = k8s_api_qps
    return patch


def orchestrator_done(enable: bool, k8s_api_qps: int | None = None) -> Callable[[dict[str, Any] | None], bool]:
    """Predicate: the operator installed the wanted setting (raises on status Failed).

    The operator echoes every installation parameter as a string; k8sAPIQPS is compared when it echoes it.
    """
    want = "true" if enable else "false"

    def done(cr: dict[str, Any] | None) -> bool:
        status = (cr or {}).get("status") or {}
        if status.get("status") == "Failed":
            raise TridentError("the Trident operator reports status Failed: %s. Fix the cause (kubectl -n %s logs "
                               "deploy/trident-operator), or roll back with state=absent"
                               % (status.get("message") or "no message", _cr_namespace(cr or {}) or DEFAULT_NAMESPACE))
        params = status.get("currentInstallationParams") or {}
        if k8s_api_qps is not None and "k8sAPIQPS" in params and str(params["k8sAPIQPS"]) != str(k8s_api_qps):
            return False
        return status.get("status") == "Installed" and str(params.get("enableConcurrency", "false")).lower() == want

    return done


def controller_has_flag(enable: bool) -> Callable[[dict[str, Any] | None], bool]:
    """Predicate on the trident-controller Deployment: trident-main has --enable_concurrency=<enable>."""
    def has(dep: dict[str, Any] | None) -> bool:
        args = main_args(dep)
        return args is not None and as_bool(get_flag(args, CONCURRENCY_FLAG)) == enable

    return has


def tridentctl_message(install: Install, enable: bool) -> str:
    ns = install.namespace
    flag = " --enable-concurrency" if enable else ""
    return ("Trident in namespace %s was installed with tridentctl (Deployment %s, no TridentOrchestrator): its "
            "concurrency is fixed at install time and cannot be switched in place. Reinstall it: `tridentctl uninstall "
            "-n %s && tridentctl install -n %s%s` (backends and volumes are kept in the CRDs), then re-run this task"
            % (ns, install.controller["metadata"]["name"], ns, ns, flag))  # type: ignore[index]  # tridentctl: the controller


def helm_advice(install: Install, enable: bool) -> tuple[str | None, bool | None]:
    """(command, release value) when the Helm release's values disagree with what we set on its CR."""
    rel = install.helm_release
    if not rel:
        return None, None
    current = as_bool(rel["values"].get("enableConcurrency"))
    if current == enable:
        return None, current
    return upgrade_command(rel, HELM_CHART_REF, {"enableConcurrency": enable}), current
