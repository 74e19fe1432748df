# Copyright: storageperf.k8s contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the collection's inventory plugins share: clusters as hosts run on the controller.

Each cluster becomes one host in the cluster group (default `k8s_clusters`, the group the collection's
playbooks target) with `ansible_connection: local` and the controller's Python; the constructed options
(`compose`, `groups`, `keyed_groups`) apply on top, so compose can override those two. Listings are cached
through the inventory cache plugin together with a digest of what was asked, so that a changed query never
reads an old answer.
"""


import hashlib
import json
import re
from typing import TYPE_CHECKING, Any, Callable, Mapping, TypeVar

try:
    from ansible.template import trust_as_template
except ImportError:  # ansible-core < 2.19 templates every inventory string
    def trust_as_template(value: Any) -> Any:
        return value

if TYPE_CHECKING:  # the mixin's methods use the plugin class's ansible bases (ansible has no types: Any to mypy)
    from ansible.plugins.inventory import BaseInventoryPlugin as _PluginBase
else:
    _PluginBase = object

T = TypeVar("T")

DEFAULT_GROUP = "k8s_clusters"
PLAYBOOK_PYTHON = "{{ ansible_playbook_python }}"

_UNSAFE_HOST_CHARS = re.compile(r"[^A-Za-z0-9_.-]")


def host_name(text: object) -> str:
    """A host name usable in patterns: characters outside letters, digits and `_ . -` become `_`.

    `:` and `,` separate host patterns, `@` starts a limit file, `[` a range; kubeconfig context names have them
    all (`kubernetes-admin@kubernetes`, EKS ARNs).
    """
    name = _UNSAFE_HOST_CHARS.sub("_", str(text)).strip("_")
    return name or "cluster"


def digest(query: Any) -> str:
    """A stable digest of the options that decide what a listing returns."""
    return hashlib.sha256(json.dumps(query, sort_keys=True, default=str).encode("utf-8")).hexdigest()


def base_vars() -> dict[str, Any]:
    """The controller-side connection every cluster host gets (compose may override it)."""
    # Only this string is trusted as a template: values read from clusters (names, tags) never are.
    return {"ansible_connection": "local", "ansible_python_interpreter": trust_as_template(PLAYBOOK_PYTHON)}


class ClusterInventory(_PluginBase):
    """Mixin for an InventoryModule(BaseInventoryPlugin, Constructable, Cacheable) whose hosts are clusters.

    The plugin class sets NAME and CONFIG_SUFFIXES (the file endings that name it, e.g. ``.ack.yml``).
    """

    CONFIG_SUFFIXES: "tuple[str, ...]" = ()

    def verify_file(self, path: str) -> bool:
        """A file ending in one of CONFIG_SUFFIXES, or any YAML file whose `plugin:` line names this plugin (so
        that the `auto` plugin hands it over whatever its name)."""
        if not super().verify_file(path):
            return False
        if path.endswith(self.CONFIG_SUFFIXES):
            return True
        if not path.endswith((".yml", ".yaml")):
            return False
        try:
            with open(path, "rb") as f:
                head = f.read(65536).decode("utf-8", "replace")
        except OSError:
            return False
        line = r"^plugin:\s*[\"']?%s[\"']?\s*(#.*)?$" % re.escape(self.NAME)
        return bool(re.search(line, head, re.MULTILINE))

    def cluster_group(self) -> str:
        group = self.get_option("cluster_group")
        return group or DEFAULT_GROUP

    def add_cluster(self, name: str, hostvars: Mapping[str, Any]) -> None:
        """Add one cluster host with its vars, then the constructed options (compose, groups, keyed_groups)."""
        group = self.inventory.add_group(self.cluster_group())
        self.inventory.add_host(name, group=group)
        variables = base_vars()
        variables.update(hostvars)
        for key, value in variables.items():
            self.inventory.set_variable(name, key, value)
        strict = self.get_option("strict")
        self._set_composite_vars(self.get_option("compose"), variables, name, strict=strict)
        # the two helpers merge the host's vars as they are now, so groups and keyed_groups see composed values
        self._add_host_to_composed_groups(self.get_option("groups"), variables, name, strict=strict)
        self._add_host_to_keyed_groups(self.get_option("keyed_groups"), variables, name, strict=strict)

    def cached_listing(self, path: str, use_cache: bool, query: Any, fetch: Callable[[], T],
                       still_valid: Callable[[T], bool] | None = None) -> T:
        """The listing for `query` from the inventory cache when it is there and still valid, else fetch() (and
        store it when caching is on). `use_cache` is parse()'s `cache` argument: false on --flush-cache and
        refresh_inventory, which then fetch anew and update the cache."""
        caching = bool(self.get_option("cache"))
        key = self.get_cache_key(path)
        wanted = digest(query)
        if caching and use_cache:
            try:
                entry = self._cache[key]
            except KeyError:
                entry = None
            if isinstance(entry, dict) and entry.get("digest") == wanted and "listing" in entry:
                if still_valid is None or still_valid(entry["listing"]):
                    return entry["listing"]
        listing = fetch()
        if caching:
            self._cache[key] = {"digest": wanted, "listing": listing}
        return listing
