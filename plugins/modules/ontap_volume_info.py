#!/usr/bin/python
# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)


DOCUMENTATION = r"""
---
module: ontap_volume_info
short_description: List the ONTAP volumes, qtrees and LUNs a Trident backend created, and which of them leaked
version_added: 0.1.0
description:
  - Lists the FlexVols whose names start with the Trident storage prefix (C(trident_) by default) - one per PV
    for ontap-nas and ontap-san, C(<prefix>qtree_pool_*) and C(<prefix>lun_pool_*) pools for the economy
    drivers - and the qtrees and LUNs inside those pools.
  - With O(expected) (the PVs that should exist), returns RV(leaked) - storage no expected PV accounts for - and
    RV(missing) - expected PVs without storage. A benchmark calls it after its cleanup with O(expected=[]) to prove
    that it leaked nothing.
  - Uses ONTAP REST by default (C(GET /api/storage/volumes?name=trident_*), paging through C(_links.next)); with
    O(use_rest=never) netapp-lib's ZAPI client (C(volume-get-iter), C(qtree-list-iter), C(lun-get-iter), paging by
    C(next-tag)) for systems without REST.
  - Read-only; safe in check mode.
author:
  - storageperf.k8s maintainers (@storageperf)
requirements:
  - netapp-lib (only for O(use_rest=never))
options:
  hostname:
    description: Cluster management LIF (host name or IP, optionally C(host:port)) of the ONTAP cluster Trident's backend uses.
    type: str
    required: true
  username:
    description:
      - ONTAP user with read access to volumes (http application for REST, ontapi for ZAPI).
      - Falls back to E(ONTAP_USERNAME). Playbooks should leave it to the environment (see O(password)).
    type: str
    aliases: [user]
  password:
    description:
      - Password of O(username). Falls back to E(ONTAP_PASSWORD).
      - Deprecated in playbooks; kept for backwards compatibility. Ansible writes module arguments, C(no_log) ones
        included, into the module's payload file, which an interrupted run can leave on disk. Set E(ONTAP_PASSWORD)
        in the controller's environment (an AWX credential type injects it) or in the task's C(environment)
        instead; see docs/credentials.md.
    type: str
    aliases: [pass]
  https:
    description: Use HTTPS (ONTAP's default; HTTP is usually disabled).
    type: bool
    default: true
  validate_certs:
    description: Verify the ONTAP certificate.
    type: bool
    default: true
  ca_cert:
    description: CA bundle to verify the ONTAP certificate with (a self-signed cluster certificate, for example).
    type: path
  http_port:
    description:
      - Port, if not the default of the scheme.
      - At most 65535 - the largest TCP port.
    type: int
  use_rest:
    description:
      - C(always) REST; C(never) ZAPI through netapp-lib; C(auto) REST unless the cluster has none (ONTAP before 9.6).
    type: str
    choices: [always, never, auto]
    default: auto
  svm:
    description: Only the volumes of this SVM (the backend's C(svm)).
    type: str
  prefix:
    description: The backend's C(storagePrefix).
    type: str
    default: trident_
  economy:
    description: Also list the qtrees and LUNs inside economy pools.
    type: bool
    default: true
  expected:
    description:
      - PVs that should have storage - PV names (C(pvc-<uuid>)) or internal names (C(trident_pvc_<uuid with _>),
        the PVs' C(spec.csi.volumeAttributes.internalName)). When given (also as an empty list), RV(leaked) and
        RV(missing) are computed.
    type: list
    elements: str
  page_size:
    description:
      - Records per request (REST C(max_records), ZAPI C(max-records)).
      - At most 10000 - records per ONTAP page (max_records); larger pages only slow each answer.
    type: int
    default: 500
  timeout:
    description:
      - Seconds per request.
      - At most 3600 - an hour for one API request.
    type: int
    default: 60
attributes:
  check_mode:
    description: Can run in check mode and return the changed status prediction without modifying the target.
    support: full
  diff_mode:
    description: Returns details on what has changed (or would change in check mode) with C(--diff).
    support: none
"""

EXAMPLES = r"""
- name: What Trident has on the SVM (ONTAP_USERNAME / ONTAP_PASSWORD from the controller, e.g. an AWX credential)
  storageperf.k8s.ontap_volume_info:
    hostname: cluster1-mgmt.example.com
    svm: svm_trident
  register: ontap

- name: The same with the credentials from vaulted inventory variables, through the task environment
  storageperf.k8s.ontap_volume_info:
    hostname: cluster1-mgmt.example.com
    svm: svm_trident
  environment:
    ONTAP_USERNAME: "{{ ontap_username }}"
    ONTAP_PASSWORD: "{{ ontap_password }}"
  register: ontap

- name: After the benchmark's cleanup, prove that no volume leaked (ZAPI, for an old cluster)
  storageperf.k8s.ontap_volume_info:
    hostname: 10.0.0.5
    use_rest: never
    expected: []
  register: after_cleanup
  failed_when: after_cleanup.leaked | length > 0

- name: Compare with the PVs Kubernetes has
  storageperf.k8s.ontap_volume_info:
    hostname: 10.0.0.5
    expected: "{{ pvs.resources | map(attribute='spec.csi.volumeAttributes.internalName') | list }}"
"""

RETURN = r"""
api:
  description: The API used, C(rest) or C(zapi).
  returned: always
  type: str
ontap_version:
  description: ONTAP's version string.
  returned: always
  type: str
  sample: "NetApp Release 9.18.1P2: Mon Feb 02 12:00:00 UTC 2026"
volumes:
  description: FlexVols whose names start with O(prefix); C(kind) is C(volume) (one PV), C(qtree_pool) or C(lun_pool).
  returned: always
  type: list
  elements: dict
  sample: [{name: trident_pvc_5c3e8a5d_0b1e_4c55_9d0f_6f2c1b4a7e21, svm: svm0, size: 1073741824, used: 352256,
            state: online, type: rw, uuid: 9b2f..., kind: volume}]
count:
  description: Number of RV(volumes).
  returned: always
  type: int
qtrees:
  description: Qtrees with the prefix inside C(qtree_pool) volumes (ontap-nas-economy PVs).
  returned: always
  type: list
  elements: dict
  sample: [{name: trident_pvc_..., volume: trident_qtree_pool_trident_ABCDEF, svm: svm0, id: 1}]
luns:
  description: LUNs with the prefix inside C(lun_pool) volumes (ontap-san-economy PVs).
  returned: always
  type: list
  elements: dict
  sample: [{name: trident_pvc_..., path: /vol/trident_lun_pool_trident_ABCDEF/trident_pvc_...,
            volume: trident_lun_pool_trident_ABCDEF, svm: svm0, size: 1073741824}]
internal_names:
  description: Names of the storage objects that stand for one PV each (C(volume) FlexVols, qtrees and LUNs), sorted.
  returned: always
  type: list
  elements: str
leaked:
  description: Storage objects no entry of O(expected) accounts for (empty without O(expected)).
  returned: always
  type: list
  elements: dict
  sample: [{name: trident_pvc_..., kind: volume, volume: trident_pvc_..., svm: svm0}]
missing:
  description: Internal names of O(expected) PVs that have no storage.
  returned: always
  type: list
  elements: str
empty_pools:
  description: Economy pool FlexVols with no qtree or LUN (Trident deletes them later; not counted as leaks).
  returned: always
  type: list
  elements: str
requests:
  description: Number of API requests made (pages included).
  returned: always
  type: int
"""

from ansible_collections.storageperf.k8s.plugins.module_utils.common import limits as L
from ansible_collections.storageperf.k8s.plugins.module_utils.common.module import StoragePerfModule
from ansible_collections.storageperf.k8s.plugins.module_utils.trident.ontap import volume_inventory


def main() -> None:
    module = StoragePerfModule(
        argument_spec=dict(
            svm=dict(type="str"),
            prefix=dict(type="str", default="trident_"),
            economy=dict(type="bool", default=True),
            expected=dict(type="list", elements="str"),
            page_size=dict(type="int", default=500),
        ),
        auth="ontap",
        supports_check_mode=True,
        limits={"http_port": L.PORT, "page_size": L.ONTAP_PAGE, "timeout": L.REQUEST_TIMEOUT},
    )
    module.run(lambda m: volume_inventory(m.params, m.client))


if __name__ == "__main__":
    main()
