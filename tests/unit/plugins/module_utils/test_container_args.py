"""The container-argument editor behind snapshot_controller_tuning and csi_sidecar_tuning.

Properties (hypothesis): every argument that is not a managed flag survives in its order; the managed
flags end up with exactly the wanted value, once, as Go's flag parsing reads them; applying the same
edit twice changes nothing the second time; removal leaves no trace of the flag in either spelling.
"""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.storageperf.k8s.plugins.module_utils.k8s import container_args as CA

MANAGED = ["worker-threads", "kube-api-qps", "kube-api-burst"]
# Arguments of the real snapshot-controller manifest (external-snapshotter deploy/kubernetes/snapshot-controller).
UPSTREAM = ["--v=5", "--leader-election=true", "--leader-election-namespace=$(NAMESPACE)"]

other_flag = st.sampled_from(["v", "leader-election", "leader-election-namespace", "resync-period", "metrics-path",
                              "http-endpoint", "retry-interval-start", "feature-gates", "worker-threads-x",
                              "kube-api-qps-extra", "prevent-volume-mode-conversion"])
value = st.one_of(st.integers(min_value=0, max_value=1000).map(str), st.sampled_from(["true", "15m", "$(NAMESPACE)", "a=b"]))


@st.composite
def other_arg(draw):
    """An argument the editor must not touch: `--x=v`, a bare bool flag, or `-x=v`."""
    name = draw(other_flag)
    form = draw(st.sampled_from(["--eq", "-eq", "bool"]))
    if form == "bool":
        return ["--" + name]
    return [("--" if form == "--eq" else "-") + name + "=" + draw(value)]


@st.composite
def managed_arg(draw):
    """A managed flag in any of Go's spellings: --f=v, --f v, -f=v, -f v."""
    name = draw(st.sampled_from(MANAGED))
    v = draw(st.integers(min_value=1, max_value=500).map(str))
    dashes = draw(st.sampled_from(["--", "-"]))
    if draw(st.booleans()):
        return [dashes + name + "=" + v]
    return [dashes + name, v]


@st.composite
def arg_list(draw):
    parts = draw(st.lists(st.one_of(other_arg(), managed_arg()), max_size=12))
    return [tok for part in parts for tok in part]


wanted_values = st.fixed_dictionaries({}, optional={
    "worker-threads": st.one_of(st.none(), st.integers(min_value=1, max_value=500)),
    "kube-api-qps": st.one_of(st.none(), st.integers(min_value=1, max_value=500), st.sampled_from([7.5, 75.0])),
    "kube-api-burst": st.one_of(st.none(), st.integers(min_value=1, max_value=1000)),
})


def others(args):
    """The arguments that are not managed flags (nor their values), in order."""
    out, skip = [], False
    for i, tok in enumerate(args):
        if skip:
            skip = False
            continue
        hit = next((f for f in MANAGED if CA._match(tok, f)), None)
        if hit is None:
            out.append(tok)
        elif CA._match(tok, hit)[0] == "sep" and i + 1 < len(args):
            skip = True
    return out


@settings(max_examples=150, deadline=None)
@given(arg_list(), wanted_values)
def test_edit_keeps_other_args_in_order_and_sets_each_flag_once(args, wanted):
    out = CA.set_flags(args, wanted)
    assert others(out) == others(args)
    for flag in MANAGED:
        found = CA.find_flag(out, flag)
        if flag not in wanted:
            assert [v for *_, v in found] == [v for *_, v in CA.find_flag(args, flag)]
        elif wanted[flag] is None:
            assert found == []
        else:
            assert len(found) == 1
            assert CA.same_value(found[0][2], CA.format_value(wanted[flag]))


@settings(max_examples=150, deadline=None)
@given(arg_list(), wanted_values)
def test_edit_is_idempotent(args, wanted):
    once = CA.set_flags(args, wanted)
    assert CA.set_flags(once, wanted) == once


@settings(max_examples=100, deadline=None)
@given(arg_list())
def test_absent_removes_both_spellings(args):
    out = CA.set_flags(args, dict.fromkeys(MANAGED))
    assert all(CA.find_flag(out, f) == [] for f in MANAGED)
    assert out == others(args)


def test_seed_edit_of_the_upstream_manifest():
    out = CA.set_flags(UPSTREAM, {"worker-threads": 25, "kube-api-qps": 75.0, "kube-api-burst": 150})
    assert out == UPSTREAM + ["--worker-threads=25", "--kube-api-qps=75", "--kube-api-burst=150"]


def test_replaces_in_place_both_forms_and_drops_duplicates():
    args = ["--v=5", "--kube-api-qps", "5", "--leader-election=true", "--kube-api-burst=10", "--kube-api-qps=6"]
    out = CA.set_flags(args, {"kube-api-qps": 75, "kube-api-burst": 150})
    assert out == ["--v=5", "--kube-api-qps=75", "--leader-election=true", "--kube-api-burst=150"]


def test_equal_value_in_other_spelling_is_left_as_written():
    args = ["--worker-threads", "25", "--kube-api-qps=75.0"]
    assert CA.set_flags(args, {"worker-threads": 25, "kube-api-qps": 75}) == args


def test_last_occurrence_wins_like_go_flag():
    assert CA.get_flag(["--kube-api-qps=5", "-kube-api-qps", "9"], "kube-api-qps") == "9"
    assert CA.get_flag(["--v=5"], "kube-api-qps") is None


def test_flags_after_terminator_are_not_flags():
    args = ["--v=5", "--", "--kube-api-qps=1"]
    assert CA.find_flag(args, "kube-api-qps") == []
    assert CA.set_flags(args, {"kube-api-qps": 75}) == ["--v=5", "--kube-api-qps=75", "--", "--kube-api-qps=1"]


def test_similar_names_are_not_matched():
    args = ["--worker-threads-x=1", "--kube-api-qps-extra=2"]
    assert CA.set_flags(args, {"worker-threads": 3}) == args + ["--worker-threads=3"]


def test_flags_in_command_are_edited_there():
    container = {"name": "snapshot-controller", "command": ["/snapshot-controller", "--v=5", "--kube-api-qps=5"]}
    new, field, old, out = CA.edit_container(container, {"kube-api-qps": 75})
    assert field == "command"
    assert out == ["/snapshot-controller", "--v=5", "--kube-api-qps=75"]
    assert "args" not in new


def test_pick_container_by_name_image_or_only_one():
    dep = {"metadata": {"name": "d", "namespace": "n"}, "spec": {"template": {"spec": {"containers": [
        {"name": "main", "image": "x/driver:1"},
        {"name": "prov", "image": "registry.k8s.io/sig-storage/csi-provisioner:v5.2.0"}]}}}}
    assert CA.pick_container(dep, ["prov"])[0] == 1
    assert CA.pick_container(dep, ["csi-provisioner"], image_hint="csi-provisioner")[0] == 1
    with pytest.raises(CA.ContainerArgsError, match="has no container named csi-attacher .*main, prov"):
        CA.pick_container(dep, ["csi-attacher"], image_hint="csi-attacher")
    single = {"metadata": {}, "spec": {"template": {"spec": {"containers": [{"name": "snapshot-ctrl"}]}}}}
    assert CA.pick_container(single, ["snapshot-controller"], only_fallback=True)[0] == 0


@pytest.mark.parametrize("settings_, current, fragment", [
    ({"worker_threads": 0}, None, "worker_threads=0 must be > 0"),
    ({"kube_api_qps": -1.0}, None, "kube_api_qps=-1 must be > 0"),
    ({"kube_api_qps": 200.0, "kube_api_burst": 100}, None, "kube_api_burst=100 must be >= kube_api_qps=200"),
    ({"kube_api_qps": 200.0, "kube_api_burst": None}, {"kube_api_burst": "150"},
     "kube_api_burst=150 (the value left in place) must be >= kube_api_qps=200"),
    # no burst flag: the binary's default burst 10 is what would run
    ({"kube_api_qps": 75.0, "kube_api_burst": None}, {"kube_api_burst": None}, "kube_api_burst=10 (the value left"),
])
def test_validation_names_the_field_and_the_fix(settings_, current, fragment):
    errors = CA.validate_tuning(settings_, current=current)
    assert errors and fragment in errors[0]


def test_validation_accepts_the_seed_values():
    assert CA.validate_tuning({"worker_threads": 25, "kube_api_qps": 75.0, "kube_api_burst": 150}) == []
    assert CA.validate_tuning({"worker_threads": 50, "kube_api_qps": None, "kube_api_burst": None}) == []
    assert CA.validate_tuning({"kube_api_qps": 8.0, "kube_api_burst": None}, current={"kube_api_burst": "20"}) == []
    # without a container to compare with, an unset burst is not judged
    assert CA.validate_tuning({"kube_api_qps": 75.0, "kube_api_burst": None}) == []


def test_json_patch_is_guarded_by_the_container_name():
    ops = CA.container_json_patch(1, {"name": "csi-snapshotter", "args": ["--v=2"]}, "args", ["--v=2", "--worker-threads=25"])
    assert ops[0] == {"op": "test", "path": "/spec/template/spec/containers/1/name", "value": "csi-snapshotter"}
    assert ops[1]["op"] == "replace"
    assert CA.container_json_patch(0, {"name": "c"}, "args", ["--a=1"])[1]["op"] == "add"
