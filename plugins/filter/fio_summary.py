# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fio_summary filter; documentation in fio_summary.yml, parsing in module_utils/bench/fio_output.py."""


from typing import Any, Callable

from ansible.errors import AnsibleFilterError
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.fio_output import FioError, parse


def fio_summary(output: object) -> dict[str, Any]:
    """fio's JSON output (with any noise around it) -> jobs, groups and result-document steps."""
    if isinstance(output, dict) and "jobs" in output:
        import json

        output = json.dumps(output)  # already-decoded JSON (from_json, slurp | b64decode | from_json)
    if isinstance(output, list):
        output = "\n".join(str(line) for line in output)  # a log as lines (k8s_log's log_lines)
    try:
        return parse(output)
    except FioError as e:
        raise AnsibleFilterError("fio_summary: %s" % e) from None


class FilterModule:
    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"fio_summary": fio_summary}
