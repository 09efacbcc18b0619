"""``parakeet-cli wyoming --zeroconf NAME``: the service is announced over mDNS as Home
Assistant looks for it (``NAME._wyoming._tcp.local.``, its address and port), on the interface
it listens on (here loopback), and withdrawn (a goodbye packet) when it stops."""

from __future__ import annotations

import asyncio
import os

import pytest
from zeroconf import ServiceStateChange
from zeroconf.asyncio import AsyncServiceBrowser, AsyncZeroconf

from data_helpers import MODEL
from wyoming_helpers import EVENT_TIMEOUT_SEC, WyomingProcess, describe

pytestmark = pytest.mark.skipif(not MODEL.exists(), reason="fixture model missing")

SERVICE_TYPE = "_wyoming._tcp.local."
LOOKUP_MS = 5000


def test_the_service_is_announced_while_it_runs_and_withdrawn_when_it_stops(tmp_path):
    name = f"parakeet-test-{os.getpid()}"  # unique among the tests that run at once on this machine
    full_name = f"{name}.{SERVICE_TYPE}"

    async def run(srv):
        zeroconf = AsyncZeroconf(interfaces=["127.0.0.1"])  # asks and listens on loopback only
        changes = {ServiceStateChange.Added: asyncio.Event(), ServiceStateChange.Removed: asyncio.Event()}
        loop = asyncio.get_running_loop()

        def on_change(zeroconf, service_type, name, state_change):  # noqa: ARG001 (zeroconf's signature)
            if name == full_name and state_change in changes:
                loop.call_soon_threadsafe(changes[state_change].set)

        browser = AsyncServiceBrowser(zeroconf.zeroconf, SERVICE_TYPE, handlers=[on_change])
        try:
            found = await zeroconf.async_get_service_info(SERVICE_TYPE, full_name, timeout=LOOKUP_MS)
            await asyncio.wait_for(changes[ServiceStateChange.Added].wait(), EVENT_TIMEOUT_SEC)
            async with srv.client() as client:  # what was found is the service
                info = await describe(client)
            # Without a goodbye the browser would keep the service for its records' lifetime
            # (minutes); the goodbye removes it at once.
            await asyncio.to_thread(srv.stop)
            await asyncio.wait_for(changes[ServiceStateChange.Removed].wait(), 30)
            return found, info
        finally:
            await browser.async_cancel()
            await zeroconf.async_close()

    with WyomingProcess(["--zeroconf", name], tmp_path) as srv:
        found, info = asyncio.run(run(srv))
        assert found is not None, srv.log()
        assert (found.port, found.parsed_addresses()) == (srv.port, ["127.0.0.1"])
        assert info.asr[0].name == "parakeet"
        assert f"announced over mDNS as '{name}'" in srv.log()
