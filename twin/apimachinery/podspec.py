"""Pod spec defaulting (SetDefaults_PodSpec, _Container, _Probe ...), shared by every kind that carries a pod
template: the workloads in defaulters.py and the kinds in twin/kinds/. A leaf module."""
from __future__ import annotations

from typing import Any


def _probe(p: Any) -> None:
    if isinstance(p, dict):
        p.setdefault("timeoutSeconds", 1)
        p.setdefault("periodSeconds", 10)
        p.setdefault("successThreshold", 1)
        p.setdefault("failureThreshold", 3)


def pod_spec(spec: dict) -> None:
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("securityContext", {})
    spec.setdefault("enableServiceLinks", True)
    for c in (spec.get("initContainers") or []) + (spec.get("containers") or []):
        image = str(c.get("image", ""))
        tag = image.rsplit(":", 1)[1] if ":" in image.rsplit("/", 1)[-1] else "latest"
        c.setdefault("imagePullPolicy", "Always" if tag == "latest" else "IfNotPresent")
        c.setdefault("terminationMessagePath", "/dev/termination-log")
        c.setdefault("terminationMessagePolicy", "File")
        c.setdefault("resources", {})
        for p in c.get("ports") or []:
            p.setdefault("protocol", "TCP")
        for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
            _probe(c.get(probe))
    for v in spec.get("volumes") or []:
        if "configMap" in v:
            v["configMap"].setdefault("defaultMode", 420)
        if "secret" in v:
            v["secret"].setdefault("defaultMode", 420)


def template(obj: dict) -> None:
    tpl = obj.setdefault("spec", {}).setdefault("template", {})
    tpl.setdefault("metadata", {})
    pod_spec(tpl.setdefault("spec", {}))
