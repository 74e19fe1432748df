"""Fault injection: API errors, failing or hanging storage operations, stalled controllers.

Set with `python -m twin fault --name NAME --rule JSON` (POST /_twin/fault), clear with `--clear [--name NAME]`.
Rules by name:

  api                 {"fraction": 0.2, "code": 500|429, "methods": ["POST"], "path_contains": "/pods", "count": 5,
                       "retry_after": 1}
                      a fraction of API requests answer 500 InternalError or 429 TooManyRequests (a storm); a 429
                      carries Retry-After (default 1 s, as kube-apiserver's max-in-flight and APF filters send it);
                      `count` stops the rule after that many hits, as for the operations below.
  <operation>         {"fraction": 0.3, "mode": "fail"|"timeout", "driver": "csi.trident.netapp.io",
                       "match": "substring of the object key", "code": "Internal", "message": "...",
                       "seconds": 15, "count": 5, "sticky": false}
                      operations: provision, delete, attach, detach, snapshot, delete_snapshot (the CSI calls
                      CreateVolume, DeleteVolume, ControllerPublish, ControllerUnpublish, CreateSnapshot,
                      DeleteSnapshot). A hit fails the call with gRPC `code` (default Internal for fail,
                      DeadlineExceeded for timeout); "timeout" first hangs `seconds` of cluster time (default 15,
                      the sidecars' --timeout). The sidecar records the error (event / attachError) and retries
                      with backoff, as the real ones do. `driver` and `match` narrow the rule (the key is
                      "namespace/name" of the PVC or VolumeSnapshot, or the PV name); `count` stops the rule
                      after that many hits; `sticky` makes the choice per object (the same objects keep
                      failing) instead of per attempt.
                      `"while": "trident_concurrency" | "parallel_attach"` makes the rule bite only while that
                      change is in effect in the cluster (a change that breaks something, for a rollout's gate):
                      trident_concurrency = the Trident controller runs with --enable_concurrency=true (what
                      controllers/trident.py reads from its Deployment); parallel_attach = the disk driver's
                      DiskParallelAttach is in effect (the provisioner addon's running gates give it more than one
                      attach slot per node, cloud_state.driver_limits, as controllers/alibaba_csi.py reads them).
                      Attempts while the change is off neither hit nor draw, nor spend `count`. Another
                      value is refused (400 naming the field and the accepted values), as is `while` on a
                      rule that is not an operation's.
  stall:<controller>  {} or {"seconds": 30}: the controller takes no new work until cleared (or for `seconds` of
                      cluster time). Controllers: csi-provisioner, csi-attacher, csi-snapshotter,
                      snapshot-controller, persistentvolume-controller, attachdetach-controller, trident,
                      kubelet-unmount (the kubelets unmount no claim's volume: it stays in node.status.volumesInUse).

`hits` counts what was injected, per rule name (shown in the fault verb's answer through `rules`).

The non-sticky choices draw from one random.Random seeded by the cluster's seed (its state directory's name
unless set), as twin/calibration.py's samples do: the same rules meet the same sequence of draws on every run, so
a test or a chaos run repeats, up to the order in which concurrent attempts take them. Unseeded, a rule of
`fraction` 0.5 over 10 first attempts would inject fewer than 3 hits in about 2 % of runs.
"""
from __future__ import annotations

import asyncio
import hashlib
import random
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from .apimachinery import errors

OPERATIONS = ("provision", "delete", "attach", "detach", "snapshot", "delete_snapshot")
# the changes an operation rule's `while` may name; the parts that know each one register a reader in
# Faults.conditions (controllers/trident.py, controllers/alibaba_csi.py); one nobody registered is off
WHILE = ("trident_concurrency", "parallel_attach")


def rule_error(name: str, rule: Any) -> str | None:
    """Why the fault verb must refuse this rule (None: it may be set). Only what a rule can get wrong silently:
    a `while` the twin would never see in effect would leave the fault off and the test or gate meaningless."""
    if not isinstance(rule, dict):
        return f"rule: expected a JSON object, got {type(rule).__name__}"
    if "while" not in rule:
        return None
    if name not in OPERATIONS:
        return (f"rule.while: only operation rules ({', '.join(OPERATIONS)}) take `while`, not {name!r}; "
                "drop the field")
    if rule["while"] not in WHILE:
        return f"rule.while: {rule['while']!r} is not a change the twin knows; use one of {', '.join(WHILE)}"
    return None


def _spend(rule: dict) -> bool:
    """Take one hit from a rule's optional `count`; False once it is used up."""
    if "count" not in rule:
        return True
    if int(rule["count"]) <= 0:
        return False
    rule["count"] = int(rule["count"]) - 1
    return True


class OpFault:
    def __init__(self, name: str, mode: str, code: str, message: str, seconds: float) -> None:
        self.name, self.mode, self.code, self.message, self.seconds = name, mode, code, message, seconds


class Faults:
    """What the twin should break, and how often. Set through `python -m twin fault ...`."""

    def __init__(self, seed: int | str | None = None) -> None:
        self.rules: dict[str, dict[str, Any]] = {}
        self.rng = random.Random(seed)
        self.hits: Counter[str] = Counter()
        self._set_at: dict[str, float] = {}
        self._changed: asyncio.Event | None = None
        # change name (WHILE) -> is it in effect now? Filled by the parts that apply the change
        self.conditions: dict[str, Callable[[], bool]] = {}

    def set(self, name: str, rule: dict[str, Any]) -> None:
        """Set a rule; ValueError (the fault verb's 400) when rule_error refuses it."""
        problem = rule_error(name, rule)
        if problem:
            raise ValueError(problem)
        self.rules[name] = dict(rule)
        self._set_at[name] = time.monotonic()
        self._wake()

    def clear(self, name: str | None = None) -> None:
        if name is None:
            self.rules.clear()
        else:
            self.rules.pop(name, None)
        self._wake()

    def _wake(self) -> None:
        if self._changed is not None:
            self._changed.set()
            self._changed = None

    # API requests (the API server asks) ---------------------------------------------------------
    def api_error(self, method: str, path: str) -> errors.ApiError | None:
        rule = self.rules.get("api")
        if not rule or self.rng.random() >= float(rule.get("fraction", 0)):
            return None
        if rule.get("methods") and method not in rule["methods"]:
            return None
        if rule.get("path_contains") and rule["path_contains"] not in path:
            return None
        if not _spend(rule):
            return None
        self.hits["api"] += 1
        code = int(rule.get("code", 500))
        if code == 429:
            return errors.too_many_requests(int(rule.get("retry_after", 1)))
        return errors.internal("injected fault")

    # storage operations (the CSI sidecars ask) -------------------------------------------------
    def op_fault(self, operation: str, key: str, driver: str = "") -> OpFault | None:
        """Should this attempt of `operation` on object `key` fail? None, or what to do."""
        rule = self.rules.get(operation)
        if not rule:
            return None
        if rule.get("driver") and rule["driver"] != driver:
            return None
        if rule.get("match") and rule["match"] not in key:
            return None
        if rule.get("while") and not self.in_effect(rule["while"]):
            return None
        fraction = float(rule.get("fraction", 1.0))
        if rule.get("sticky"):
            h = int(hashlib.sha256(f"{operation}/{key}".encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
            hit = h < fraction
        else:
            hit = self.rng.random() < fraction
        if not hit:
            return None
        if not _spend(rule):
            return None
        self.hits[operation] += 1
        mode = rule.get("mode", "fail")
        code = rule.get("code") or ("DeadlineExceeded" if mode == "timeout" else "Internal")
        msg = rule.get("message") or (f"injected fault: {operation} timed out" if mode == "timeout"
                                      else f"injected fault: {operation} failed")
        return OpFault(operation, mode, code, msg, float(rule.get("seconds", 15)))

    def in_effect(self, change: str) -> bool:
        """Is this change (WHILE) on in the cluster now, as the part that applies it reads it?"""
        reader = self.conditions.get(change)
        return bool(reader and reader())

    # stalled controllers ------------------------------------------------------------------------
    def stalled(self, controller: str, time_scale: float = 1.0) -> bool:
        name = f"stall:{controller}"
        rule = self.rules.get(name)
        if rule is None:
            return False
        if "seconds" in rule and time.monotonic() - self._set_at.get(name, 0) >= float(rule["seconds"]) * time_scale:
            self.rules.pop(name, None)
            return False
        return True

    async def wait_unstalled(self, controller: str, time_scale: float = 1.0) -> None:
        """Return at once unless a stall rule holds the controller; then wait until it is cleared or expires."""
        while self.stalled(controller, time_scale):
            if self._changed is None:
                self._changed = asyncio.Event()
            try:
                await asyncio.wait_for(self._changed.wait(), 0.05)
            except TimeoutError:
                pass
