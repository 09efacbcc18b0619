"""The TCP ports a process and its descendants listen on, from /proc (Linux): for tests that
check what a job exposes. Run as a script it starts Ray the way ``parakeet-cli batch --ray``
does without ``--ray-address`` and prints those listeners as JSON ``[[address, port], ...]``."""

import ipaddress
import json
import os
import sys
from typing import Dict, List, Set, Tuple


def descendants(root: int) -> List[int]:
    children: Dict[int, List[int]] = {}
    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{name}/stat") as f:
                parent = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):  # gone meanwhile
            continue
        children.setdefault(parent, []).append(int(name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += children.get(pid, [])
    return found


def _socket_inodes(pids: List[int]) -> Set[str]:
    inodes = set()
    for pid in pids:
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
        except OSError:
            continue
    return inodes


def _address(hex_address: str) -> str:
    raw = bytes.fromhex(hex_address)
    # /proc/net/tcp{,6} print each 32-bit word in host (little-endian) order.
    words = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
    ip = ipaddress.ip_address(words)
    return str(ip.ipv4_mapped or ip) if ip.version == 6 else str(ip)


def listeners(root: int) -> List[Tuple[str, int]]:
    """(address, port) of every listening TCP socket of ``root`` and its descendants."""
    inodes = _socket_inodes(descendants(root))
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            for line in f.read().splitlines()[1:]:
                fields = line.split()
                if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                    address, port = fields[1].split(":")
                    found.add((_address(address), int(port, 16)))
    return sorted(found)


if __name__ == "__main__":
    import ray

    from parakeet_py.batch.ray_job import ray_init

    ray_init(None, network="--network" in sys.argv)
    try:
        print(json.dumps(listeners(os.getpid())))
    finally:
        ray.shutdown()
