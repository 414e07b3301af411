"""CPU settings of the training loops."""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Iterator

# Blocks of denormals_flushed open in each thread: the flag goes off only when the outermost one ends.
_open_blocks = threading.local()


@contextmanager
def denormals_flushed() -> Iterator[None]:
    """Flush denormal floats to zero while the block runs (torch's CPU flag; turned off after the outermost block).

    A long-trained network's activations hold denormal floats, which made torch's CPU matrix products up to 24
    times slower (docs/training.md). The flag is the CPU thread's, not torch's alone (NumPy and hypothesis see it),
    so it is set only around the training passes. Blocks may nest (a fit inside a training run): torch cannot read
    the flag back, so the depth is counted here, and an inner block's end leaves the outer one flushing."""
    import torch

    depth = getattr(_open_blocks, "depth", 0)
    if depth == 0:
        torch.set_flush_denormal(True)
    _open_blocks.depth = depth + 1
    try:
        yield
    finally:
        _open_blocks.depth = depth
        if depth == 0:
            torch.set_flush_denormal(False)
