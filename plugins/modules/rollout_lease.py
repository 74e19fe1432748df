#!/usr/bin/python
# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)


DOCUMENTATION = r"""
---
module: rollout_lease
short_description: Hold a guarded rollout for one run at a time
version_added: "0.3.0"
description:
  - Takes or gives up the lease of a rollout, C(<rollout_dir>/lease.json), so that two runs of one rollout never
    work at once (C(playbooks/rollout.yml) takes it before the first wave and gives it up after the report).
  - The lease names its holder (O(owner), the controller's host and ansible-playbook pid) and expires O(ttl)
    seconds after its last renewal. A small process started beside the run renews it while that run's
    ansible-playbook lives, and stops when it is gone, so the lease of a killed run expires O(ttl) seconds later.
  - A second run while the lease is held fails, naming the holder and the expiry. A lease past its expiry is
    taken over, and the takeover is kept in the lease's C(takeovers). A lease whose holder is known to be gone
    (the same host, its ansible-playbook ended) is waited for until it expires, by default.
  - The lease file is read and written under an flock of C(<rollout_dir>/.lease.lock) and replaced atomically.
options:
  rollout_dir:
    description: The rollout's directory, C(<reports_dir>/rollout-<rollout id>). Created when missing.
    type: path
    required: true
  owner:
    description: Who holds the lease - one id per run (the playbook uses the run's start time and controller pid).
    type: str
    required: true
  state:
    description: V(held) takes (or renews) the lease and starts its renewer; V(released) gives it up.
    type: str
    choices: [held, released]
    default: held
  ttl:
    description:
      - Seconds after its last renewal the lease expires; the renewer renews it every quarter of that.
      - At least 5, the time a killed run's modules take to stop.
      - At most 3600 - an hour; the lease of a killed run keeps its rollout from a rerun at most that long.
    type: int
    default: 60
  wait:
    description: Wait for the lease of a run known to be gone to expire, instead of failing.
    type: bool
    default: true
author:
  - storageperf.k8s maintainers (@storageperf)
notes:
  - The renewer watches ansible-playbook through C(/proc) (Linux). Without it (another OS, or the module not run by
    ansible-playbook) the lease is not renewed and expires O(ttl) after it was taken; give a O(ttl) longer than the
    run then.
  - Check mode takes nothing and reports the lease as it is.
seealso:
  - module: storageperf.k8s.rollout_plan
  - module: storageperf.k8s.rollout_record
extends_documentation_fragment:
  - storageperf.k8s.attributes
  - storageperf.k8s.attributes.check_diff
"""

EXAMPLES = r"""
- name: Hold the rollout for this run
  storageperf.k8s.rollout_lease:
    rollout_dir: "{{ rollout_plan.rollout_dir }}"
    owner: "{{ rollout_run_id }}"
    ttl: 60

- name: Give it up
  storageperf.k8s.rollout_lease:
    rollout_dir: "{{ rollout_plan.rollout_dir }}"
    owner: "{{ rollout_run_id }}"
    state: released
"""

RETURN = r"""
lease:
  description: The lease as stored (null when none is held).
  returned: always
  type: dict
  sample: {owner: "20261207T041500Z-4711", host: awx-ee-1, pid: 4711, pid_start: 1234567,
           acquired: "2026-12-07T04:15:00.000000Z", renewed: "2026-12-07T04:15:45.000000Z",
           expires: "2026-12-07T04:16:45.000000Z", ttl: 60, takeovers: []}
takeover:
  description: The lease this run took over (its holder and expiry), or null.
  returned: always
  type: dict
waited_s:
  description: Seconds spent waiting for the lease of a run that is gone.
  returned: always
  type: float
renewer_pid:
  description: The pid of the process that renews the lease (null when it could not be started, or in check mode).
  returned: when state is held
  type: int
"""

from typing import Any, Dict

from ansible_collections.storageperf.k8s.plugins.module_utils.common import limits as L
from ansible_collections.storageperf.k8s.plugins.module_utils.common.module import StoragePerfModule
from ansible_collections.storageperf.k8s.plugins.module_utils.rollout.lease import lease_module


def main() -> None:
    module = StoragePerfModule(
        argument_spec=dict(
            rollout_dir=dict(type="path", required=True),
            owner=dict(type="str", required=True),
            state=dict(type="str", choices=["held", "released"], default="held"),
            ttl=dict(type="int", default=60),
            wait=dict(type="bool", default=True),
        ),
        supports_check_mode=True,
        limits={"ttl": L.LEASE_TTL},
    )
    module.run(run)


def run(module: StoragePerfModule) -> Dict[str, Any]:
    return lease_module(module.params, check_mode=module.check_mode)


if __name__ == "__main__":
    main()
