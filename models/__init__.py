"""The shipped networks, a data package: ``pip install`` puts these files beside ``agents`` in site-packages, where
``agents.base.MODELS_DIR`` finds them (without it, an installed ``expert``, ``suit_iterated`` or ``ppo`` had no
model to load). Nothing here is code; docs/training.md says how each file was made."""
