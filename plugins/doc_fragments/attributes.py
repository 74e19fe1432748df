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

    # The report modules (bench_report, bench_compare, fleet_report): check mode says which files would change
    # and writes none; they return the files they wrote, not a diff.
    REPORT_FILES = r"""
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
"""
