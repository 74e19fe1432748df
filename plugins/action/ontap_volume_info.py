# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of storageperf.k8s.ontap_volume_info: credentials of the task environment reach the module without passing
through its command line (plugins/plugin_utils/credential_env.py)."""


from ansible_collections.storageperf.k8s.plugins.plugin_utils.credential_env import CredentialEnvAction


class ActionModule(CredentialEnvAction):
    pass
