"""The twistd plugins of the two servers (src/twisted/plugins/).

The servers' dependencies (prometheus_client) come with the ``mailbox`` and
``relay`` extras, so on a client-only install ``twistd wormhole-mailbox``
could only end in a traceback about a missing module. A ServerMaker loads
its server when twistd asks for it, as Twisted's ServiceMaker does, and
turns a missing dependency into one line naming the extra to install.
This module imports nothing but Twisted: the plugin files import it when
twistd lists its plugins (``twistd --help``).
"""

from twisted.application.service import ServiceMaker


class ServerMaker(ServiceMaker):
    """A twistd plugin (``IServiceMaker``) that imports its server's module
    only when twistd runs it, and names the ``extra`` to install when that
    import fails."""
    def __init__(self, name, module, description, tapname, extra):
        super().__init__(name, module, description, tapname)
        self.extra = extra

    def _load(self, name):
        try:
            return getattr(super(), name)
        except ImportError as e:
            raise SystemExit(
                f"twistd {self.tapname}: {e}: this server needs the "
                f"'{self.extra}' extra: pip install 'wormhole-twisted[{self.extra}]'"
            ) from e

    @property
    def options(self):
        return self._load("options")

    @property
    def makeService(self):  # noqa: N802 (Twisted's name)
        return self._load("makeService")
