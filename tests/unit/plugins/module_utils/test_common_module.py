"""The module base: auth specs merged, one failure path that keeps the partial result and the hint."""
import json

import pytest

from tests.support.module_args import patch_module_args
from ansible_collections.storageperf.k8s.plugins.module_utils.common.errors import StoragePerfError
from ansible_collections.storageperf.k8s.plugins.module_utils.common.module import StoragePerfModule
from ansible_collections.storageperf.k8s.plugins.module_utils.k8s.client import K8sError


def run(capsys, args, logic, **kw):
    with patch_module_args(args), pytest.raises(SystemExit) as info:
        module = StoragePerfModule(argument_spec=dict(size=dict(type="int", default=1)), **kw)
        module.run(logic)
    return info.value.code, json.loads(capsys.readouterr().out)


def test_auth_k8s_adds_the_connection_options(capsys):
    rc, out = run(capsys, {"kubeconfig": "/nowhere", "size": 2}, lambda m: {"changed": False, "keys": sorted(m.params)},
                  auth="k8s")
    assert rc == 0
    assert {"kubeconfig", "context", "api_retries", "size"} <= set(out["keys"])
    assert "access_key_id" not in out["keys"]


def test_a_module_without_auth_has_no_connection_options(capsys):
    with patch_module_args({"kubeconfig": "/x"}), pytest.raises(SystemExit):
        StoragePerfModule(argument_spec=dict(size=dict(type="int")))
    assert "Unsupported parameters" in capsys.readouterr().out


def test_failure_keeps_partial_result_hint_and_details(capsys):
    def logic(m):
        raise StoragePerfError("3 of 5 nodes tagged", hint="Grant ecs:TagResources to the role",
                               result={"tagged": ["a", "b", "c"], "changed": True}, request_id="R-1")

    rc, out = run(capsys, {}, logic)
    assert rc == 1
    assert out["msg"] == "3 of 5 nodes tagged. Grant ecs:TagResources to the role"
    assert out["tagged"] == ["a", "b", "c"] and out["changed"] is True
    assert out["request_id"] == "R-1" and out["hint"] == "Grant ecs:TagResources to the role"


def test_every_system_error_fails_through_the_base(capsys):
    def logic(m):
        raise K8sError("forbidden (403) for get Deployment", 403, "Forbidden")

    rc, out = run(capsys, {}, logic)
    assert rc == 1 and out["msg"].startswith("forbidden (403)") and out["changed"] is False


def test_the_logics_warnings_become_the_tasks_warnings_and_not_a_deprecated_exit_json_key(capsys, monkeypatch):
    # recorded at the module's warn() and deprecate(): where they end up depends on whether controller code was
    # imported in this process (ansible-core then shows them on the display instead of in the result)
    said = {"warn": [], "deprecate": []}
    monkeypatch.setattr(StoragePerfModule, "warn", lambda self, msg, **kw: said["warn"].append(msg))
    monkeypatch.setattr(StoragePerfModule, "deprecate", lambda self, msg, **kw: said["deprecate"].append(msg))
    rc, out = run(capsys, {}, lambda m: {"changed": False, "warnings": ["the Pushgateway did not answer"], "n": 1})
    assert rc == 0 and out["n"] == 1
    assert said == {"warn": ["the Pushgateway did not answer"], "deprecate": []}


def test_add_diff_marks_changed_and_shows_the_diff_only_when_asked(capsys):
    rc, out = run(capsys, {"_ansible_diff": True}, lambda m: m.add_diff({"changed": False}, {"a": 1}, {"a": 2}))
    assert out["changed"] is True and out["diff"] == {"before": {"a": 1}, "after": {"a": 2}}
    rc, out = run(capsys, {}, lambda m: m.add_diff({"changed": False}, {"a": 1}, {"a": 1}))
    assert out["changed"] is False and "diff" not in out


def test_an_unknown_auth_system_is_named():
    with patch_module_args({}), pytest.raises(ValueError, match="auth must name one of k8s, alibaba, ontap, not 'gcp'"):
        StoragePerfModule(argument_spec={}, auth="gcp")


def test_a_system_whose_client_was_not_imported_says_which_file_to_import(monkeypatch):
    from ansible_collections.storageperf.k8s.plugins.module_utils.common import auth

    monkeypatch.delitem(auth._REGISTERED, "alibaba", raising=False)
    with patch_module_args({}), pytest.raises(ValueError, match="must import plugins/module_utils/ack/aliyun.py"):
        StoragePerfModule(argument_spec={}, auth="alibaba")
