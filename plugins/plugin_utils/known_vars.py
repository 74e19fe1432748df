# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The variables each playbook of the collection reads, for the check_extra_vars action.

A run's extra vars (-e, AWX surveys and workflow artifacts) are checked against: the short names of the playbook
being run (PLAYBOOKS, written in its header), the inventory variables every cluster playbook reads (INVENTORY),
what the collection publishes with set_stats (OUTPUTS: an AWX workflow passes them to later jobs as extra vars),
every role variable of the collection (read from roles/*/meta/argument_specs.yml), and Ansible's own names
(PREFIXES, MAGIC). tests/unit/plugins/action/test_check_extra_vars.py checks PLAYBOOKS against the playbooks.
"""

# playbook (file name without .yml) -> the short names it reads (-e volumes=1000), beyond INVENTORY
PLAYBOOKS = {
    "advise": ["reports_dir", "max_fail_percentage"],
    "bench_attach_stress": ["replicas", "node", "storage_class", "create_storage_class", "disk_limit", "volumes_per_pod",
                            "prewarm", "compare", "attribution", "repeat", "step_timeout", "give_up_after_warnings",
                            "run_id", "reports_dir", "cleanup", "max_fail_percentage", "metrics_pushgateway_url"],
    "bench_csi_lifecycle": ["storage_class", "volumes", "sweep", "pvcs_per_pod", "size", "snapshot_class", "steps",
                            "compare", "attribution", "repeat", "concurrency", "step_timeout", "give_up_after_warnings",
                            "run_id", "reports_dir", "cleanup", "max_fail_percentage", "metrics_pushgateway_url"],
    # fio and sysbench take their role's names; the fleet report reads the reports directory to sit beside the clusters
    "bench_fio": ["max_fail_percentage", "metrics_pushgateway_url", "bench_fio_reports_dir"],
    "bench_gluster": ["compare", "volume_counts", "reports_dir", "metrics_pushgateway_url"],
    "bench_sysbench": ["max_fail_percentage", "metrics_pushgateway_url", "bench_sysbench_reports_dir"],
    "cleanup": ["run_id", "all_runs", "timeout", "force"],
    "cleanup_gluster": ["prefix"],
    "cluster_info": [],
    "clusters": ["storageperf_cluster_needs"],
    "compare": ["candidate", "baseline", "baseline_file", "tolerances", "junit_path", "fail_on_threshold", "run_dirs",
                "reports_dir", "fleet_report_dir",
                "upload_bucket", "upload_prefix", "upload_endpoint_url", "upload_region", "upload_addressing_style",
                "upload_signature_version"],
    "fleet_report": ["reports_dir", "benchmark", "max_fail_percentage"],
    "deploy_pmem": ["state", "nodes", "node_type", "regions", "vg_name", "topology", "classes", "force"],
    "enable_parallel_attach": ["state", "detach", "parallel"],
    "history": ["reports_dir", "output_dir", "max_pvalue", "min_effect_pct", "tolerances", "baseline_runs",
                "fail_on_regression", "reports_bucket",
                "upload_bucket", "upload_prefix", "upload_endpoint_url", "upload_region", "upload_addressing_style",
                "upload_signature_version"],
    "rollout": ["change", "change_parameters", "waves", "canary_group", "first_wave", "max_fail_percentage",
                "retry_rolled_back", "rollout_id", "baseline_max_age", "min_gain_fraction", "confidence", "tolerance_pct",
                "drift_pct",
                "reports_dir", "rollout_report_only", "rollout_halted", "upload_bucket", "upload_prefix",
                "upload_endpoint_url", "upload_region", "upload_addressing_style", "upload_signature_version",
                "lease_ttl", "rollout_action", "pause_after_wave"],
    "tune_trident": ["state", "allow_tech_preview", "k8s_api_qps", "worker_threads", "kube_api_qps", "kube_api_burst",
                     "fail_on_ontap_leaks"],
}

# host and group variables of the inventories (inventories/examples, the inventory plugins), also given with -e
INVENTORY = [
    "cluster_group", "gluster_group", "k8s_kubeconfig", "k8s_context", "trident_namespace",
    "ack_cluster_id", "ack_region", "ack_cs_endpoint", "ack_ecs_endpoint",
    "alibaba_access_key_id", "alibaba_access_key_secret", "alibaba_security_token",
    "ontap_hostname", "ontap_username", "ontap_password", "ontap_svm", "ontap_ca_cert", "ontap_validate_certs",
    "ontap_use_rest",
    "gluster_address", "gluster_bricks_root", "gluster_cli", "gluster_observe_cli", "gluster_restart_cmd",
    "twin_dir", "twin_cloud",
]

# set_stats keys: an AWX workflow node's artifacts become the next job's extra vars
OUTPUTS = [
    "storageperf_stats_advice", "storageperf_stats_bench_attach_stress", "storageperf_stats_bench_baseline",
    "storageperf_stats_bench_csi_lifecycle", "storageperf_stats_bench_last", "storageperf_stats_bench_runs",
    "storageperf_stats_compare", "storageperf_stats_fleet_report", "storageperf_stats_gluster_bench",
    "storageperf_stats_history", "storageperf_stats_rollout",
    "storageperf_stats_ack_parallel_attach",
]

# Ansible's and the job runners' own: connection and behaviour variables, AWX/Tower job metadata, molecule's
PREFIXES = ("ansible_", "awx_", "tower_", "molecule_", "_")

# Ansible's magic variables (docs: Special Variables) and names a play reserves
MAGIC = [
    "groups", "group_names", "hostvars", "inventory_hostname", "inventory_hostname_short", "inventory_dir",
    "inventory_file", "omit", "play_hosts", "playbook_dir", "role_name", "role_names", "role_path", "environment",
    "ansible_inventory_sources", "ansible_limit",
]
