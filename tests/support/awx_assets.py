"""awx/assets.json, AWX's own import format (`awx import < awx/assets.json`, awxkit), made from the playbooks.

Every survey question is made from the option its variable feeds: the test follows the variable through the
playbook's text to the role option (meta/argument_specs.yml) or module option (DOCUMENTATION) it is handed to,
and takes that option's type, default and choices. A variable no option receives is declared in PLAYBOOK_ONLY
with the playbook's own default. tests/unit/test_awx_assets.py holds the checked-in file to build() and checks
what build() cannot get wrong by construction (problems()): every variable a survey, a workflow node or a
workflow survey gives is one its playbook reads, every credential injector sets what the modules read.

    .venv/bin/python -m tests.support.awx_assets > awx/assets.json    # after changing a playbook or a spec
"""
from __future__ import annotations

import ast
import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
ASSETS = REPO / "awx" / "assets.json"
ORG = {"name": "Default", "type": "organization"}
PROJECT = "storageperf.k8s"
# the persistent path every job of a workflow sees (docs/awx.md, "Keeping reports after the job")
SHARED_REPORTS = "/srv/storageperf/reports"

# The variables no role or module option receives under a name of its own: (type, default, help).
PLAYBOOK_ONLY: dict[str, dict[str, tuple[str, Any, str]]] = {
    "tune_trident": {"fail_on_ontap_leaks": ("bool", False, "Fail when ONTAP holds Trident volumes no PV accounts for.")},
    "rollout": {"canary_group": ("str", "", "Inventory group whose clusters form wave 1 (empty: the first wave's size)."),
                "rollout_report_only": ("bool", False, "Touch no cluster: assemble the report from the records.")},
    "cleanup": {"run_id": ("str", "", "The run to delete (a directory name under reports_dir); empty with all_runs."),
                "all_runs": ("bool", False, "Delete every storageperf run instead (runs still measuring are left).")},
    "fleet_report": {"reports_dir": ("str", "reports", "Where the jobs wrote their runs (a path every job sees)."),
                     "benchmark": ("str", "", "Only runs of this benchmark (csi_lifecycle, attach_stress ...); empty: the newest run of any.")},
}

CREDENTIAL_TYPES: list[dict[str, Any]] = [
    {"name": "Alibaba Cloud AccessKey (storageperf.k8s)",
     "description": "ACK and ECS keys for the ack_* modules, the ack inventory plugin and tuning_advice (docs/credentials.md).",
     "inputs": {"fields": [
         {"id": "access_key_id", "type": "string", "label": "AccessKey ID"},
         {"id": "access_key_secret", "type": "string", "label": "AccessKey secret", "secret": True},
         {"id": "security_token", "type": "string", "label": "STS security token (temporary credentials only)",
          "secret": True},
         {"id": "region", "type": "string", "label": "Region (optional, e.g. cn-hangzhou)"}],
         "required": ["access_key_id", "access_key_secret"]},
     "injectors": {"env": {"ALIBABA_CLOUD_ACCESS_KEY_ID": "{{ access_key_id }}",
                           "ALIBABA_CLOUD_ACCESS_KEY_SECRET": "{{ access_key_secret }}",
                           "ALIBABA_CLOUD_SECURITY_TOKEN": "{{ security_token }}",
                           "ALIBABA_CLOUD_REGION_ID": "{{ region }}"}}},
    {"name": "NetApp ONTAP user (storageperf.k8s)",
     "description": "The ONTAP user ontap_volume_info reads volumes with (tune_trident.yml's leak check).",
     "inputs": {"fields": [
         {"id": "username", "type": "string", "label": "ONTAP user (read access to volumes, qtrees and LUNs)"},
         {"id": "password", "type": "string", "label": "Password", "secret": True}],
         "required": ["username", "password"]},
     "injectors": {"env": {"ONTAP_USERNAME": "{{ username }}", "ONTAP_PASSWORD": "{{ password }}"}}},
    {"name": "Kubeconfig (storageperf.k8s)",
     "description": "A kubeconfig file for every Kubernetes module, kubernetes.core and the kubeconfig inventory plugin; "
                    "each cluster's context is its inventory host's k8s_context.",
     "inputs": {"fields": [
         {"id": "kubeconfig", "type": "string", "label": "Kubeconfig (YAML)", "multiline": True, "secret": True}],
         "required": ["kubeconfig"]},
     "injectors": {"file": {"template.kubeconfig": "{{ kubeconfig }}"},
                   "env": {"K8S_AUTH_KUBECONFIG": "{{ tower.filename.kubeconfig }}",
                           "KUBECONFIG": "{{ tower.filename.kubeconfig }}"}}},
]

# Where the playbook asks more or less than the option it feeds: compare.yml refuses to run without tolerances (the
# role's option may be empty), and an empty candidate means "from the workflow's artifacts" (the role needs one).
REQUIRED = {("compare", "tolerances"): True, ("compare", "candidate"): False}

# name, playbook (file stem), description, survey variables, fields over the defaults
JOB_TEMPLATES: list[tuple[str, str, str, list[str], dict[str, Any]]] = [
    ("storageperf CSI lifecycle benchmark", "bench_csi_lifecycle",
     "Seed 002's 8-step CSI lifecycle benchmark per cluster (docs/bench-csi-lifecycle.md).",
     ["volumes", "storage_class", "steps", "compare", "attribution", "repeat", "concurrency", "reports_dir", "cleanup"],
     {"ask_job_slice_count_on_launch": True}),
    ("storageperf Attach-stress benchmark", "bench_attach_stress",
     "Seed 000's attach-stress StatefulSet per cluster (docs/bench-attach-stress.md).",
     ["replicas", "node", "storage_class", "compare", "attribution", "repeat", "reports_dir", "cleanup"],
     {"ask_job_slice_count_on_launch": True}),
    ("storageperf Tune Trident", "tune_trident",
     "Trident concurrent core and the snapshot-controller's QPS, burst and workers (docs/trident.md).",
     ["state", "allow_tech_preview", "k8s_api_qps", "kube_api_qps", "kube_api_burst", "worker_threads",
      "fail_on_ontap_leaks"], {}),
    ("storageperf ACK parallel attach", "enable_parallel_attach",
     "Seed 000's parallel disk attach on ACK clusters.", ["state", "detach", "parallel"], {}),
    ("storageperf Compare runs", "compare",
     "Every cluster's last benchmark against its baseline (the workflow's artifacts), or candidate against baseline.",
     ["tolerances", "candidate", "baseline", "junit_path", "fail_on_threshold"], {}),
    ("storageperf Guarded rollout", "rollout",
     "A change in waves with a measured gate and rollback per cluster; rollout_action=abort rolls it all back "
     "(docs/rollout.md).",
     ["change", "change_parameters", "canary_group", "first_wave", "max_fail_percentage", "retry_rolled_back",
      "rollout_action", "pause_after_wave", "lease_ttl", "reports_dir", "rollout_report_only"], {}),
    ("storageperf Fleet report", "fleet_report",
     "One fleet report of every cluster's newest run under reports_dir: the runs of all slices of a sliced job.",
     ["reports_dir", "benchmark"], {}),
    ("storageperf Clean up", "cleanup", "Delete what a benchmark run left in the clusters (docs/cleanup.md).",
     ["run_id", "all_runs", "force"], {}),
]

BENCH, TUNE, COMPARE, ROLLOUT, FLEET = (JOB_TEMPLATES[i][0] for i in (0, 2, 4, 5, 6))

# name, description, survey variables (every node's playbook reads them), nodes:
# identifier -> (job template or None for an approval node, fields, {edge: [identifiers]})
WORKFLOWS: list[tuple[str, str, list[tuple[str, str]], dict[str, tuple[str | None, dict[str, Any], dict[str, list[str]]]]]] = [
    ("storageperf Benchmark, tune, benchmark, compare",
     "docs/awx.md: the baseline benchmark, Tune Trident, the benchmark again, then every cluster's two runs compared.",
     [], {
         "baseline": (BENCH, {"extra_data": {"reports_dir": SHARED_REPORTS, "compare": False}},
                      {"success_nodes": ["tune"]}),
         "tune": (TUNE, {}, {"success_nodes": ["again"]}),
         "again": (BENCH, {"extra_data": {"reports_dir": SHARED_REPORTS, "compare": False}},
                   {"success_nodes": ["compare"]}),
         "compare": (COMPARE, {"extra_data": {
             "reports_dir": SHARED_REPORTS,
             "tolerances": {"*.wall_s": {"max_increase_pct": 10}, "*.errors": {"max": 0}}}}, {}),
     }),
    ("storageperf Guarded rollout, approved per wave",
     "docs/awx.md: the canary, a person's approval, the rest of the fleet, the report; a failure or a denial aborts "
     "(rollout_action=abort rolls back every cluster the rollout changed).",
     [(ROLLOUT, "change"), (ROLLOUT, "change_parameters")], {
         "canary": (ROLLOUT, {"limit": "canary", "extra_data": {
             "waves": ["100%"], "first_wave": 1, "reports_dir": SHARED_REPORTS}},
             {"success_nodes": ["approve"], "failure_nodes": ["abort"]}),
         "approve": (None, {"create_approval_template": {
             "name": "storageperf: widen the rollout past the canary",
             "description": "The canary's report is in the artifact storageperf_stats_rollout.", "timeout": 86400}},
             {"success_nodes": ["rest"], "failure_nodes": ["abort"]}),
         "rest": (ROLLOUT, {"limit": "k8s_clusters:!canary", "extra_data": {
             "waves": ["25%", "100%"], "first_wave": 2, "reports_dir": SHARED_REPORTS}},
             {"success_nodes": ["report"], "failure_nodes": ["abort"]}),
         "abort": (ROLLOUT, {"extra_data": {"rollout_action": "abort", "reports_dir": SHARED_REPORTS}}, {}),
         "report": (ROLLOUT, {"extra_data": {"rollout_report_only": True, "reports_dir": SHARED_REPORTS}}, {}),
     }),
    ("storageperf Sliced fleet benchmark",
     "docs/awx.md, Job slicing: the benchmark split over 3 jobs (every 3rd cluster each), then one fleet report of "
     "all their runs from the shared reports_dir.",
     [], {
         "bench": (BENCH, {"job_slice_count": 3, "extra_data": {"reports_dir": SHARED_REPORTS}},
                   {"always_nodes": ["fleet"]}),
         "fleet": (FLEET, {"extra_data": {"reports_dir": SHARED_REPORTS, "benchmark": "csi_lifecycle"}}, {}),
     }),
]


# --- what the playbooks read -----------------------------------------------------------------------------------

def playbook_text(playbook: str) -> str:
    return (REPO / "playbooks" / f"{playbook}.yml").read_text()


@cache
def role_options() -> dict[str, dict[str, Any]]:
    """Every option of every role's argument specs (a role's entry points share their options' specs)."""
    out: dict[str, dict[str, Any]] = {}
    for path in sorted((REPO / "roles").glob("*/meta/argument_specs.yml")):
        for entry in (yaml.safe_load(path.read_text())["argument_specs"] or {}).values():
            out.update(entry.get("options") or {})
    return out


@cache
def module_options(module: str) -> dict[str, Any]:
    """A module's options as its DOCUMENTATION gives them (ansible-test sanity holds them to its argument spec)."""
    path = REPO / "plugins" / "modules" / f"{module}.py"
    if not path.is_file():
        return {}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "DOCUMENTATION":
            return dict(yaml.safe_load(ast.literal_eval(node.value))["options"])
    return {}


def _walk(node: Any, owner: str | None, out: list[tuple[str | None, str, str]]) -> None:
    """(module or None, key, template) for every string value; module: the storageperf.k8s module it is an argument of."""
    if isinstance(node, dict):
        for key, value in node.items():
            if isinstance(value, str):
                out.append((owner, str(key), value))
            else:
                module = str(key)[len("storageperf.k8s."):] if str(key).startswith("storageperf.k8s.") else None
                _walk(value, module or (owner if key not in ("vars",) else None), out)
    elif isinstance(node, list):
        for item in node:
            _walk(item, owner, out)


def option_specs(playbook: str, var: str) -> list[dict[str, Any]]:
    """The specs of the options the playbook hands var to: `<role option>: "{{ var | ... }}"`, a storageperf.k8s
    module's `<option>: "{{ var | ... }}"`, through a play variable that holds var (`tune_state: "{{ state ...}}"`),
    or a role's `<prefix>{{ item }}` loop over a list naming var; else PLAYBOOK_ONLY's declaration."""
    text = playbook_text(playbook)
    values: list[tuple[str | None, str, str]] = []
    _walk(yaml.safe_load(text), None, values)
    exact, loose = _handed_to(values, var, depth=2)
    for prefix in re.findall(r'"([a-z_]+_)\{\{ item \}\}"', text):
        if re.search(r"_play_vars: \[[^\]]*\b%s\b" % re.escape(var), text) and prefix + var in role_options():
            exact.append(role_options()[prefix + var])
    if var in PLAYBOOK_ONLY.get(playbook, {}):
        kind, default, description = PLAYBOOK_ONLY[playbook][var]
        exact.append({"type": kind, "default": default, "description": description})
    return exact or loose


def _handed_to(values: list[tuple[str | None, str, str]], var: str, depth: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    given = re.compile(r"^\{\{\s*%s\s*(\}\}|\|)" % re.escape(var))  # the option takes var itself
    within = re.compile(r"(?<![.\w'])%s(?![\w'])" % re.escape(var))  # an expression of var (a string split ...)
    exact: list[dict[str, Any]] = []
    loose: list[dict[str, Any]] = []
    for module, key, template in values:
        spec = module_options(module).get(key) if module else role_options().get(key)
        if spec is not None and given.match(template.strip()):
            exact.append(spec)
        elif spec is not None and "{{" in template and within.search(template):
            loose.append(spec)
        elif spec is None and not module and key != var and depth > 0 and given.match(template.strip()):
            more = _handed_to(values, key, depth - 1)
            exact += more[0]
            loose += more[1]
    return exact, loose


def reads(playbook: str, var: str) -> bool:
    """Whether the playbook reads var (the same reading as test_check_extra_vars: `var | default(`, `var is
    defined`, a `{{ var }}`, or a name in a role's list of play variables) and declares it (known_vars.PLAYBOOKS)."""
    from ansible_collections.storageperf.k8s.plugins.plugin_utils.known_vars import PLAYBOOKS
    text = playbook_text(playbook)
    v = re.escape(var)
    read = re.search(r"(?<![.\w'])%s\s*(\||is defined|\}\})" % v, text) or re.search(r"_play_vars: \[[^\]]*\b%s\b" % v, text)
    return bool(read) and var in PLAYBOOKS.get(playbook, [])


# --- survey questions ------------------------------------------------------------------------------------------

def _help(spec: dict[str, Any]) -> str:
    text = spec.get("description") or spec.get("short_description") or ""
    text = " ".join(text) if isinstance(text, list) else str(text)
    text = re.sub(r"[CVOIE]\(([^)]*)\)", r"\1", text)
    return text if len(text) <= 500 else text[:497].rsplit(" ", 1)[0] + "..."


def question(var: str, spec: dict[str, Any]) -> dict[str, Any]:
    """One survey question from an option's spec (AWX survey types: text, textarea, integer, float,
    multiplechoice, multiselect; a survey's answers reach the playbook as extra vars of that type)."""
    kind, default, choices = spec.get("type", "str"), spec.get("default"), spec.get("choices")
    q: dict[str, Any] = {"question_name": var, "question_description": _help(spec), "variable": var,
                         "required": bool(spec.get("required")), "new_question": True}
    if kind == "bool":
        q.update(type="multiplechoice", choices=["true", "false"], default=str(bool(default)).lower())
    elif kind == "int":
        q.update(type="integer", default="" if default is None else int(default))
    elif kind == "float":
        q.update(type="float", default="" if default is None else float(default))
    elif kind == "list" and choices:
        q.update(type="multiselect", choices=list(choices), default="\n".join(map(str, default or [])))
    elif kind == "dict":
        q.update(type="textarea", default=json.dumps(default) if default else "",
                 question_description=(q["question_description"] + " JSON.").strip())
    elif kind in ("str", "path", "raw") and choices:
        q.update(type="multiplechoice", choices=list(choices), default="" if default is None else str(default))
    elif kind in ("str", "path", "raw"):
        q.update(type="text", default="" if default is None else str(default), min=0, max=1024)
    else:
        raise ValueError("%s: no survey type for an option of type %s: leave it to extra vars" % (var, kind))
    return q


# --- what problems() checks ------------------------------------------------------------------------------------

def playbook_defaults(playbook: str, var: str) -> list[Any]:
    """The literal defaults the playbook gives var (`var | default(75)`), which a survey's default must repeat."""
    out = []
    for literal in re.findall(r"(?<![.\w'])%s\s*\|\s*default\(([^(),]+)[,)]" % re.escape(var), playbook_text(playbook)):
        try:
            out.append(ast.literal_eval(literal.strip().replace("true", "True").replace("false", "False")))
        except (ValueError, SyntaxError):
            continue  # omit, another variable: no default of the playbook's own
    return out


def env_read() -> set[str]:
    """Every environment variable name the collection's code names on its own (a string constant that is an
    environment variable's name: ENV_ACCESS_KEY_ID = "ALIBABA_CLOUD_ACCESS_KEY_ID", AUTH_ENV's values ...)."""
    names = set()
    for path in (REPO / "plugins").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and re.fullmatch(r"[A-Z][A-Z0-9_]{3,}", node.value):
                names.add(node.value)
    return names


def _survey_problems(where: str, playbook: str, q: dict[str, Any]) -> list[str]:
    var = q.get("variable", "")
    if not reads(playbook, var):
        return ["%s: survey variable %s is not a variable playbooks/%s.yml reads (its header and known_vars.PLAYBOOKS): "
                "its answer would be ignored" % (where, var, playbook)]
    specs = option_specs(playbook, var)
    if not specs:
        return ["%s: %s reaches no role or module option of playbooks/%s.yml: declare it in PLAYBOOK_ONLY" % (where, var, playbook)]
    want = question(var, specs[0])
    out = ["%s: survey variable %s has %s %r where the option it feeds wants %r"
           % (where, var, key, q.get(key), want.get(key))
           for key in ("type", "default", "choices") if q.get(key) != want.get(key)]
    for literal in playbook_defaults(playbook, var):
        if question(var, {**specs[0], "default": literal})["default"] != q.get("default"):
            out.append("%s: survey variable %s defaults to %r, playbooks/%s.yml to %r" % (where, var, q.get("default"), playbook, literal))
    return out


def problems(doc: dict[str, Any]) -> list[str]:
    """What would make an imported asset ask for a variable nobody reads, or inject one nobody reads."""
    out: list[str] = []
    templates = {jt["name"]: jt["playbook"][len("playbooks/"):-len(".yml")] for jt in doc.get("job_templates", [])}
    for jt in doc.get("job_templates", []):
        playbook = templates[jt["name"]]
        if not (REPO / jt["playbook"]).is_file():
            out.append("%s: no playbook %s" % (jt["name"], jt["playbook"]))
            continue
        for q in (jt["related"].get("survey_spec") or {}).get("spec", []):
            out += _survey_problems(jt["name"], playbook, q)
    for wf in doc.get("workflow_job_templates", []):
        nodes = wf["related"]["workflow_nodes"]
        ids = [n["identifier"] for n in nodes]
        playbooks = []
        for n in nodes:
            where = "%s, node %s" % (wf["name"], n["identifier"])
            for edge in ("success_nodes", "failure_nodes", "always_nodes"):
                out += ["%s: %s names node %s, which the workflow does not have" % (where, edge, e["identifier"])
                        for e in n["related"].get(edge, []) if e["identifier"] not in ids]
            if "unified_job_template" not in n:
                if not (n["related"].get("create_approval_template") or {}).get("name"):
                    out.append("%s: neither a job template nor an approval" % where)
                continue
            name = n["unified_job_template"]["name"]
            if name not in templates:
                out.append("%s: job template %r is not in the document" % (where, name))
                continue
            playbooks.append(templates[name])
            out += ["%s: extra_data %s is not a variable playbooks/%s.yml reads" % (where, var, templates[name])
                    for var in n.get("extra_data") or {} if not reads(templates[name], var)]
        if len(set(ids)) != len(ids):
            out.append("%s: node identifiers repeat" % wf["name"])
        for q in (wf["related"].get("survey_spec") or {}).get("spec", []):
            for playbook in sorted(set(playbooks)):  # a workflow's survey answers go to every job of it
                out += _survey_problems(wf["name"], playbook, q)
    read = env_read()
    for ct in doc.get("credential_types", []):
        fields = {f["id"] for f in ct["inputs"].get("fields", [])}
        files = {k.split(".", 1)[1] for k in ct["injectors"].get("file", {})}
        for name, template in ct["injectors"].get("env", {}).items():
            if name not in read:
                out.append("%s: injects %s, which no module or plugin of the collection reads" % (ct["name"], name))
            for ref in re.findall(r"\{\{\s*([\w.]+)\s*\}\}", template):
                ok = ref in fields or (ref.startswith("tower.filename.") and ref.split(".")[2] in files)
                if not ok:
                    out.append("%s: %s takes {{ %s }}, which is no input field or injected file" % (ct["name"], name, ref))
        out += ["%s: injects extra vars (%s): a credential goes into the environment, never into extra vars "
                "(docs/credentials.md)" % (ct["name"], ", ".join(ct["injectors"]["extra_vars"]))
                for _ in [0] if ct["injectors"].get("extra_vars")]
    return out


# --- the document ----------------------------------------------------------------------------------------------

def _key(kind: str, name: str) -> dict[str, Any]:
    return {"organization": ORG, "name": name, "type": kind}


def job_template(name: str, playbook: str, description: str, survey: list[str], fields: dict[str, Any]) -> dict[str, Any]:
    spec = []
    for var in survey:
        specs = option_specs(playbook, var)
        if not specs:
            raise ValueError("%s: no option of playbooks/%s.yml receives %s" % (name, playbook, var))
        spec.append(question(var, {**specs[0], "required": REQUIRED.get((playbook, var), specs[0].get("required"))}))
    jt = {"name": name, "description": description, "job_type": "run", "inventory": None,
          "project": _key("project", PROJECT), "playbook": f"playbooks/{playbook}.yml", "scm_branch": "",
          "forks": 0, "limit": "", "verbosity": 0, "extra_vars": "", "job_tags": "", "force_handlers": False,
          "skip_tags": "", "start_at_task": "", "timeout": 0, "use_fact_cache": False, "execution_environment": None,
          "host_config_key": "", "ask_scm_branch_on_launch": False, "ask_diff_mode_on_launch": False,
          "ask_variables_on_launch": True, "ask_limit_on_launch": True, "ask_tags_on_launch": False,
          "ask_skip_tags_on_launch": False, "ask_job_type_on_launch": False, "ask_verbosity_on_launch": False,
          "ask_inventory_on_launch": True, "ask_credential_on_launch": True,
          "ask_execution_environment_on_launch": False, "ask_labels_on_launch": False, "ask_forks_on_launch": False,
          "ask_job_slice_count_on_launch": False, "ask_timeout_on_launch": False,
          "ask_instance_groups_on_launch": False, "survey_enabled": True, "become_enabled": False,
          "diff_mode": False, "allow_simultaneous": False, "job_slice_count": 1, "webhook_service": "",
          "webhook_credential": None, "prevent_instance_group_fallback": False}
    jt.update(fields)
    jt["natural_key"] = _key("job_template", name)
    jt["related"] = {"credentials": [], "labels": [],
                     "survey_spec": {"name": "", "description": "", "spec": spec}}
    return jt


def workflow(name: str, description: str, survey: list[tuple[str, str]],
             nodes: dict[str, tuple[str | None, dict[str, Any], dict[str, list[str]]]]) -> dict[str, Any]:
    wf_key = _key("workflow_job_template", name)
    playbooks = {jt[0]: jt[1] for jt in JOB_TEMPLATES}

    def node_key(identifier: str) -> dict[str, Any]:
        return {"workflow_job_template": wf_key, "identifier": identifier, "type": "workflow_job_template_node"}

    out_nodes = []
    for identifier, (template, fields, edges) in nodes.items():
        node: dict[str, Any] = {"extra_data": {}, "inventory": None, "execution_environment": None, "limit": None,
                                "all_parents_must_converge": False, "identifier": identifier}
        related: dict[str, Any] = {"credentials": [], "labels": [], "instance_groups": [],
                                   **{e: [node_key(i) for i in edges.get(e, [])]
                                      for e in ("success_nodes", "failure_nodes", "always_nodes")}}
        if template is None:
            related["create_approval_template"] = fields["create_approval_template"]
        else:
            node["unified_job_template"] = _key("job_template", template)
            node.update({k: v for k, v in fields.items() if k != "create_approval_template"})
        node["natural_key"] = node_key(identifier)
        node["related"] = related
        out_nodes.append(node)
    spec = []
    for template, var in survey:
        spec.append(question(var, option_specs(playbooks[template], var)[0]))
    return {"name": name, "description": description, "extra_vars": "", "organization": ORG,
            "survey_enabled": bool(spec), "allow_simultaneous": False, "ask_variables_on_launch": True,
            "inventory": None, "limit": None, "scm_branch": None, "ask_inventory_on_launch": True,
            "ask_scm_branch_on_launch": False, "ask_limit_on_launch": True, "ask_labels_on_launch": False,
            "ask_skip_tags_on_launch": False, "ask_tags_on_launch": False, "webhook_service": "",
            "webhook_credential": None, "natural_key": wf_key,
            "related": {"labels": [], "survey_spec": {"name": "", "description": "", "spec": spec} if spec else {},
                        "workflow_nodes": out_nodes}}


def build() -> dict[str, Any]:
    galaxy = yaml.safe_load((REPO / "galaxy.yml").read_text())
    project = {"name": PROJECT, "description": "The storageperf.k8s repository: its playbooks/ are the job templates'.",
               "local_path": "", "scm_type": "git", "scm_url": galaxy["repository"], "scm_branch": "main",
               "scm_refspec": "", "scm_clean": False, "scm_track_submodules": False, "scm_delete_on_update": False,
               "credential": None, "timeout": 0, "organization": ORG, "scm_update_on_launch": False,
               "scm_update_cache_timeout": 0, "allow_override": False, "default_environment": None,
               "signature_validation_credential": None, "natural_key": _key("project", PROJECT),
               "related": {"credentials": []}}
    return {
        "credential_types": [{**c, "kind": "cloud", "natural_key": {"name": c["name"], "kind": "cloud",
                                                                    "type": "credential_type"}}
                             for c in CREDENTIAL_TYPES],
        "projects": [project],
        "job_templates": [job_template(*jt) for jt in JOB_TEMPLATES],
        "workflow_job_templates": [workflow(*wf) for wf in WORKFLOWS],
    }


def render() -> str:
    return json.dumps(build(), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    print(render(), end="")
