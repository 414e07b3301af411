"""The optional Ray backend shared by tournaments (``eval.tournament``) and training data generation (``train``).

Ray is an optional extra (``pip install -e '.[ray]'``); multiprocessing stays the default everywhere. A session
joins the cluster at ``address`` when one is given, else starts a local Ray with ``workers`` CPUs, and shuts down
only the Ray it started itself (a caller's own ``ray.init()`` is left running).
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

BACKENDS = ("multiprocessing", "ray")


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
        raise ValueError("the ray backend needs Ray: pip install -e '.[ray]'") from None
    return ray


@contextlib.contextmanager
def ray_session(workers: int, address: str | None) -> Iterator[Any]:
    """The ``ray`` module with Ray running for the duration of the block (see the module docstring)."""
    ray = import_ray()
    started_here = not ray.is_initialized()
    if started_here:
        if address is None:
            ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
        else:
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


__all__ = ["BACKENDS", "check_backend", "import_ray", "ray_get", "ray_session"]
