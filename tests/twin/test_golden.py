"""Golden files of the controllers' state transitions, in the manner of KWOK's stage testdata/: each
tests/twin/golden/*.yaml names the objects before, one event, and the fields expected after.

A case file holds:
  before:   objects created first (namespaced ones in the case's own namespace, golden-<file name>)
  settled:  optional expectations awaited before the event, so that it meets a settled state
  event:    one of  create: [objects] | update: [partial objects, sent as merge patches]
                  | delete: [objects, by apiVersion, kind and name] | time: passes  (nothing is written)
  after:    expectations awaited after the event

An expectation is a partial object: only the fields it names are compared (never timestamps, which a case
does not name). Maps compare key by key, a list matches when each expected item matches some item of the
real list, in any order. Markers: "<set>" (present and not empty), "<none>" (absent or empty), and
"<ref Kind/name field.path>" (that field of an object in the case, e.g. a claim's volumeName). An
expectation without metadata.name is met by any object of its kind (in the case's namespace) that matches;
`gone: true` is met once no such object exists. Each wait lists, then follows a watch from the list's
resourceVersion; its bound is for a twin that never gets there, not a measurement.
"""
from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.twin import Twin

CASES = sorted((Path(__file__).parent / "golden").glob("*.yaml"))
BOUND = 180  # seconds for one expectation on a loaded machine
REF = re.compile(r"^<ref (\w+)/([\w.-]+) ([\w.]+)>$")


@pytest.fixture(scope="module")
def dyn(tmp_path_factory):
    from kubernetes import dynamic

    with Twin(tmp_path_factory.mktemp("golden") / "twin", nodes=3, time_scale=0.01) as t:
        yield dynamic.DynamicClient(t.api_client())


def test_there_are_golden_cases():
    assert len(CASES) >= 8, CASES


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_golden(dyn, path):
    case = yaml.safe_load(path.read_text())
    assert set(case) <= {"description", "before", "settled", "event", "after"}, f"{path.name}: unknown keys"
    run = Case(dyn, "golden-" + path.stem)
    dyn.resources.get(api_version="v1", kind="Namespace").create(body={"metadata": {"name": run.ns}})
    for obj in case.get("before") or []:
        run.resource(obj).create(body=obj, namespace=run.namespace_of(obj))
    for want in case.get("settled") or []:
        run.await_state(want)
    run.resolve_refs(case["after"])  # what the event may delete (a claim's volume) is read while it exists
    run.apply(case["event"])
    for want in case["after"]:
        run.await_state(want)


class Case:
    def __init__(self, dyn: Any, ns: str) -> None:
        self.dyn = dyn
        self.ns = ns
        self.refs: dict[str, Any] = {}

    def resource(self, obj: dict) -> Any:
        return self.dyn.resources.get(api_version=obj["apiVersion"], kind=obj["kind"])

    def namespace_of(self, obj: dict) -> str | None:
        return self.ns if self.resource(obj).namespaced else None

    # the event ------------------------------------------------------------------------------
    def apply(self, event: dict) -> None:
        assert len(event) == 1, f"one event per case, got {sorted(event)}"
        verb, objs = next(iter(event.items()))
        if verb == "time":
            assert objs == "passes", "time: passes"
            return
        for obj in objs:
            res, ns, name = self.resource(obj), self.namespace_of(obj), obj["metadata"].get("name")
            if verb == "create":
                res.create(body=obj, namespace=ns)
            elif verb == "update":
                res.patch(body=obj, name=name, namespace=ns, content_type="application/merge-patch+json")
            elif verb == "delete":
                res.delete(name=name, namespace=ns)
            else:
                raise AssertionError(f"unknown event {verb}: create, update, delete or time")

    # references -----------------------------------------------------------------------------
    def resolve_refs(self, wants: list[dict]) -> None:
        for want in wants:
            for text in _strings(want):
                if REF.match(text) and text not in self.refs:
                    self.refs[text] = self._read_ref(text)

    def _read_ref(self, text: str) -> Any:
        kind, name, path = REF.match(text).groups()  # type: ignore[union-attr]
        res = self.dyn.resources.get(api_version="v1", kind=kind)
        try:
            value: Any = res.get(name=name, namespace=self.ns if res.namespaced else None).to_dict()
        except Exception:  # not there yet: read again when an expectation needs it
            return None
        for part in path.split("."):
            value = (value or {}).get(part)
        return value

    def _ref(self, text: str) -> Any:
        if self.refs.get(text) is None:
            self.refs[text] = self._read_ref(text)
        return self.refs[text]

    # waiting ----------------------------------------------------------------------------------
    def await_state(self, want: dict) -> None:
        want = copy.deepcopy(want)
        gone = want.pop("gone", False)
        res = self.resource(want)
        ns = self.ns if res.namespaced else None
        name = want.get("metadata", {}).get("name")
        if name is not None and REF.match(name):
            name = want["metadata"]["name"] = self._ref(name)
            assert name, f"{want['metadata']}: the reference names nothing"
        selector = f"metadata.name={name}" if name else None
        what = f"{want['kind']} {name or '(any)'} in {self.ns}"

        def met(objects: dict[str, dict]) -> bool:
            found = any(self.mismatch(want, o) is None for o in objects.values())
            return not found if gone else found

        listed = res.get(namespace=ns, field_selector=selector).to_dict()
        objects = {o["metadata"]["name"]: o for o in listed["items"]}
        if met(objects):
            return
        for ev in res.watch(namespace=ns, field_selector=selector, resource_version=listed["metadata"]["resourceVersion"],
                            timeout=BOUND):
            obj = ev["raw_object"]
            if ev["type"] == "DELETED":
                objects.pop(obj["metadata"]["name"], None)
            elif ev["type"] in ("ADDED", "MODIFIED"):
                objects[obj["metadata"]["name"]] = obj
            if met(objects):
                return
        detail = "still exists" if gone else "; ".join(f"{n}: {self.mismatch(want, o)}" for n, o in objects.items())
        raise AssertionError(f"{what}: not reached within {BOUND} s: {detail or 'no such object'}")

    def mismatch(self, want: Any, got: Any, path: str = "") -> str | None:
        """None when `got` has what `want` names, else where it differs."""
        if isinstance(want, str) and want.startswith("<"):
            if want == "<set>":
                return None if got not in (None, "", {}, []) else f"{path or '.'}: not set"
            if want == "<none>":
                return None if got in (None, "", {}, []) else f"{path}: {got!r}, expected none"
            want = self._ref(want)
            if want is None:
                return f"{path}: the reference it names is not there yet"
        if isinstance(want, dict):
            if not isinstance(got, dict):
                return None if all(v == "<none>" for v in want.values()) and got is None else f"{path}: {got!r}"
            for k, v in want.items():
                miss = self.mismatch(v, got.get(k), f"{path}.{k}")
                if miss:
                    return miss
            return None
        if isinstance(want, list):
            if not isinstance(got, list):
                return f"{path}: {got!r}, expected a list"
            for i, item in enumerate(want):
                if all(self.mismatch(item, g) for g in got):
                    return f"{path}[{i}]: no item matches {item!r} in {got!r}"
            return None
        return None if want == got else f"{path}: {got!r}, expected {want!r}"


def _strings(node: Any) -> list[str]:
    if isinstance(node, dict):
        return [s for v in node.values() for s in _strings(v)]
    if isinstance(node, list):
        return [s for v in node for s in _strings(v)]
    return [node] if isinstance(node, str) else []
