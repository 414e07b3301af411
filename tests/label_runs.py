"""A tiny labelled run of ``sixtysix distill label`` (true-deal labels, q target) for the tests that read label runs:
relabelling, the suit network's fit, the recorded-data details."""

from __future__ import annotations

from pathlib import Path


def tiny_label_run(folder: Path, deals: int, chunk_deals: int, worlds: int) -> tuple[Path, Path]:
    """Write a config of ``deals`` deals in chunks of ``chunk_deals``, each decision valued on ``worlds`` true
    worlds, into ``folder``, and label its round 0 there; returns (the config file, the run directory)."""
    from train.distill import Distiller, load_distill_config

    config_path = folder / "distill.yaml"
    config_path.write_text(f"""
run: {{name: tiny, out_dir: {str(folder / 'runs')!r}, workers: 1, progress_bar: false}}
label: {{deals: {deals}, chunk_deals: {chunk_deals}, source: true_world, worlds: {worlds}}}
fit: {{target: q}}
""")
    config = load_distill_config(config_path, [])
    Distiller(config, quiet=True).label(0)
    return config_path, config.run_dir
