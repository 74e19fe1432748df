# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The sysbench_summary filter; documentation in sysbench_summary.yml, parsing in module_utils/bench/sysbench_output.py."""


from typing import Any, Callable

from ansible.errors import AnsibleFilterError
from ansible_collections.storageperf.k8s.plugins.module_utils.bench.sysbench_output import SysbenchError, parse


def sysbench_summary(output: object, name: str | None = None) -> dict[str, Any]:
    """sysbench's output (JSON report hook, histogram or text report, with noise) -> figures and a step."""
    if isinstance(output, list):
        output = "\n".join(str(line) for line in output)  # a log as lines (k8s_log's log_lines)
    if name is not None and not isinstance(name, str):
        raise AnsibleFilterError("sysbench_summary: name must be the test's name (oltp_insert ...), got %r" % (name,))
    try:
        return parse(output, name=name)
    except SysbenchError as e:
        raise AnsibleFilterError("sysbench_summary: %s" % e) from None


class FilterModule:
    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"sysbench_summary": sysbench_summary}
