# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cluster_reports_dir filter; documentation in cluster_reports_dir.yml."""


import os
import re
from typing import Any, Callable

from ansible.errors import AnsibleFilterError


def cluster_reports_dir(base: object, cluster: object) -> str:
    """'reports', 'prod-eu/1' -> '<cwd>/reports/prod-eu_1': one directory per cluster, absolute on the controller."""
    if not isinstance(base, str) or not base.strip():
        raise AnsibleFilterError("cluster_reports_dir: the reports directory must be a non-empty path, got %r "
                                 "(set reports_dir, or leave it unset for ./reports)" % (base,))
    if not isinstance(cluster, str) or not cluster.strip():
        raise AnsibleFilterError("cluster_reports_dir: the cluster name must be text (inventory_hostname), got %r"
                                 % (cluster,))
    # filters run on the controller: a relative path is relative to where ansible-playbook was started
    root = os.path.abspath(os.path.expanduser(os.path.expandvars(base)))
    # a host name may hold characters a directory name should not (/, :, spaces)
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", cluster.strip()).strip("._") or "cluster"
    return os.path.join(root, name)


class FilterModule:
    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"cluster_reports_dir": cluster_reports_dir}
