# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The advice_text filter; documentation in advice_text.yml."""


from typing import Any, Callable

from ansible.errors import AnsibleFilterError
from ansible_collections.storageperf.k8s.plugins.module_utils.report import advice_render

FORMATS = ("console", "markdown", "html")


def advice_text(advice: dict[str, Any], cluster: object, fmt: str = "console") -> str | list[str]:
    """One cluster's advice as console lines (a list), Markdown or HTML (a string)."""
    if not isinstance(advice, dict) or not isinstance(advice.get("tunings"), list):
        raise AnsibleFilterError("advice_text: expected the advice of storageperf.k8s.tuning_advice (a dict with "
                                 "tunings), got %s" % type(advice).__name__)
    if fmt not in FORMATS:
        raise AnsibleFilterError("advice_text: format %r is not one of %s" % (fmt, ", ".join(FORMATS)))
    if fmt == "console":
        return advice_render.console_lines(advice, str(cluster))
    return advice_render.render_advice(advice, str(cluster))[fmt]


class FilterModule:
    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"advice_text": advice_text}
