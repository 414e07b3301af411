"""CPU settings of the training loops."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator


@contextmanager
def denormals_flushed() -> Iterator[None]:
    """Flush denormal floats to zero while the block runs (torch's CPU flag; restored after).

    A long-trained network's activations hold denormal floats, which made torch's CPU matrix products up to 24
    times slower (docs/training.md). The flag is the CPU thread's, not torch's alone (NumPy and hypothesis see it),
    so it is set only around the training passes."""
    import torch

    torch.set_flush_denormal(True)
    try:
        yield
    finally:
        torch.set_flush_denormal(False)
