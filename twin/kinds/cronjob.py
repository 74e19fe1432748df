"""batch/v1 CronJob: defaults (SetDefaults_CronJob), validation (ValidateCronJobCreate), `kubectl get` columns
(printCronJob). controllers/cronjob.py runs them."""
from __future__ import annotations

from typing import Any

from ..apimachinery import fieldrules as fr
from ..apimachinery.podspec import pod_spec
from ..apimachinery.printing import _age, _c, _name, _selector, _since
from . import cron
from .base import Causes, Kind

_POLICIES = ("Allow", "Forbid", "Replace")


def default(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("concurrencyPolicy", "Allow")
    spec.setdefault("suspend", False)
    spec.setdefault("successfulJobsHistoryLimit", 3)
    spec.setdefault("failedJobsHistoryLimit", 1)
    jt = spec.setdefault("jobTemplate", {})
    jt.setdefault("metadata", {})
    tpl = jt.setdefault("spec", {}).setdefault("template", {})
    tpl.setdefault("metadata", {})
    pod_spec(tpl.setdefault("spec", {}))
    obj.setdefault("status", {})


def _nonnegative(spec: dict, name: str, field: str) -> Causes:
    v = spec.get(name)
    return [fr.invalid(field, v, "must be greater than or equal to 0")] if isinstance(v, int) and v < 0 else []


def validate(obj: dict) -> Causes:
    name = (obj.get("metadata") or {}).get("name")
    out: Causes = []
    if isinstance(name, str) and len(name) > 52:  # the Job names it makes get an 11-character suffix
        out.append(fr.invalid("metadata.name", name, "must be no more than 52 characters"))
    spec = obj.get("spec") or {}
    schedule = spec.get("schedule")
    if not schedule:
        out.append(fr.required("spec.schedule"))
    else:
        err = cron.parse_error(schedule)
        if err:
            out.append(fr.invalid("spec.schedule", schedule, err))
        if "TZ" in schedule:
            out.append(fr.invalid("spec.schedule", schedule,
                                  "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"))
    if "timeZone" in spec and spec["timeZone"] is not None:
        err = cron.time_zone_error(spec["timeZone"])
        if err:
            out.append(fr.invalid("spec.timeZone", spec["timeZone"], err))
    cp = spec.get("concurrencyPolicy")
    if not cp:
        out.append(fr.required("spec.concurrencyPolicy"))
    elif cp not in _POLICIES:
        out.append(fr.not_supported("spec.concurrencyPolicy", cp, _POLICIES))
    for f in ("startingDeadlineSeconds", "successfulJobsHistoryLimit", "failedJobsHistoryLimit"):
        out += _nonnegative(spec, f, f"spec.{f}")
    jt = spec.get("jobTemplate")
    if not isinstance(jt, dict) or not isinstance(jt.get("spec"), dict):
        return out + [fr.required("spec.jobTemplate")]
    js = jt["spec"]
    out += fr.labels((jt.get("metadata") or {}).get("labels"), "spec.jobTemplate.metadata.labels")
    if js.get("selector") is not None:
        out.append(fr.invalid("spec.jobTemplate.spec.selector", js["selector"], "`selector` will be auto-generated"))
    if js.get("manualSelector"):
        out.append(fr.not_supported("spec.jobTemplate.spec.manualSelector", True, ("nil", "false")))
    for f in ("parallelism", "completions", "activeDeadlineSeconds", "backoffLimit"):
        out += _nonnegative(js, f, f"spec.jobTemplate.spec.{f}")
    out += fr.pod_spec((js.get("template") or {}).get("spec"), "spec.jobTemplate.spec.template.spec")
    return out


def _bool(v: Any) -> str:
    return "<unset>" if v is None else "True" if v else "False"


def row(o: dict) -> list[Any]:
    sp, st = o.get("spec") or {}, o.get("status") or {}
    js = (sp.get("jobTemplate") or {}).get("spec") or {}
    cs = ((js.get("template") or {}).get("spec") or {}).get("containers") or []
    last = st.get("lastScheduleTime")
    return [_name(o), sp.get("schedule", ""), sp.get("timeZone") or "<none>", _bool(sp.get("suspend")),
            len(st.get("active") or []), _since(last) if last else "<none>", _age(o),
            ",".join(c.get("name", "") for c in cs), ",".join(c.get("image", "") for c in cs),
            _selector(js.get("selector"))]


KIND = Kind("batch", "v1", "cronjobs", "CronJob", True, ("cj",), ("status",), True, ("all",),
            default=default, validate=validate, workload=("spec.jobTemplate.spec", "Job"),
            columns=(_c("Name"), _c("Schedule"), _c("Timezone"), _c("Suspend", "boolean"), _c("Active", "integer"),
                     _c("Last Schedule", "date"), _c("Age"), _c("Containers", priority=1), _c("Images", priority=1),
                     _c("Selector", priority=1)),
            row=row)
