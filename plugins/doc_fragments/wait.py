# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""How every module of the collection documents waiting: one meaning, one default."""


class ModuleDocFragment:
    # The default is module_utils/common/waiter.py DEFAULT_WAIT_TIMEOUT.
    DOCUMENTATION = r"""
options:
  wait:
    description:
      - Wait until the change has taken effect (the rollout finished, the addon is running, the peers are
        connected) before the task returns.
      - With V(false) the task returns once the change is accepted; run it again with O(wait=true) to wait.
      - Ignored in check mode, which changes nothing.
    type: bool
    default: true
  wait_timeout:
    description:
      - How many seconds to wait when O(wait=true); the task fails with the last state seen when it passes.
      - The change itself stays in place after a timeout; running the task again waits again.
      - At most 86400 - a day; a benchmark step or rollout that takes longer has failed.
    type: int
    default: 600
"""
