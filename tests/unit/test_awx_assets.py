"""awx/assets.json (`awx import`): made from the playbooks and their argument specs, and every variable it asks for,
hands to a job or injects is one the collection reads (tests/support/awx_assets.py)."""
from __future__ import annotations

import copy
import json

import pytest
import yaml

from tests.support import awx_assets as A

awxkit_pages = pytest.importorskip("awxkit.api.pages", reason="pip install -r requirements-dev.txt (awxkit)")
from awxkit import yaml_file  # noqa: E402  (after the skip: awxkit is a development requirement)
from awxkit.api.pages.api import DEPENDENT_EXPORT, EXPORTABLE_RESOURCES  # noqa: E402

PAGES = {"credential_types": awxkit_pages.CredentialType, "projects": awxkit_pages.Project,
         "job_templates": awxkit_pages.JobTemplate, "workflow_job_templates": awxkit_pages.WorkflowJobTemplate}


@pytest.fixture(scope="module")
def doc() -> dict:
    return json.loads(A.ASSETS.read_text())


def survey(doc: dict, template: str) -> dict:
    [jt] = [jt for jt in doc["job_templates"] if jt["name"] == template]
    return {q["variable"]: q for q in jt["related"]["survey_spec"]["spec"]}


def test_the_checked_in_file_is_what_the_playbooks_and_specs_make(doc):
    assert A.ASSETS.read_text() == A.render(), (
        "awx/assets.json is stale: .venv/bin/python -m tests.support.awx_assets > awx/assets.json")


def test_every_variable_is_read_and_every_injected_name_too(doc):
    assert A.problems(doc) == []


def test_a_survey_question_the_playbook_does_not_read_is_found(doc):
    """docs/awx.md's old Tune Trident survey: qps where tune_trident.yml reads kube_api_qps."""
    bad = copy.deepcopy(doc)
    [jt] = [jt for jt in bad["job_templates"] if jt["playbook"] == "playbooks/tune_trident.yml"]
    [q] = [q for q in jt["related"]["survey_spec"]["spec"] if q["variable"] == "kube_api_qps"]
    q["variable"] = "qps"
    assert A.problems(bad) == ["storageperf Tune Trident: survey variable qps is not a variable playbooks/tune_trident.yml "
                               "reads (its header and known_vars.PLAYBOOKS): its answer would be ignored"]


@pytest.mark.parametrize("key,value,says", [
    ("default", 100, "kube_api_qps has default 100 where the option it feeds wants 75.0"),
    ("type", "text", "kube_api_qps has type 'text' where the option it feeds wants 'float'"),
])
def test_a_survey_question_unlike_its_option_is_found(doc, key, value, says):
    bad = copy.deepcopy(doc)
    [jt] = [jt for jt in bad["job_templates"] if jt["playbook"] == "playbooks/tune_trident.yml"]
    [q] = [q for q in jt["related"]["survey_spec"]["spec"] if q["variable"] == "kube_api_qps"]
    q[key] = value
    assert any(says in p for p in A.problems(bad)), A.problems(bad)


def test_surveys_follow_the_argument_specs(doc):
    tune = survey(doc, "storageperf Tune Trident")
    # snapshot_controller_tuning's spec, through tune_trident.yml's play variables
    assert (tune["kube_api_qps"]["type"], tune["kube_api_qps"]["default"]) == ("float", 75.0)
    assert (tune["kube_api_burst"]["type"], tune["kube_api_burst"]["default"]) == ("integer", 150)
    assert tune["state"]["choices"] == ["present", "absent"]
    rollout = survey(doc, "storageperf Guarded rollout")
    assert rollout["rollout_action"]["choices"] == ["run", "abort"] and rollout["rollout_action"]["default"] == "run"
    assert rollout["change"]["required"] and rollout["change"]["type"] == "multiplechoice"
    bench = survey(doc, "storageperf CSI lifecycle benchmark")
    assert bench["steps"]["type"] == "multiselect" and bench["steps"]["default"].split("\n")[0] == "create_volume"
    assert bench["compare"]["choices"] == ["true", "false"] and bench["compare"]["default"] == "false"


def test_an_injector_nobody_reads_and_an_unknown_input_are_found(doc):
    bad = copy.deepcopy(doc)
    ontap = bad["credential_types"][1]
    ontap["injectors"]["env"] = {"ONTAP_USER": "{{ username }}", "ONTAP_PASSWORD": "{{ passwd }}"}
    assert A.problems(bad) == [
        "NetApp ONTAP user (storageperf.k8s): injects ONTAP_USER, which no module or plugin of the collection reads",
        "NetApp ONTAP user (storageperf.k8s): ONTAP_PASSWORD takes {{ passwd }}, which is no input field or injected file"]


def test_every_credential_the_modules_take_from_the_environment_has_an_injector(doc):
    from ansible_collections.storageperf.k8s.plugins.plugin_utils.credential_env import CREDENTIAL_VARIABLES
    injected = {name for ct in doc["credential_types"] for name in ct["injectors"]["env"]}
    # AWX's own Amazon Web Services credential type injects the AWS_* ones
    assert {n for n in CREDENTIAL_VARIABLES if not n.startswith("AWS_")} <= injected
    assert {"K8S_AUTH_KUBECONFIG", "KUBECONFIG"} <= injected
    for ct in doc["credential_types"]:
        secrets = {f["id"] for f in ct["inputs"]["fields"] if f.get("secret")}
        assert secrets >= {f["id"] for f in ct["inputs"]["fields"] if f["id"] in ("access_key_secret", "password",
                                                                                  "security_token", "kubeconfig")}


def test_a_node_naming_a_missing_template_or_node_is_found(doc):
    bad = copy.deepcopy(doc)
    node = bad["workflow_job_templates"][0]["related"]["workflow_nodes"][1]
    node["unified_job_template"]["name"] = "storageperf Tune"
    node["related"]["success_nodes"][0]["identifier"] = "nowhere"
    assert A.problems(bad) == [
        "storageperf Benchmark, tune, benchmark, compare, node tune: success_nodes names node nowhere, which the "
        "workflow does not have",
        "storageperf Benchmark, tune, benchmark, compare, node tune: job template 'storageperf Tune' is not in the "
        "document"]


def nodes(doc: dict, workflow: str) -> dict[str, dict]:
    [wf] = [wf for wf in doc["workflow_job_templates"] if wf["name"] == workflow]
    return {n["identifier"]: n for n in wf["related"]["workflow_nodes"]}


def test_benchmark_tune_benchmark_compare(doc):
    n = nodes(doc, "storageperf Benchmark, tune, benchmark, compare")
    chain, at = [], "baseline"
    while at:
        chain.append(n[at]["unified_job_template"]["name"])
        at = next((e["identifier"] for e in n[at]["related"]["success_nodes"]), None)
    assert chain == ["storageperf CSI lifecycle benchmark", "storageperf Tune Trident",
                     "storageperf CSI lifecycle benchmark", "storageperf Compare runs"]
    assert n["compare"]["extra_data"]["tolerances"]  # compare.yml refuses to check nothing


def test_the_guarded_rollout_waits_for_approval_and_aborts_on_failure_or_denial(doc):
    n = nodes(doc, "storageperf Guarded rollout, approved per wave")
    assert [e["identifier"] for e in n["canary"]["related"]["success_nodes"]] == ["approve"]
    assert "unified_job_template" not in n["approve"] and n["approve"]["related"]["create_approval_template"]["timeout"] > 0
    assert [e["identifier"] for e in n["approve"]["related"]["success_nodes"]] == ["rest"]
    for step in ("canary", "approve", "rest"):
        assert [e["identifier"] for e in n[step]["related"]["failure_nodes"]] == ["abort"]
    assert n["abort"]["extra_data"]["rollout_action"] == "abort"
    assert n["canary"]["limit"] == "canary" and n["rest"]["limit"] == "k8s_clusters:!canary"


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_awx_import_reads_it(doc, fmt, tmp_path):
    """What `awx import` (awxkit 24.6.1, cli/resource.py Import) reads, in both of its formats, and the keys
    ApiV2.import_assets looks assets up by: the exportable resources, each with the natural key of its page class."""
    path = A.ASSETS if fmt == "json" else tmp_path / "assets.yml"
    if fmt == "yaml":
        path.write_text(yaml.safe_dump(doc))
    with path.open() as stdin:  # awxkit's YAML loader wants a named stream, as stdin is
        data = json.load(stdin) if fmt == "json" else yaml.load(stdin, Loader=yaml_file.Loader)
    assert data == doc
    assert set(data) <= set(EXPORTABLE_RESOURCES)
    for resource, assets in data.items():
        for asset in assets:
            key = asset["natural_key"]
            assert set(key) == {*PAGES[resource].NATURAL_KEY, "type"}, (resource, key)
            assert all(key[k] == asset[k] for k in PAGES[resource].NATURAL_KEY if k != "organization")
    dependent = {child for parent, child in DEPENDENT_EXPORT if parent == "WorkflowJobTemplate"}
    assert {"SurveySpec", "WorkflowJobTemplateNode"} <= dependent  # exported whole, under related
    for wf in data["workflow_job_templates"]:
        for node in wf["related"]["workflow_nodes"]:
            assert set(node["natural_key"]) == {*awxkit_pages.WorkflowJobTemplateNode.NATURAL_KEY, "type"}
            assert node["natural_key"]["workflow_job_template"] == wf["natural_key"]
