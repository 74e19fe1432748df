"""ReplicationController (v1) and CronJob (batch/v1), as kube-apiserver serves them: discovery, defaults,
validation (422 causes), list/watch/field selectors, and kubectl's columns. Their controllers are tested in
test_workloads_rc.py and test_workloads_cronjob.py."""
from __future__ import annotations

import pytest
import yaml

from tests.support.twin import Twin
from tests.twin.kinds_support import header, rejected, row, watched_names


@pytest.fixture(scope="module")
def twin(tmp_path_factory):
    with Twin(tmp_path_factory.mktemp("kinds-rc-cj") / "twin", nodes=1) as t:
        yield t


def _pod_template(labels: dict | None = None, restart: str | None = None) -> dict:
    spec: dict = {"containers": [{"name": "c", "image": "nginx:1.27"}]}
    if restart:
        spec["restartPolicy"] = restart
    return {"metadata": {"labels": labels or {}}, "spec": spec}


def test_discovery_lists_both_kinds(twin):
    out = twin.kubectl("api-resources", "--no-headers").stdout
    lines = {ln.split()[0]: ln.split() for ln in out.splitlines()}
    assert lines["replicationcontrollers"][1:] == ["rc", "v1", "true", "ReplicationController"]
    assert lines["cronjobs"][1:] == ["cj", "batch/v1", "true", "CronJob"]
    explained = twin.kubectl("explain", "cronjob.spec.concurrencyPolicy").stdout
    assert "concurrencyPolicy" in explained and "Allow" in explained


def test_cronjob_defaults_columns_and_watch(twin):
    from kubernetes import client

    batch = client.BatchV1Api(twin.api_client())
    # a yearly schedule: the CronJob controller (cluster clock 100 times real time here) starts nothing meanwhile
    twin.kubectl("create", "cronjob", "hello", "--image=busybox:1.36", "--schedule=0 0 1 1 *", "--", "echo", "hi")
    cj = twin.kubectl_json("get", "cronjob", "hello")
    spec = cj["spec"]
    assert (spec["concurrencyPolicy"], spec["suspend"], spec["successfulJobsHistoryLimit"],
            spec["failedJobsHistoryLimit"]) == ("Allow", False, 3, 1)
    pod = spec["jobTemplate"]["spec"]["template"]["spec"]
    assert (pod["restartPolicy"], pod["dnsPolicy"], pod["terminationGracePeriodSeconds"]) == ("OnFailure", "ClusterFirst", 30)
    assert cj["metadata"]["generation"] == 1

    assert header(twin, "cronjob") == ["NAME", "SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST SCHEDULE", "AGE"]
    assert row(twin, "cronjob", "hello")[:6] == ["hello", "0 0 1 1 *", "<none>", "False", "0", "<none>"]
    assert header(twin, "cronjob", "-o", "wide")[-3:] == ["CONTAINERS", "IMAGES", "SELECTOR"]

    body = client.V1CronJob(metadata=client.V1ObjectMeta(name="nightly"), spec=client.V1CronJobSpec(
        schedule="0 3 * * sun", time_zone="Europe/Berlin", suspend=True,
        job_template=client.V1JobTemplateSpec(spec=client.V1JobSpec(template=client.V1PodTemplateSpec(
            spec=client.V1PodSpec(restart_policy="Never", containers=[client.V1Container(name="c", image="busybox")]))))))
    made = batch.create_namespaced_cron_job("default", body)
    assert made.spec.concurrency_policy == "Allow" and made.spec.time_zone == "Europe/Berlin"
    assert row(twin, "cj", "nightly")[:4] == ["nightly", "0 3 * * sun", "Europe/Berlin", "True"]

    assert watched_names(batch.list_namespaced_cron_job, "default", names={"hello", "nightly"}) == \
        {"hello": "ADDED", "nightly": "ADDED"}
    listed = batch.list_namespaced_cron_job("default", field_selector="metadata.name=nightly").items
    assert [c.metadata.name for c in listed] == ["nightly"]
    bad = twin.kubectl("get", "cronjobs", "--field-selector", "spec.schedule=x", check=False)
    assert bad.returncode != 0 and "field label not supported: spec.schedule" in bad.stderr


@pytest.mark.parametrize("schedule,message", [
    ("bad", "expected exactly 5 fields, found 1: [bad]"),
    ("0 0 * * 9", "end of range (9) above maximum (6): 9"),
    ("61 * * * *", "end of range (61) above maximum (59): 61"),
    ("* * * * * *", "expected exactly 5 fields, found 6: [* * * * * *]"),
    ("@fortnightly", "unrecognized descriptor: @fortnightly"),
])
def test_cronjob_schedule_is_cron_syntax(twin, schedule, message):
    out = twin.kubectl("create", "cronjob", "sched", "--image=busybox", f"--schedule={schedule}", check=False)
    assert out.returncode != 0
    assert f'spec.schedule: Invalid value: "{schedule}": {message}' in out.stderr


def test_cronjob_rules_name_the_field(twin):
    from kubernetes import client
    from kubernetes.client.rest import ApiException

    batch = client.BatchV1Api(twin.api_client())
    body = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "x" * 53},
            "spec": {"schedule": "TZ=UTC 0 * * * *", "concurrencyPolicy": "Sometimes", "timeZone": "Mars/Olympus",
                     "successfulJobsHistoryLimit": -1,
                     "jobTemplate": {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "b"}]}}}}}}
    with pytest.raises(ApiException) as e:
        batch.create_namespaced_cron_job("default", body)
    code, reason, causes = rejected(e.value)
    assert (code, reason) == (422, "Invalid")
    fields = {f: (r, m) for r, f, m in causes}
    assert fields["metadata.name"] == ("FieldValueInvalid", f'Invalid value: "{"x" * 53}": must be no more than 52 characters')
    assert fields["spec.schedule"][1].endswith("cannot use TZ or CRON_TZ in schedule, use timeZone field instead")
    assert fields["spec.concurrencyPolicy"] == (
        "FieldValueNotSupported", 'Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace"')
    assert fields["spec.timeZone"][1] == 'Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus'
    assert fields["spec.successfulJobsHistoryLimit"][0] == "FieldValueInvalid"
    # the pod template is a Job's: restartPolicy Always (the pod default) is refused
    assert "spec.jobTemplate.spec.template.spec.restartPolicy" in fields

    # the Python client refuses a body without the required fields itself: kubectl without client validation sends it
    missing = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "empty"}, "spec": {}}
    out = twin.kubectl("create", "--validate=false", "-f", "-", input=yaml.safe_dump(missing), check=False)
    assert out.returncode != 0 and 'The CronJob "empty" is invalid' in out.stderr
    assert "spec.schedule: Required value" in out.stderr
    assert "spec.jobTemplate.spec.template.spec.containers: Required value" in out.stderr
    assert twin.kubectl("get", "cronjob", "empty", check=False).returncode != 0  # nothing was written


def test_replicationcontroller_defaults_from_the_template(twin):
    from kubernetes import client

    core = client.CoreV1Api(twin.api_client())
    twin.kubectl("apply", "-f", "-", input=yaml.safe_dump({
        "apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "web"},
        "spec": {"template": _pod_template({"app": "web"})}}))
    rc = core.read_namespaced_replication_controller("web", "default")
    assert rc.spec.replicas == 1 and rc.spec.selector == {"app": "web"} and rc.metadata.labels == {"app": "web"}
    # the ReplicationController controller made its pod inside the write
    assert rc.spec.template.spec.restart_policy == "Always" and rc.status.replicas == 1
    assert header(twin, "rc") == ["NAME", "DESIRED", "CURRENT", "READY", "AGE"]
    assert row(twin, "rc", "web")[:3] == ["web", "1", "1"]
    assert header(twin, "rc", "-o", "wide")[-3:] == ["CONTAINERS", "IMAGES", "SELECTOR"]
    scale = core.read_namespaced_replication_controller_scale("web", "default")
    assert (scale.spec.replicas, scale.status.selector) == (1, "app=web")
    twin.kubectl("scale", "rc", "web", "--replicas=3")
    assert core.read_namespaced_replication_controller("web", "default").spec.replicas == 3
    assert [r.metadata.name for r in core.list_namespaced_replication_controller(
        "default", field_selector="status.replicas=3").items] == ["web"]
    assert watched_names(core.list_namespaced_replication_controller, "default", names={"web"}) == {"web": "ADDED"}


def test_replicationcontroller_selector_must_match_the_template(twin):
    from kubernetes import client
    from kubernetes.client.rest import ApiException

    core = client.CoreV1Api(twin.api_client())
    body = {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "bad"},
            "spec": {"selector": {"app": "other"}, "template": _pod_template({"app": "web"}, "Never")}}
    with pytest.raises(ApiException) as e:
        core.create_namespaced_replication_controller("default", body)
    code, reason, causes = rejected(e.value)
    assert (code, reason) == (422, "Invalid")
    assert ("FieldValueInvalid", "spec.template.metadata.labels",
            'Invalid value: {"app": "web"}: `selector` does not match template `labels`') in causes
    assert ("FieldValueNotSupported", "spec.template.spec.restartPolicy",
            'Unsupported value: "Never": supported values: "Always"') in causes
    no_labels = {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "bare"},
                 "spec": {"template": _pod_template()}}
    with pytest.raises(ApiException) as e:
        core.create_namespaced_replication_controller("default", no_labels)
    assert ("FieldValueRequired", "spec.selector", "Required value") in rejected(e.value)[2]
