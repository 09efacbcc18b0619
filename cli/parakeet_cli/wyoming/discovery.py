"""``--zeroconf``: announce the service over mDNS (``_wyoming._tcp.local.``), which is how Home
Assistant discovers Wyoming services on its network and offers to add them.

A service that listens on one address announces that address, on that interface only (so one
on 127.0.0.1 is discoverable from this machine alone); one that listens on every address
announces the address of the interface that reaches the mDNS group, on every interface.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

from zeroconf import InterfaceChoice, NonUniqueNameException
from zeroconf.asyncio import AsyncServiceInfo, AsyncZeroconf

SERVICE_TYPE = "_wyoming._tcp.local."
MDNS_GROUP = "224.0.0.251"
WILDCARD_HOSTS = ("0.0.0.0", "::", "")


def outward_address() -> str:
    """The IPv4 address this machine sends to the mDNS group from (no packet is sent)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect((MDNS_GROUP, 5353))
        return probe.getsockname()[0]


class DiscoveryError(RuntimeError):
    """The announcement cannot be made (its message says why)."""


class Announcement:
    """The service announced as ``name`` until :meth:`stop`."""

    def __init__(self, zeroconf: AsyncZeroconf, info: AsyncServiceInfo) -> None:
        self._zeroconf = zeroconf
        self.info = info

    @classmethod
    async def start(cls, name: str, host: str, port: int) -> "Announcement":
        if host in WILDCARD_HOSTS:
            address, interfaces = outward_address(), InterfaceChoice.All
        else:
            address = socket.gethostbyname(host)
            interfaces = [address]
        if ipaddress.ip_address(address).version != 4:
            raise DiscoveryError(f"--zeroconf announces IPv4 addresses; {host} is not one")
        zeroconf = AsyncZeroconf(interfaces=interfaces)
        info = AsyncServiceInfo(SERVICE_TYPE, f"{name}.{SERVICE_TYPE}", addresses=[socket.inet_aton(address)],
                                port=port)
        try:
            # zeroconf's async calls return the task that sends the packets: awaited too
            await (await zeroconf.async_register_service(info))
        except NonUniqueNameException as e:
            await zeroconf.async_close()
            raise DiscoveryError(f"--zeroconf: another service on this network is named {name!r}; "
                                 "give this one another name") from e
        except BaseException:
            await zeroconf.async_close()
            raise
        return cls(zeroconf, info)

    async def stop(self) -> Any:
        """Withdraws the announcement (a goodbye packet) and closes the mDNS sockets."""
        await (await self._zeroconf.async_unregister_service(self.info))
        await self._zeroconf.async_close()
