# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Edit command-line flags of a container in a Deployment, the way a person with `kubectl edit` would.

Kubernetes controllers (snapshot-controller, csi-provisioner, csi-attacher, csi-snapshotter, ...) are
Go programs that parse their flags with Go's `flag`/pflag packages, which accept `--name=value`,
`--name value`, `-name=value` and `-name value`, and let the last occurrence win. The editor here
understands all four forms, replaces the value of a managed flag where it first appears (so a
reviewer's diff shows one changed line), drops later duplicates (they would override it), appends
missing flags at the end, and never touches, reorders or re-spells any other argument.

Every flag this module manages takes a value; boolean flags (`--leader-election`) are never
managed, so `--flag value` is unambiguous for them.
"""
from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError

if TYPE_CHECKING:  # annotations only: importing the client pulls in the kubernetes library
    from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.client import Client


class ContainerArgsError(StoragePerfError):
    """A Deployment or container that cannot be edited as asked; the message says what to fix."""


def _match(token: object, flag: str) -> tuple[str, str | None] | None:
    """How `token` spells `flag` (name without dashes): ("eq", value), ("sep", None) or None."""
    if not isinstance(token, str) or not token.startswith("-") or token in ("-", "--"):
        return None
    body = token[2:] if token.startswith("--") else token[1:]
    name, eq, value = body.partition("=")
    if name != flag:
        return None
    return ("eq", value) if eq else ("sep", None)


def find_flag(args: Iterable[Any] | None, flag: str) -> list[tuple[int, int, Any]]:
    """Occurrences of `flag` in args: a list of (start index, token count, value or None)."""
    out = []
    i = 0
    args = list(args or [])
    while i < len(args):
        token = args[i]
        if token == "--":  # Go's flag parsing stops here: later tokens are positional
            break
        m = _match(token, flag)
        if m is None:
            i += 1
        elif m[0] == "eq":
            out.append((i, 1, m[1]))
            i += 1
        elif i + 1 < len(args):
            out.append((i, 2, args[i + 1]))
            i += 2
        else:  # a dangling `--flag` with no value: treat it as an occurrence without value
            out.append((i, 1, None))
            i += 1
    return out


def get_flag(args: Iterable[Any] | None, flag: str) -> Any:
    """The value Go would parse for `flag` (the last occurrence), or None when absent."""
    found = find_flag(args, flag)
    return found[-1][2] if found else None


def same_value(a: Any, b: Any) -> bool:
    """Whether two flag values mean the same: numbers compare by value ("75" == "75.0"), else text."""
    if a is None or b is None:
        return a is None and b is None
    try:
        return float(a) == float(b)
    except (TypeError, ValueError):
        return str(a) == str(b)


def format_value(value: object) -> str:
    """A flag value as a Go program expects it: 75.0 -> "75", 7.5 -> "7.5", True -> "true"."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def set_flags(args: Iterable[Any] | None, wanted: Mapping[str, Any]) -> list[Any]:
    """Return a new args list with `wanted` ({flag: value, or None to remove}) applied.

    A flag already set to an equal value (in any spelling, without later duplicates) is left exactly as
    written, so applying the same `wanted` twice changes nothing the second time.
    """
    out = list(args or [])
    for flag, value in wanted.items():
        found = find_flag(out, flag)
        if value is None:
            for start, count, _ in reversed(found):
                del out[start:start + count]
            continue
        value = format_value(value)
        if len(found) == 1 and same_value(found[0][2], value):
            continue
        for start, count, _ in reversed(found[1:]):
            del out[start:start + count]
        if found:
            start, count, _ = found[0]
            out[start:start + count] = ["--%s=%s" % (flag, value)]
        else:
            # before a "--" terminator, if any: flags after it would not be parsed as flags
            end = out.index("--") if "--" in out else len(out)
            out.insert(end, "--%s=%s" % (flag, value))
    return out


def current_values(args: Iterable[Any] | None, flags: Iterable[str]) -> dict[str, Any]:
    """{flag: value or None} for each flag name."""
    return {f: get_flag(args, f) for f in flags}


def _args_field(container: dict[str, Any], flags: Iterable[str]) -> str:
    """Where the flags of a container live: "args", or "command" when they are written there instead."""
    command = container.get("command") or []
    if not container.get("args") and any(find_flag(command[1:], f) for f in flags):
        return "command"
    return "args"


def container_flags(container: dict[str, Any], flags: Iterable[str]) -> dict[str, Any]:
    """{flag: value} as the program in `container` sees them (command and args together)."""
    tokens = list((container.get("command") or [])[1:]) + list(container.get("args") or [])
    return current_values(tokens, flags)


def edit_container(container: dict[str, Any], wanted: Mapping[str, Any]) -> tuple[dict[str, Any], str, list[Any], list[Any]]:
    """(new container dict, field edited, old list, new list) with `wanted` applied to its flags."""
    field = _args_field(container, list(wanted))
    new = copy.deepcopy(container)
    if field == "command":
        old = list(container.get("command") or [])
        new["command"] = old[:1] + set_flags(old[1:], wanted)
        return new, field, old, new["command"]
    old = list(container.get("args") or [])
    new["args"] = set_flags(old, wanted)
    return new, field, old, new["args"]


def pick_container(deployment: dict[str, Any], names: Sequence[str], image_hint: str | None = None,
                   only_fallback: bool = False) -> tuple[int, dict[str, Any]]:
    """(index, container) of a Deployment to edit: by name (first of `names`), else by image, else the only one."""
    containers = deployment.get("spec", {}).get("template", {}).get("spec", {}).get("containers") or []
    md = deployment.get("metadata", {})
    where = "Deployment %s/%s" % (md.get("namespace"), md.get("name"))
    for name in names or []:
        for index, c in enumerate(containers):
            if c.get("name") == name:
                return index, c
    if image_hint:
        hits = [(i, c) for i, c in enumerate(containers) if image_basename(c.get("image")) == image_hint]
        if len(hits) == 1:
            return hits[0]
    if only_fallback and len(containers) == 1:
        return 0, containers[0]
    raise ContainerArgsError("%s has no container named %s (it has %s): set the container name parameter to one of them"
                             % (where, " or ".join(names),
                                ", ".join(c.get("name", "?") for c in containers) or "none"))


def image_basename(image: str | None) -> str:
    """registry.k8s.io/sig-storage/csi-provisioner:v5.2.0@sha256:.. -> csi-provisioner."""
    if not image:
        return ""
    last = image.split("@", 1)[0].rsplit("/", 1)[-1]
    return last.split(":", 1)[0]


def container_json_patch(index: int, container: dict[str, Any], field: str, new_list: list[Any]) -> list[dict[str, Any]]:
    """A JSON patch that replaces one container's args (or command), guarded by a test of its name.

    The test makes the patch fail (422) instead of editing the wrong container when someone reordered the
    containers between our read and our write.
    """
    base = "/spec/template/spec/containers/%d" % index
    op = "replace" if field in container else "add"
    return [{"op": "test", "path": base + "/name", "value": container["name"]},
            {"op": op, "path": base + "/" + field, "value": new_list}]


def args_diff_text(name: str, field: str, values: Iterable[Any]) -> str:
    """A container's arg list as YAML-like lines, for Ansible's --diff."""
    return "%s.%s:\n%s" % (name, field, "".join("  - %s\n" % v for v in values))


# Labels and owners that mean an operator rewrites this Deployment.
OPERATOR_HINTS = ("app", "controller.csi.trident.netapp.io")


def operator_managed(deployment: dict[str, Any]) -> bool:
    md = deployment.get("metadata", {})
    labels = md.get("labels") or {}
    return bool(md.get("ownerReferences")) or labels.get(OPERATOR_HINTS[0]) == OPERATOR_HINTS[1]


# Tuning the client-side rate limits and workers of Kubernetes controllers ---------------------------------

# The flags of kubernetes-csi controllers (snapshot-controller, csi-provisioner, csi-attacher,
# csi-snapshotter) that decide how fast they work: workers, and client-go's token bucket.
TUNING_FLAGS = (("worker_threads", "worker-threads"), ("kube_api_qps", "kube-api-qps"),
                ("kube_api_burst", "kube-api-burst"))


# What the kubernetes-csi binaries use when a flag is not given (snapshot-controller, csi-provisioner,
# csi-attacher, csi-snapshotter all default to QPS 5 / burst 10): the values a partial change is checked against.
UPSTREAM_RATE_DEFAULTS = {"kube_api_qps": "5", "kube_api_burst": "10"}


def validate_tuning(settings: Mapping[str, Any], where: str = "", current: Mapping[str, Any] | None = None) -> list[str]:
    """Errors (strings naming the field and the fix) for worker threads, QPS and burst.

    `settings` holds the wanted values by option name (None = leave as is); `current` the values the
    container has now (by option name; None = the binary's default), so that burst >= qps is checked on
    the values that will be live. client-go's token bucket holds `burst` tokens and refills at `qps`; a
    bucket smaller than one second of QPS is a misconfiguration (Kubernetes components use burst = 2 x QPS).
    """
    errors = []
    prefix = where + "." if where else ""
    workers, qps, burst = (settings.get(k) for k, _ in TUNING_FLAGS)
    if workers is not None and workers <= 0:
        errors.append("%sworker_threads=%s must be > 0: give the number of parallel workers, e.g. 25" % (prefix, workers))
    if qps is not None and qps <= 0:
        errors.append("%skube_api_qps=%s must be > 0: client-go would stop talking to the API server; e.g. 75"
                      % (prefix, _fmt(qps)))
    if burst is not None and burst <= 0:
        errors.append("%skube_api_burst=%s must be > 0, and at least kube_api_qps; e.g. 150" % (prefix, burst))
    if errors:
        return errors
    live = {}
    if current is not None:  # checked against a container: unset flags mean the binary's defaults
        live = dict(UPSTREAM_RATE_DEFAULTS)
        live.update({k: v for k, v in current.items() if v is not None})
    eff_qps = qps if qps is not None else _number(live.get("kube_api_qps"))
    eff_burst = burst if burst is not None else _number(live.get("kube_api_burst"))
    if eff_qps is not None and eff_burst is not None and eff_burst < eff_qps:
        kept = "" if burst is not None else " (the value left in place)"
        errors.append("%skube_api_burst=%s%s must be >= kube_api_qps=%s: client-go's token bucket holds `burst` "
                      "requests and a bucket smaller than one second of QPS is a misconfiguration (Kubernetes "
                      "components use twice the QPS); set kube_api_burst to at least %s, e.g. %s"
                      % (prefix, _fmt(eff_burst), kept, _fmt(eff_qps), _fmt(eff_qps), _fmt(2 * eff_qps)))
    return errors


def _number(value: str | float | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _fmt(value: str | float | None) -> str:
    return format_value(float(value)) if value is not None else "unset"


def tuning_wanted(settings: Mapping[str, Any], state: str) -> dict[str, Any]:
    """{flag: value or None} for set_flags: the given settings (state present), or removal of all (absent)."""
    if state == "absent":
        return {flag: None for _, flag in TUNING_FLAGS}
    return {flag: settings[opt] for opt, flag in TUNING_FLAGS if settings.get(opt) is not None}


def tuning_values(container: dict[str, Any]) -> dict[str, Any]:
    """The three tuning flags of a container by option name, as strings (None = unset, the program's default)."""
    values = container_flags(container, [flag for _, flag in TUNING_FLAGS])
    return {opt: values[flag] for opt, flag in TUNING_FLAGS}


def running_values(deployment: dict[str, Any], container_name: str) -> dict[str, Any] | None:
    """The tuning flags of a named container in a (rolled-out) Deployment."""
    for c in deployment.get("spec", {}).get("template", {}).get("spec", {}).get("containers") or []:
        if c.get("name") == container_name:
            return tuning_values(c)
    return None


def plan_edits(deployment: dict[str, Any], edits: Iterable[tuple[tuple[int, dict[str, Any]], Mapping[str, Any]]]) -> list[dict[str, Any]]:
    """Per container: [{index, name, field, old, new, before, after, changed}] for edits [(container, wanted)]."""
    plan = []
    for (index, container), wanted in edits:
        new_container, field, old, new = edit_container(container, wanted)
        plan.append(dict(index=index, name=container.get("name"), container=container, field=field, old=old, new=new,
                         before=tuning_values(container), after=tuning_values(new_container), changed=old != new))
    return plan


def apply_plan(client: Client, deployment: dict[str, Any], plan: list[dict[str, Any]], check_mode: bool = False) -> Any:
    """Send one JSON patch with every changed container (guarded by resourceVersion); return the result.

    In check mode the patch goes with dryRun=All, so the API server still validates it (admission, schema).
    """
    md = deployment["metadata"]
    ops = [{"op": "test", "path": "/metadata/resourceVersion", "value": md["resourceVersion"]}]
    for p in plan:
        if p["changed"]:
            ops.extend(container_json_patch(p["index"], p["container"], p["field"], p["new"]))
    if len(ops) == 1:
        return deployment
    return client.patch("apps/v1", "Deployment", md["name"], ops, namespace=md.get("namespace"),
                        patch_type="json", dry_run=check_mode)


def plan_diff(plan: list[dict[str, Any]]) -> dict[str, str]:
    """Ansible diff (before/after text) of every planned container."""
    return {"before": "".join(args_diff_text(p["name"], p["field"], p["old"]) for p in plan),
            "after": "".join(args_diff_text(p["name"], p["field"], p["new"]) for p in plan)}
