# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Result documents of storageperf.k8s benchmarks: schema, statistics, comparison, rendering.

Import the submodules directly (``...report.document``, ``...report.render``); this package
file stays empty so that importing one part never pulls in matplotlib or jsonschema.
"""
