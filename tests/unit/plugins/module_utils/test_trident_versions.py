"""Trident version parsing, the concurrency support matrix, the preflight and Helm release decoding."""
from __future__ import annotations

import base64
import gzip
import json

import pytest

from ansible_collections.storageperf.k8s.plugins.module_utils.k8s import helm as H
from ansible_collections.storageperf.k8s.plugins.module_utils.trident import concurrency as T


@pytest.mark.parametrize("text, want", [
    ("25.06.0", (25, 6, 0)), ("v26.02.1", (26, 2, 1)), ("26.06.0-custom.1", (26, 6, 0)),
    ("25.10", (25, 10, 0)), ("24.10.0+build5", (24, 10, 0)), ("latest", None), ("", None), (None, None),
])
def test_parse_version(text, want):
    assert T.parse_version(text) == want


def test_image_version():
    assert T.image_version("docker.io/netapp/trident:26.06.0") == "26.06.0"
    assert T.image_version("netapp/trident:latest") is None
    assert T.image_version("registry:5000/netapp/trident:25.10.1@sha256:ab") == "25.10.1"


@pytest.mark.parametrize("version, ga, drivers", [
    ((25, 6, 0), False, {"ontap-san"}),
    ((25, 6, 3), False, {"ontap-san"}),
    ((25, 10, 0), False, {"ontap-san", "ontap-nas"}),
    ((26, 2, 0), True, {"ontap-nas", "ontap-san", "google-cloud-netapp-volumes"}),
    ((26, 6, 0), True, {"ontap-nas", "ontap-san", "google-cloud-netapp-volumes", "ontap-nas-economy",
                        "ontap-san-economy", "azure-netapp-files", "solidfire-san"}),
    ((27, 2, 0), True, {"ontap-nas", "ontap-san", "google-cloud-netapp-volumes", "ontap-nas-economy",
                        "ontap-san-economy", "azure-netapp-files", "solidfire-san"}),
])
def test_support_matrix(version, ga, drivers):
    since, is_ga, supported = T.support_for(version)
    assert is_ga is ga
    assert set(supported) == drivers


def test_no_concurrency_before_25_06():
    assert T.support_for((25, 2, 1)) is None


def install(version):
    i = T.Install("operator", "trident")
    i.version = version
    return i


def backend(name, driver):
    return {"kind": "TridentBackendConfig", "name": "trident/" + name, "backend": name, "driver": driver}


def test_preflight_refuses_unsupported_driver_naming_the_backend():
    with pytest.raises(T.TridentError) as e:
        T.preflight(install((26, 2, 0)), [backend("nas", "ontap-nas"), backend("eco", "ontap-nas-economy")], False)
    msg = e.value.msg
    assert "TridentBackendConfig trident/eco (backend eco) uses driver ontap-nas-economy" in msg
    assert "supported from Trident 26.06.0" in msg
    assert "trident/nas " not in msg  # the supported backend is not blamed
    assert [b["name"] for b in e.value.details["unsupported_backends"]] == ["trident/eco"]


def test_preflight_unknown_driver_is_never_supported():
    with pytest.raises(T.TridentError, match="google-cloud-netapp-volumes-san .not supported in any version"):
        T.preflight(install((26, 6, 0)), [backend("g", "google-cloud-netapp-volumes-san")], False)


def test_preflight_tech_preview_needs_opt_in():
    with pytest.raises(T.TridentError, match="tech preview .GA from 26.02.0.*allow_tech_preview: true"):
        T.preflight(install((25, 10, 0)), [backend("nas", "ontap-nas")], False)
    warnings = T.preflight(install((25, 10, 0)), [backend("nas", "ontap-nas")], True)
    assert warnings and "tech preview" in warnings[0]


def test_preflight_too_old_is_refused_even_with_tech_preview():
    with pytest.raises(T.TridentError, match="Trident 25.02.0 has no concurrent core .*upgrade Trident to 26.02.0"):
        T.preflight(install((25, 2, 0)), [], True)


def test_preflight_ga_passes_without_warnings():
    assert T.preflight(install((26, 6, 0)), [backend("eco", "ontap-san-economy")], False) == []


def test_desired_spec_is_empty_when_already_set():
    i = install((26, 6, 0))
    i.orchestrator = {"metadata": {"name": "trident"}, "spec": {"enableConcurrency": True, "k8sAPIQPS": 200}}
    assert T.desired_spec(i, True, 200) == {}
    assert T.desired_spec(i, True, None) == {}
    assert T.desired_spec(i, False, None) == {"enableConcurrency": False}
    i.orchestrator["spec"] = {}
    assert T.desired_spec(i, False, None) == {}
    assert T.desired_spec(i, True, 150) == {"enableConcurrency": True, "k8sAPIQPS": 150}


def test_orchestrator_done_reads_the_string_echo_and_fails_fast():
    done = T.orchestrator_done(True)
    assert not done({"status": {"status": "Installed", "currentInstallationParams": {"enableConcurrency": "false"}}})
    assert not done({"status": {"status": "Updating", "currentInstallationParams": {"enableConcurrency": "true"}}})
    assert done({"status": {"status": "Installed", "currentInstallationParams": {"enableConcurrency": "true"}}})
    # a k8sAPIQPS change counts only once the operator echoes the new value (when it echoes one at all)
    qps = T.orchestrator_done(True, 200)
    assert not qps({"status": {"status": "Installed", "currentInstallationParams": {"enableConcurrency": "true",
                                                                                    "k8sAPIQPS": "100"}}})
    assert qps({"status": {"status": "Installed", "currentInstallationParams": {"enableConcurrency": "true",
                                                                                "k8sAPIQPS": "200"}}})
    assert qps({"status": {"status": "Installed", "currentInstallationParams": {"enableConcurrency": "true"}}})
    with pytest.raises(T.TridentError, match="Failed: backend ontap-nas-economy"):
        done({"status": {"status": "Failed", "message": "backend ontap-nas-economy"}})


def test_controller_flag_predicate_reads_trident_main():
    dep = {"spec": {"template": {"spec": {"containers": [
        {"name": "csi-provisioner", "args": ["--enable_concurrency=true"]},
        {"name": "trident-main", "args": ["--k8s_timeout=30s", "--enable_concurrency=false"]}]}}}}
    assert not T.controller_has_flag(True)(dep)
    assert T.controller_has_flag(False)(dep)
    dep["spec"]["template"]["spec"]["containers"][1]["args"][-1] = "--enable_concurrency=true"
    assert T.controller_has_flag(True)(dep)


def test_backend_driver_from_tridentbackend_config():
    assert T._driver_in_config({"ontap_config": {"storageDriverName": "ontap-san"}}) == "ontap-san"
    assert T._driver_in_config({"storageDriverName": "solidfire-san"}) == "solidfire-san"
    assert T._driver_in_config(None) is None


# Helm ------------------------------------------------------------------------------------------------
RELEASE = {"name": "trident", "namespace": "trident", "version": 3, "info": {"status": "deployed"},
           "chart": {"metadata": {"name": "trident-operator", "version": "100.2606.0", "appVersion": "26.06.0"},
                     "values": {"enableConcurrency": False, "tridentDebug": False, "imageRegistry": ""}},
           "config": {"tridentDebug": True}}


def secret_data(release):
    """What the API returns in data.release: base64 of Helm's base64(gzip(json))."""
    return base64.b64encode(base64.b64encode(gzip.compress(json.dumps(release).encode()))).decode()


def test_decode_release_round_trip():
    assert H.decode_release(secret_data(RELEASE)) == RELEASE
    assert H.decode_release(H.encode_release(RELEASE)) == RELEASE


def test_decode_rejects_garbage():
    with pytest.raises(H.HelmError):
        H.decode_release(base64.b64encode(b"not helm").decode())


def test_merged_values_user_config_wins():
    values = H.merged_values(RELEASE)
    assert values == {"enableConcurrency": False, "tridentDebug": True, "imageRegistry": ""}


def test_helm_advice_gives_the_upgrade_command():
    i = install((26, 6, 0))
    i.helm_release = {"name": "trident", "namespace": "trident", "chart_version": "100.2606.0",
                      "values": H.merged_values(RELEASE)}
    command, current = T.helm_advice(i, True)
    assert current is False
    assert command == ("helm upgrade trident netapp-trident/trident-operator -n trident --reuse-values "
                       "--version 100.2606.0 --set enableConcurrency=true")
    assert T.helm_advice(i, False) == (None, False)


class FakeSecrets:
    """The one call list_releases makes (a list of Secrets), answered from a fixed list: no code path of ours is faked."""

    def __init__(self, secrets):
        self.secrets = secrets

    def list(self, api_version, kind, namespace=None, label_selector=None):
        assert (api_version, kind, label_selector) == ("v1", "Secret", "owner=helm")
        return [s for s in self.secrets if s["metadata"]["namespace"] == namespace], "1"


def helm_secret(release, revision, status):
    rel = dict(release, version=revision, info={"status": status})
    return {"metadata": {"name": "sh.helm.release.v1.%s.v%d" % (release["name"], revision), "namespace": "trident",
                         "labels": {"owner": "helm", "name": release["name"], "status": status, "version": str(revision)}},
            "type": "helm.sh/release.v1", "data": {"release": secret_data(rel)}}


def test_list_releases_takes_the_latest_deployed_revision():
    other = dict(RELEASE, name="prom", chart={"metadata": {"name": "kube-prometheus"}, "values": {}})
    client = FakeSecrets([helm_secret(RELEASE, 2, "superseded"), helm_secret(RELEASE, 3, "deployed"),
                          helm_secret(other, 1, "deployed")])
    rels = H.list_releases(client, "trident", chart_name="trident-operator")
    assert [(r["name"], r["revision"], r["chart_version"]) for r in rels] == [("trident", 3, "100.2606.0")]
    assert rels[0]["values"]["tridentDebug"] is True
