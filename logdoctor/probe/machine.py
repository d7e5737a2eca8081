"""Facts about the machine the server will run on, which `check` knows because it runs there: whether
--host resolves and is an address of this host, whether --port is free, and the NUMA nodes a process may
allocate memory on (what vLLM's CPU backend binds its workers to). An edge module (it opens
sockets); the core only reads the facts it sets, declared by the rule sets (`machine = "port_free"`).

The test is the one vLLM's API server makes before the engine starts (entrypoints/launchers/launcher.py
create_server_socket: AF_INET6 for an IPv6 literal, else AF_INET; SO_REUSEADDR; bind((host or "", port))),
and the socket is closed at once.
"""

from __future__ import annotations

import contextlib
import errno
import ipaddress
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

MachineProbe = Callable[[str | None, int], dict[str, Any]]

# How far past a taken port to look for a free one (the fix's --port).
SEARCH = 100


def _family(host: str) -> socket.AddressFamily:
    try:
        ipaddress.IPv6Address(host)
    except ValueError:
        return socket.AF_INET
    return socket.AF_INET6


def bind_error(host: str | None, port: int) -> OSError | None:
    """What binding (host, port) as vLLM does raises, or None when it binds (then closed at once)."""
    name = host or ""
    try:
        sock = socket.socket(family=_family(name), type=socket.SOCK_STREAM)
    except OSError as exc:
        return exc
    with contextlib.closing(sock):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((name, port))
        except OSError as exc:  # socket.gaierror is an OSError
            return exc
    return None


def memory_nodes(status: Path = Path("/proc/self/status")) -> list[int] | None:
    """The NUMA nodes this process may allocate on, as vLLM reads them (utils/cpu_resource_utils.py
    get_memory_affinity: /proc/<pid>/status Mems_allowed_list, e.g. `0-1,3`); None where there is no
    such file (not Linux). A container's cpuset.mems and numactl show here, as they will for vLLM."""
    try:
        lines = status.read_text("utf-8").splitlines()
    except OSError:
        return None
    for line in lines:
        if line.startswith("Mems_allowed_list:"):
            return parse_id_list(line.split(":", 1)[1].strip())
    return []


def parse_id_list(text: str) -> list[int]:
    """`0-1,3` -> [0, 1, 3] (cpu_resource_utils.parse_id_list)."""
    out: list[int] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        first, _, last = part.partition("-")
        out.extend(range(int(first), int(last or first) + 1))
    return out


def probe(host: str | None, port: int) -> dict[str, Any]:
    """The machine facts for a launch binding `host`:`port`. A fact the test cannot decide is left out
    (unknown): the port of a host that does not resolve, say."""
    nodes = memory_nodes()
    facts: dict[str, Any] = {} if nodes is None else {"memory_nodes": nodes}
    if not isinstance(port, int) or not 0 <= port <= 65535:
        return facts
    error = bind_error(host, port)
    if error is None:
        return {**facts, "host_resolves": True, "host_is_local": True, "port_free": True}
    if isinstance(error, socket.gaierror):
        return {**facts, "host_resolves": False}
    if error.errno == errno.EADDRNOTAVAIL:
        return {**facts, "host_resolves": True, "host_is_local": False}
    if error.errno == errno.EADDRINUSE:
        facts.update({"host_resolves": True, "host_is_local": True, "port_free": False})
        for candidate in range(port + 1, min(port + SEARCH, 65535) + 1):
            if bind_error(host, candidate) is None:
                facts["free_port"] = candidate
                break
    return facts
