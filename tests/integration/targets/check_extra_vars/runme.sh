#!/usr/bin/env bash
# The action reads the extra vars of the ansible-playbook command line, so this target makes its own: one typo
# of a bench_csi_lifecycle variable, one known variable and one far from every known name. Run with and without
# --check (the action changes nothing either way).
set -eux
for mode in "" --check; do
  ansible-playbook -i "${INVENTORY_PATH:-../../inventory}" run.yml -e volumse=3 -e storage_class=ontap-nas \
    -e zzqqxxj=1 $mode "$@"
done
