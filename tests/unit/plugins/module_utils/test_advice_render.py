"""advice/commands.py and report/advice_render.py: the command per tuning, and the advice as console lines,
Markdown and HTML."""
from __future__ import annotations

import copy

from ansible_collections.storageperf.k8s.plugins.module_utils.report import advice_render as AR
from ansible_collections.storageperf.k8s.plugins.module_utils.advice import commands as C
from ansible_collections.storageperf.k8s.plugins.module_utils.report import fleet as F
from ansible_collections.storageperf.k8s.plugins.module_utils.report import fleet_render as FR

ADVICE = {
    "cluster": {"server": "https://10.0.0.1:6443", "version": "v1.32.1"},
    "summary": {"on": 1, "available": 2, "blocked": 1, "not_applicable": 1},
    "tunings": [
        {"name": "parallel_attach", "state": "available", "reasons": ["note: ecs.g7 attaches at most 8 disks"],
         "expected": "3m19s -> 37s (seed 000)", "expected_speedup": 5.4, "apply_with": "storageperf.k8s.enable_parallel_attach"},
        {"name": "trident_concurrency", "state": "blocked", "reasons": ["Trident 25.02.1 has no concurrent core"],
         "expected": "3.9x to 8.1x (seed 002)", "apply_with": "storageperf.k8s.tune_trident"},
        {"name": "snapshot_controller_tuning", "state": "available", "reasons": [], "expected": "143s -> 17s",
         "apply_with": "role storageperf.k8s.snapshot_controller_tuning"},
        {"name": "csi_sidecar_tuning", "state": "on", "reasons": [], "expected": "none", "apply_with": None},
        {"name": "pmem_storageclasses", "state": "not_applicable", "reasons": ["no PMEM node"], "expected": "2.5x",
         "apply_with": "storageperf.k8s.deploy_pmem"},
    ],
}


def advice(inventory="inv/prod.yml", cluster="ack-prod"):
    return C.add_commands(copy.deepcopy(ADVICE), inventory, cluster)


def test_each_tuning_gets_its_playbook_command_and_the_guarded_rollout():
    t = {x["name"]: x["apply"] for x in advice()["tunings"]}
    assert t["parallel_attach"]["command"] == (
        "ansible-playbook -i inv/prod.yml storageperf.k8s.enable_parallel_attach -l ack-prod -e state=present")
    assert t["parallel_attach"]["rollout_command"] == (
        "ansible-playbook -i inv/prod.yml storageperf.k8s.rollout -l ack-prod -e change=parallel_attach")
    # no playbook applies the snapshot-controller alone without Trident: the rollout is the command
    assert t["snapshot_controller_tuning"]["command"] is None
    assert t["snapshot_controller_tuning"]["rollout_change"] == "snapshot_controller"
    assert t["csi_sidecar_tuning"]["rollout_change"] == "csi_sidecars"
    assert t["pmem_storageclasses"]["rollout_command"] is None and "storageperf.k8s.deploy_pmem -l" in t["pmem_storageclasses"]["command"]


def test_the_snapshot_controller_through_tune_trident_names_the_seeds_numbers():
    tuning = {"name": "snapshot_controller_tuning", "apply_with": "storageperf.k8s.tune_trident"}
    assert C.apply_entry(tuning, "i", "c")["command"].endswith(
        "-e state=present -e worker_threads=25 -e kube_api_qps=75 -e kube_api_burst=150")


def test_unknown_inventory_and_cluster_are_placeholders_and_odd_names_are_quoted():
    assert "-i '<inventory>'" in advice(None, None)["tunings"][0]["apply"]["command"]
    assert "-l '<cluster>'" in advice(None, None)["tunings"][0]["apply"]["command"]
    assert "-i 'my inv.yml'" in advice("my inv.yml", "a")["tunings"][0]["apply"]["command"]


def test_console_says_state_blocker_gain_and_command_in_a_few_lines():
    lines = AR.console_lines(advice(), "ack-prod")
    assert lines[0] == "ack-prod (v1.32.1): 1 on, 2 available, 1 blocked, 1 n/a"
    assert "  parallel_attach: available - expected ~5.4× · 3m19s -> 37s (seed 000)" in lines
    assert "  trident_concurrency: blocked by: Trident 25.02.1 has no concurrent core" in lines
    assert "    apply: ansible-playbook -i inv/prod.yml storageperf.k8s.tune_trident -l ack-prod -e state=present" in lines
    assert lines[-1] == "  on: csi_sidecar_tuning; n/a: pmem_storageclasses"
    assert len(lines) <= 12


def test_markdown_and_html_hold_every_command_and_the_gain():
    a = advice()
    md, html = AR.to_markdown(a, "ack-prod"), AR.to_html(a, "ack-prod")
    for t in a["tunings"]:
        if t["state"] in ("available", "blocked") and t["apply"]["command"]:
            assert t["apply"]["command"] in md and t["apply"]["command"] in html
    assert "~5.4× · 3m19s -> 37s" in md and "first Trident 25.02.1" in md
    assert "change=snapshot_controller" in html and "<pre class=\"cmd\">" in html
    assert "note: ecs.g7" in md  # a caveat is shown, though it blocks nothing


def test_without_expected_speedup_the_text_alone_is_the_gain():
    a = advice()
    del a["tunings"][0]["expected_speedup"]
    assert AR.gain_text(a["tunings"][0]) == "3m19s -> 37s (seed 000)"


def test_the_fleet_report_carries_the_commands_in_its_advisor_section():
    fleet = F.build_fleet([{"cluster": "ack-prod", "document": advice()},
                           {"cluster": "broken", "error": "unreachable"}], "fleet-advice")
    md, html = FR.to_markdown(fleet), FR.to_html(fleet, charts=False)
    command = "ansible-playbook -i inv/prod.yml storageperf.k8s.enable_parallel_attach -l ack-prod -e state=present"
    assert "### How to apply" in md and command in md
    assert "<h2>How to apply</h2>" in html and command in html and "ack-prod / parallel_attach" in html
    assert "~5.4× · 3m19s" in md


def test_every_command_names_its_playbook_by_the_collection_never_a_repository_path():
    """`ansible-playbook storageperf.k8s.x` runs from any directory where the collection is installed; a path such as
    playbooks/x.yml only inside a checkout of the repository."""
    from ansible_collections.storageperf.k8s.plugins.module_utils.advice.seeds import TUNINGS

    seeded = C.add_commands({"tunings": [dict(row, name=name) for name, row in TUNINGS.items()]}, "/srv/inv.yml", "c")
    commands = [c for t in seeded["tunings"] for c in (t["apply"]["command"], t["apply"]["rollout_command"]) if c]
    assert len(commands) >= 7, commands  # four tunings roll out, and four have a playbook of their own
    for command in commands:
        playbook = command.split()[3]
        assert playbook.startswith("storageperf.k8s.") and "/" not in playbook and not playbook.endswith(".yml"), command
    assert not [row for row in TUNINGS.values() if "playbooks/" in str(row)]


def test_the_csi_sidecars_rollout_command_carries_its_required_parameters_or_is_not_offered():
    tuning = {"name": "csi_sidecar_tuning", "apply_with": "storageperf.k8s.tune_trident (its operator)"}
    assert C.apply_entry(tuning, "fleet.yml", "twin-1")["rollout_command"] is None
    found = dict(tuning, rollout_parameters={"csi_deployment": "trident-controller", "csi_namespace": "trident",
                                             "storage_class": "ontap-nas"})
    assert C.apply_entry(found, "fleet.yml", "twin-1")["rollout_command"] == (
        "ansible-playbook -i fleet.yml storageperf.k8s.rollout -l twin-1 -e change=csi_sidecars -e "
        "'{\"change_parameters\": {\"csi_deployment\": \"trident-controller\", \"csi_namespace\": \"trident\", "
        "\"storage_class\": \"ontap-nas\"}}'")
