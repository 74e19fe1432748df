"""api_unreachable_after: how long a silent API server is waited for, from the option or the environment."""
from __future__ import annotations

import json

import pytest

from tests.support.module_args import patch_module_args
from ansible_collections.storageperf.k8s.plugins.module_utils.common.module import StoragePerfModule
from ansible_collections.storageperf.k8s.plugins.module_utils.k8s import client as k8s_client

ENV = "STORAGEPERF_API_UNREACHABLE_AFTER"


def test_the_default_is_twenty_seconds(monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    assert k8s_client.auth_params({})["api_unreachable_after"] == 20.0


def test_the_environment_serves_when_the_option_is_unset_and_the_option_wins(monkeypatch):
    monkeypatch.setenv(ENV, "5")
    assert k8s_client.auth_params({})["api_unreachable_after"] == 5.0
    assert k8s_client.auth_params({"api_unreachable_after": 40})["api_unreachable_after"] == 40.0


@pytest.mark.parametrize("value", ["0", "-3", "soon", "601"])
def test_a_bad_value_names_the_option_the_variable_and_the_range(monkeypatch, value):
    monkeypatch.setenv(ENV, value)
    with pytest.raises(k8s_client.K8sError) as e:
        k8s_client.auth_params({})
    assert e.value.msg.startswith(f"api_unreachable_after (or {ENV}) must be a number of seconds above 0 and at "
                                  f"most 600, not '{value}'")


def test_the_client_s_health_takes_it(monkeypatch, tmp_path):
    monkeypatch.delenv(ENV, raising=False)
    kubeconfig = tmp_path / "config"
    kubeconfig.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}))
    client = k8s_client.Client({"kubeconfig": str(kubeconfig), "api_unreachable_after": 3.5})
    assert client.health.unreachable_after == 3.5


def test_a_module_refuses_more_than_ten_minutes_before_it_connects(capsys, monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    with patch_module_args({"kubeconfig": "/nowhere", "api_unreachable_after": 3600}), pytest.raises(SystemExit):
        StoragePerfModule(argument_spec={}, auth="k8s")
    out = json.loads(capsys.readouterr().out)
    assert out["failed"] and out["msg"].startswith("api_unreachable_after=3600.0 is above its maximum 600 (ten minutes")


def test_a_module_takes_the_environment_and_its_own_option_first(monkeypatch):
    monkeypatch.setenv(ENV, "5")
    for args, want in (({"kubeconfig": "/nowhere"}, 5.0), ({"kubeconfig": "/nowhere", "api_unreachable_after": 7}, 7.0)):
        with patch_module_args(args):
            assert StoragePerfModule(argument_spec={}, auth="k8s").params["api_unreachable_after"] == want
