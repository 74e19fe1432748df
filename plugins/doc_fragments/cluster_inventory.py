# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)


class ModuleDocFragment:
    # What the inventory plugins of plugins/plugin_utils/cluster_inventory.py share.
    DOCUMENTATION = r"""
options:
  cluster_group:
    description:
      - Group that every cluster host is put in. The collection's playbooks target C(k8s_clusters).
    type: str
    default: k8s_clusters
notes:
  - Every cluster is a host that runs on the controller - C(ansible_connection=local) and
    C(ansible_python_interpreter={{ ansible_playbook_python }}) - and talks to its cluster through the host vars.
    O(compose) runs after those are set, so it can override them.
  - With O(cache=true) the listing is kept by the cache plugin (use a persistent one such as C(ansible.builtin.jsonfile)
    for the cache to outlive one command) together with a digest of the options that decide it; a change of those
    options, C(--flush-cache) or C(ansible.builtin.meta) C(refresh_inventory) lists anew.
"""
