"""The attach-detach controller detaches a volume only once the node's kubelet no longer reports it in
node.status.volumesInUse (reconciler.go), or after maxWaitForUnmountDuration (6 min of cluster time), and keeps
node.status.volumesAttached. The kubelet's unmount is held with the `stall:kubelet-unmount` fault."""
from __future__ import annotations

import json

import pytest

from tests.support.twin import Twin
from tests.support.waits import watch_until
from tests.twin.storage_helpers import apply, kube_wait, pvc_manifest

# 0.05: the forced detach comes 18 s after the pod's end, well past the ordering checks of the first test
TIME_SCALE = 0.05


@pytest.fixture(scope="module")
def twin(tmp_path_factory):
    with Twin(tmp_path_factory.mktemp("detach-unmount") / "twin", nodes=1, time_scale=TIME_SCALE) as t:
        yield t


@pytest.fixture(scope="module")
def api(twin):
    from kubernetes import client

    c = twin.api_client()
    return client.CoreV1Api(c), client.StorageV1Api(c)


def fault(twin, name, rule=None):
    if rule is None:
        return twin.twin_cmd("fault", "--clear", "--name", name)
    return twin.twin_cmd("fault", "--name", name, "--rule", json.dumps(rule))


def pod(name: str, claim: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "busybox", "volumeMounts": [{"name": "v", "mountPath": "/v"}]}],
                     "volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": claim}}]}}


def running(twin, name: str, claim: str) -> tuple[str, str, str]:
    """A pod on an ontap-san claim (attachRequired), Ready: (its VolumeAttachment, node, unique volume name)."""
    apply(twin, pvc_manifest(claim, "ontap-san"), pod(name, claim))
    kube_wait(twin, "condition=Ready", f"pod/{name}")
    pv = twin.kubectl_json("get", "pv", twin.kubectl_json("get", "pvc", claim)["spec"]["volumeName"])
    node = twin.kubectl_json("get", "pod", name)["spec"]["nodeName"]
    vas = [va for va in twin.kubectl_json("get", "volumeattachments")["items"]
           if va["spec"]["source"].get("persistentVolumeName") == pv["metadata"]["name"]]
    assert len(vas) == 1 and vas[0]["status"]["attached"]
    csi = pv["spec"]["csi"]
    return vas[0]["metadata"]["name"], node, f"kubernetes.io/csi/{csi['driver']}^{csi['volumeHandle']}"


def node_status(twin, node: str) -> tuple[list[str], list[str]]:
    st = twin.kubectl_json("get", "node", node)["status"]
    return st.get("volumesInUse") or [], [v["name"] for v in st.get("volumesAttached") or []]


def held_until_terminal(twin, api, name: str) -> None:
    """Stall the kubelets' unmount and delete the pod: it gets its terminal phase, its volume stays in use."""
    fault(twin, "stall:kubelet-unmount", {})
    twin.kubectl("delete", "pod", name, "--wait=false")

    def terminal(ps):
        return any(p.metadata.name == name and p.status.phase in ("Succeeded", "Failed") for p in ps)

    watch_until(api[0].list_namespaced_pod, terminal, f"{name} terminal", "default")


def test_detach_waits_until_the_volume_leaves_volumes_in_use(twin, api):
    va, node, unique = running(twin, "holder", "held")
    in_use, attached = node_status(twin, node)
    assert unique in in_use and unique in attached
    held_until_terminal(twin, api, "holder")
    # a barrier: the controller handles pod events in order, so once the next pod's attachment exists it has
    # seen the holder's end; the old controller had deleted the attachment right there
    later_va, _, _ = running(twin, "barrier", "later")
    cur = {v.metadata.name: v for v in api[1].list_volume_attachment().items}.get(va)
    assert cur is not None and cur.metadata.deletion_timestamp is None and cur.status.attached
    in_use, attached = node_status(twin, node)
    assert unique in in_use and unique in attached
    since = api[1].list_volume_attachment().metadata.resource_version
    fault(twin, "stall:kubelet-unmount")
    # one history from one resourceVersion: the node stops listing the volume before its detach starts
    unused = first_event(api[0].list_node, since, lambda t, n: n.metadata.name == node
                         and unique not in (n.status.volumes_in_use or []), f"{unique} out of volumesInUse")
    detaching = first_event(api[1].list_volume_attachment, since, lambda t, v: v.metadata.name == va
                            and (t == "DELETED" or v.metadata.deletion_timestamp is not None), f"{va} deleted")
    assert unused < detaching
    watch_until(api[1].list_volume_attachment, lambda vas: va not in [v.metadata.name for v in vas], f"{va} gone")
    in_use, attached = node_status(twin, node)
    assert unique not in in_use and unique not in attached
    assert later_va in [v.metadata.name for v in api[1].list_volume_attachment().items]  # the other pod's stays
    twin.kubectl("delete", "pod", "barrier", "--wait=false")


def test_a_volume_still_in_use_is_force_detached_after_max_wait_for_unmount(twin, api):
    va, node, unique = running(twin, "stuck", "stuck")
    held_until_terminal(twin, api, "stuck")
    watch_until(api[1].list_volume_attachment, lambda vas: va not in [v.metadata.name for v in vas], f"{va} force-detached")
    in_use, attached = node_status(twin, node)
    assert unique in in_use and unique not in attached  # the kubelet still holds it: detached anyway
    fault(twin, "stall:kubelet-unmount")
    watch_until(api[0].list_namespaced_pod, lambda ps: "stuck" not in [p.metadata.name for p in ps], "stuck gone", "default")


def first_event(list_fn, since: str, match, what: str, bound: int = 120) -> int:
    """The resourceVersion of the first watch event after `since` whose (type, object) matches."""
    from kubernetes import watch

    w = watch.Watch()
    for ev in w.stream(list_fn, resource_version=since, timeout_seconds=bound):
        if match(ev["type"], ev["object"]):
            w.stop()
            return int(ev["object"].metadata.resource_version)
    raise AssertionError(f"{what}: no such event within {bound} s")
