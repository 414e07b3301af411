"""The optional Ray backend shared by tournaments (``eval.tournament``) and training data generation (``train``).

Ray is an optional extra (``pip install -e '.[ray]'``); multiprocessing stays the default everywhere. A session
joins the cluster at ``address`` when one is given, else starts a local Ray with ``workers`` CPUs, and shuts down
only the Ray it started itself (a caller's own ``ray.init()`` is left running).
"""

from __future__ import annotations

import contextlib
import socket
from typing import Any, Iterator

from sixtysix_env.extras import install_hint

BACKENDS = ("multiprocessing", "ray")
# Seconds a cluster address may take to accept a connection before the run is refused: ray.init itself retries an
# unreachable address for minutes, printing only its own GCS timeouts.
CONNECT_SECONDS = 5.0


def check_backend(backend: str, address: str | None) -> None:
    """Refuse an unknown backend, or a cluster address without the Ray backend, by name."""
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if address is not None and backend != "ray":
        raise ValueError("an address names a Ray cluster: use it with backend 'ray'")


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ValueError(f"the ray backend needs Ray: {install_hint('ray')}") from None
    return ray


def check_reachable(address: str, seconds: float = CONNECT_SECONDS) -> None:
    """Refuse, by name, a ``host:port`` or ``ray://host:port`` cluster address that accepts no connection within
    ``seconds``. Other forms (``auto``, ``local``) are Ray's to resolve."""
    host_port = address[len("ray://"):] if address.startswith("ray://") else address
    host, separator, port = host_port.rpartition(":")
    if not separator or not port.isdigit() or not host:
        return
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host  # [IPv6]:port
    try:
        socket.create_connection((host, int(port)), timeout=seconds).close()
    except OSError as error:
        raise ValueError(f"no Ray cluster answers at {address!r}: {host}:{port} did not accept a connection within "
                         f"{seconds:g} s ({error.strerror or error}); start one with `ray start --head` or check "
                         f"the address") from None


@contextlib.contextmanager
def ray_session(workers: int, address: str | None) -> Iterator[Any]:
    """The ``ray`` module with Ray running for the duration of the block (see the module docstring)."""
    ray = import_ray()
    started_here = not ray.is_initialized()
    if started_here:
        if address is None:
            ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
        else:
            check_reachable(address)
            ray.init(address=address, log_to_driver=False)
    try:
        yield ray
    finally:
        if started_here:
            ray.shutdown()


def ray_get(ray: Any, reference: Any) -> Any:
    """``ray.get(reference)``, except that an exception raised inside the task is raised here as itself (a bad
    agent spec stays a ``ValueError`` naming the spec, as with multiprocessing)."""
    try:
        return ray.get(reference)
    except ray.exceptions.RayTaskError as error:
        cause = getattr(error, "cause", None)
        raise (cause if isinstance(cause, Exception) else error) from None


__all__ = ["BACKENDS", "CONNECT_SECONDS", "check_backend", "check_reachable", "import_ray", "ray_get", "ray_session"]
