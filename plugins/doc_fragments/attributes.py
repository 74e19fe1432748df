# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)


class ModuleDocFragment:
    # Descriptions of the attributes every module declares; modules set only `support`.
    DOCUMENTATION = r"""
attributes:
  check_mode:
    description: Can run in check_mode and return changed status prediction without modifying target.
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in diff_mode), when in diff mode.
"""

    # storageperf.k8s.attributes.check_diff: a module that changes something, plans it in check mode and shows it.
    CHECK_DIFF = r"""
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
"""

    # storageperf.k8s.attributes.check_only: check mode does nothing and says so; there is no diff to show.
    CHECK_ONLY = r"""
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
"""
