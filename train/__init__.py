"""Training (issue 4): MaskablePPO self-play against a pool of past snapshots and baseline agents.

``sixtysix train --config configs/ppo_selfplay.yaml`` (see :mod:`train.cli`, :mod:`train.config` for every
config key, :mod:`train.selfplay` for the pipeline, docs/training.md for the results). Needs the ``train`` extra.
"""
