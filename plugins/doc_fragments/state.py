# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""How every tuning module documents state: present applies the tuning, absent gives back the defaults."""


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  state:
    description:
      - V(present) applies the settings of this module (and changes nothing when they are already in force).
      - V(absent) removes what this module sets, so the component runs with its own defaults again (the
        rollback); settings that others made are left as they are.
    type: str
    choices: [present, absent]
    default: present
"""
