# Copyright: storageperf.k8s maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the gluster_volumes module does, kept out of the module file so it stays thin."""
from __future__ import annotations

import time
from typing import Any

from ansible_collections.storageperf.k8s.plugins.module_utils.gluster.cli import (
    NO_VOLUMES,
    GlusterCLI,
    GlusterError,
    VolumeResult,
    bricks_for,
    create_volume,
    delete_volume,
    invalid_volume_names,
    option_drift,
    parse_volume_info,
    parse_volume_list,
    run_parallel,
    set_options_on,
    volume_names,
)


def validate(p: dict) -> list[str]:
    """Every problem with the parameters, each naming the field and the fix. Nothing runs if any."""
    errors = []
    if p["prefix"] is not None and p["state"] == "present" and p["count"] is None:
        errors.append("count is required with prefix when state=present (how many volumes to create)")
    if p["count"] is not None and p["count"] < 0:
        errors.append(f"count must be >= 0; got {p['count']}")
    if p["count"] is not None and p["prefix"] is None:
        errors.append("count needs prefix (names are <prefix><index>); or list the volumes in names")
    if p["start_index"] < 0:
        errors.append(f"start_index must be >= 0; got {p['start_index']}")
    if p["parallel"] < 1:
        errors.append(f"parallel must be >= 1; got {p['parallel']}")
    if p["replica"] < 1:
        errors.append(f"replica must be >= 1; got {p['replica']}")
    if p["prefix"] is not None and invalid_volume_names([p["prefix"] + "0"]):
        errors.append(f"prefix {p['prefix']!r} may contain only letters, digits, _ and - (and not start with -)")
    if p["names"]:
        bad = invalid_volume_names(p["names"])
        if bad:
            errors.append(f"names contains invalid volume names {bad[:5]}: use letters, digits, _ and -, "
                          "at most 64 characters, not starting with -")
    if p["state"] == "present":
        peers = p["peers"] or []
        if not peers:
            errors.append("peers is required when state=present: list the peer addresses that get a brick each")
        elif p["replica"] >= 1 and len(peers) % p["replica"] != 0:
            errors.append(f"peers has {len(peers)} addresses, not a multiple of replica={p['replica']}: "
                          "add peers or change replica")
        if len(set(peers)) != len(peers):
            errors.append("peers lists an address twice; each peer gets one brick per volume")
        roots = p["bricks_roots"] or {}
        missing = [peer for peer in peers if peer not in roots and not p["bricks_root"]]
        if missing:
            errors.append(f"no bricks directory for peers {missing}: set bricks_root, or bricks_roots per address")
        unknown = sorted(set(roots) - set(peers))
        if unknown:
            errors.append(f"bricks_roots has addresses that are not in peers: {unknown}")
        for key, value in (p["options"] or {}).items():
            if not str(key).strip() or " " in str(key):
                errors.append(f"options key {key!r} is not a gluster option name (such as performance.quick-read)")
            if value is None or isinstance(value, (dict, list)):
                errors.append(f"options.{key} must be a scalar (string, number or boolean); got {value!r}")
    return errors


def summary(results: list[VolumeResult]) -> dict:
    secs = [r.seconds for r in results]
    if not secs:
        return {"mean": 0.0, "min": 0.0, "max": 0.0}
    return {"mean": round(sum(secs) / len(secs), 4), "min": round(min(secs), 4), "max": round(max(secs), 4)}


def gluster_value(value: object) -> str:
    # YAML booleans reach us as True/False; gluster wants on/off.
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def reconcile_volumes(p: dict, check_mode: bool = False, diff: bool = False) -> dict:
    """Create (state present) or delete (absent) the volumes p names, acting only on the difference to
    `volume list`, and set drifted options on existing ones; the module's result.

    Raises GlusterError before anything runs when p is wrong, and after the work when a volume failed: its
    result holds what was done (created volumes are kept; a rerun continues from there).
    """
    errors = validate(p)
    if errors:
        raise GlusterError("invalid parameters: " + "; ".join(errors), errors=errors)

    options = {str(k): gluster_value(v) for k, v in (p["options"] or {}).items()}
    result: dict[str, Any] = {"changed": False, "created": [], "deleted": [], "existing": [], "reconfigured": [],
                              "created_count": 0, "deleted_count": 0, "existing_count": 0, "seconds": 0.0,
                              "per_volume_seconds": summary([]), "cli_calls": 0}
    try:
        cli = GlusterCLI(p["gluster_cli"], timeout=p["timeout"])
        # The one read of the pool: everything below acts on the difference.
        rc, out, err = cli.run("volume", "list")
    except GlusterError as exc:
        exc.result = dict(result, **exc.result)
        raise
    if rc != 0 and NO_VOLUMES not in f"{out}{err}":
        raise GlusterError(f"`gluster volume list` failed (rc={rc}) through gluster_cli={p['gluster_cli']!r}: "
                           f"{(err or out).strip()}; is glusterd running on this host?", result=result)
    present = parse_volume_list(out, err)
    present_set = set(present)

    if p["state"] == "absent" and p["prefix"] is not None and p["count"] is None:
        wanted = sorted(v for v in present if v.startswith(p["prefix"]))
    else:
        wanted = volume_names(p["names"], p["prefix"], p["count"], p["start_index"])

    if p["state"] == "present":
        todo = [v for v in wanted if v not in present_set]
        result["existing"] = [v for v in wanted if v in present_set]
        after = sorted(present_set | set(todo))
    else:
        todo = [v for v in wanted if v in present_set]
        after = sorted(present_set - set(todo))
    if diff:
        result["diff"] = {"before": "\n".join(sorted(present)) + "\n", "after": "\n".join(after) + "\n",
                          "before_header": "gluster volume list", "after_header": "gluster volume list"}

    drift_todo: dict[str, dict] = {}
    if p["state"] == "present" and options and result["existing"]:
        try:
            info = parse_volume_info(cli.check("volume", "info", "all"))
        except GlusterError as exc:
            exc.result = dict(result, **exc.result)
            raise
        for name in result["existing"]:
            drift = option_drift(info.get(name, {}).get("options", {}), options)
            if drift:
                drift_todo[name] = drift

    key = "created" if p["state"] == "present" else "deleted"
    if check_mode:
        result[key] = todo
        result["reconfigured"] = sorted(drift_todo)
    else:
        t0 = time.monotonic()
        if p["state"] == "present":
            def work(name: str) -> VolumeResult:
                return create_volume(cli, name, bricks_for(name, p["peers"], p["bricks_root"], p["bricks_roots"]),
                                     p["replica"], options, p["start"], p["force"])
        else:
            def work(name: str) -> VolumeResult:
                return delete_volume(cli, name)
        outcomes = run_parallel(work, todo, p["parallel"])
        drift_outcomes = run_parallel(lambda n: set_options_on(cli, n, drift_todo[n]), sorted(drift_todo),
                                      p["parallel"])
        result["seconds"] = round(time.monotonic() - t0, 3)
        result["cli_calls"] = cli.calls
        result[key] = [o.name for o in outcomes if o.ok]
        result["reconfigured"] = [o.name for o in drift_outcomes if o.ok]
        result["per_volume_seconds"] = summary([o for o in outcomes if o.ok])
        failed = [o for o in outcomes + drift_outcomes if not o.ok]
        _counts(result, present_set, p["state"])
        if failed:
            result["changed"] = bool(result[key] or result["reconfigured"])
            result["failed_volumes"] = [{"name": o.name, "error": o.error} for o in failed]
            first = failed[0]
            raise GlusterError(f"{len(failed)} of {len(todo) + len(drift_todo)} volumes failed; first: volume "
                               f"{first.name}: {first.error}", result=result)
    _counts(result, present_set, p["state"])
    result["changed"] = bool(result[key] or result["reconfigured"])
    result["cli_calls"] = cli.calls
    return result


def _counts(result: dict, present_set: set, state: str) -> None:
    result["created_count"] = len(result["created"])
    result["deleted_count"] = len(result["deleted"])
    result["existing_count"] = len(result["existing"])
    if state == "present":
        result["volume_count"] = len(present_set | set(result["created"]))
    else:
        result["volume_count"] = len(present_set - set(result["deleted"]))
