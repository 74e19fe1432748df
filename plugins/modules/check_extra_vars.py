#!/usr/bin/python
# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)


DOCUMENTATION = r"""
---
module: check_extra_vars
short_description: Warn about extra vars that no playbook of the run reads, naming the nearest known one
version_added: 0.2.0
description:
  - Compares the run's extra vars (C(-e), C(-e @file), AWX survey answers and workflow artifacts) with the variables
    the collection's playbooks being run read - their short names (C(volumes)), the inventory variables
    (C(k8s_kubeconfig), C(ontap_hostname) ...), the values the collection publishes with C(set_stats) - and every role
    variable of the collection. Ansible's own names (C(ansible_*), magic variables) and AWX's (C(awx_*), C(tower_*))
    are left alone.
  - Each unknown one gets a warning with the nearest known name (difflib), for example C(-e volumse=10) - did you mean
    C(volumes)?
  - A run of playbooks that are not the collection's is not checked (their own variables are unknown here).
  - Runs on the controller; reads nothing from hosts and changes nothing. C(playbooks/clusters.yml), which every cluster
    playbook imports, runs it once.
options:
  playbooks:
    description: The playbooks whose variables are known; default those of the C(ansible-playbook) command line.
    type: list
    elements: str
attributes:
  action:
    description: Runs as an action plugin on the controller.
    support: full
  check_mode:
    support: full
  diff_mode:
    support: none
extends_documentation_fragment:
  - storageperf.k8s.attributes
author:
  - storageperf.k8s maintainers (@storageperf)
"""

EXAMPLES = r"""
# the last task of the first play of playbooks/clusters.yml, which every cluster playbook imports
- name: Warn about extra vars no playbook of this run reads
  storageperf.k8s.check_extra_vars:
"""

RETURN = r"""
playbooks:
  description: The collection's playbooks whose variables were known (empty - not checked).
  returned: always
  type: list
  elements: str
  sample: [bench_csi_lifecycle]
unknown:
  description: Each unknown extra var and the nearest known name (null when none is near).
  returned: always
  type: dict
  sample: {volumse: volumes}
"""

from ansible_collections.storageperf.k8s.plugins.module_utils.common.module import StoragePerfModule


def main() -> None:
    module = StoragePerfModule(argument_spec=dict(playbooks=dict(type="list", elements="str")), supports_check_mode=True)
    # the action plugin of the same name does the work on the controller, where the extra vars are
    module.fail_json(msg="storageperf.k8s.check_extra_vars runs as an action on the controller; run it as a task")


if __name__ == "__main__":
    main()
