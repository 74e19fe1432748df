# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The action plugin of the modules that read a credential from their environment (plugins/action/<module>.py).

A task's ``environment:`` reaches a module as a prefix of its command line: ansible-core runs
``/bin/sh -c 'ALIBABA_CLOUD_ACCESS_KEY_SECRET=... python .../AnsiballZ_ack_cluster_info.py'``, which ``-vvv`` prints
in its EXEC line and any user of the host reads in ``ps`` while the module runs. A credential given as a variable
(a user's inventory; the roles hand it to their modules through the task environment, never as an argument, because
Ansible writes arguments into the payload file) would leak both ways.

So the credential variables below never go into that prefix. On the controller (connection local, how every
playbook of the collection runs its modules) they are put into the environment of this worker process, which
Ansible forks for one task on one host and which ends with it; the module's process inherits them, as it inherits
a credential the controller's own environment holds (an AWX credential, ``export``): readable in
``/proc/<pid>/environ`` by the same user only, and written nowhere. Every other variable of the task environment
takes Ansible's usual way. On any other connection the module would run on a host whose environment this process
cannot give, so a credential in the task environment fails the task, naming the variables, never their values.
"""


import os
from typing import Any

from ansible.errors import AnsibleActionFail
from ansible.module_utils.common.text.converters import to_text
from ansible.plugins.action.normal import ActionModule as NormalAction

# What the collection's modules read from their environment as a credential: the Alibaba Cloud chain
# (module_utils/ack/credentials.py), ontap_volume_info, and boto3's chain for reports_upload.
CREDENTIAL_VARIABLES = frozenset((
    "ALIBABA_CLOUD_ACCESS_KEY_ID", "ALIBABA_CLOUD_ACCESS_KEY_SECRET", "ALIBABA_CLOUD_SECURITY_TOKEN",
    "ONTAP_USERNAME", "ONTAP_PASSWORD",
    "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
))


class CredentialEnvAction(NormalAction):

    def run(self, tmp: str | None = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        self._saved_environ: dict[str, str | None] = {}  # None: the variable was not set
        try:
            return super().run(tmp, task_vars)
        finally:
            # the worker ends with this task anyway; put back what it had so nothing outlives the module
            for name, value in self._saved_environ.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value

    def _compute_environment_string(self, raw_environment_out: dict[str, Any] | None = None) -> str:
        environment: dict[str, Any] = {}
        super()._compute_environment_string(environment)
        credentials = {k: v for k, v in environment.items() if k in CREDENTIAL_VARIABLES}
        rest = {k: v for k, v in environment.items() if k not in CREDENTIAL_VARIABLES}
        if credentials:
            if getattr(self._connection, "transport", None) != "local":
                raise AnsibleActionFail(
                    "%s: the task environment sets %s, which this module takes only on the controller "
                    "(connection local): elsewhere Ansible would put them on the module's command line. Run the task "
                    "with connection: local (or delegate_to: localhost), or set them in the environment of the host "
                    "that runs the module." % (self._task.action, ", ".join(sorted(credentials))))
            for name, value in credentials.items():
                self._saved_environ.setdefault(name, os.environ.get(name))
                os.environ[name] = "" if value is None else to_text(value)
        if isinstance(raw_environment_out, dict):
            raw_environment_out.clear()
            raw_environment_out.update(rest)
        return self._connection._shell.env_prefix(**rest)
