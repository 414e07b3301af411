"""Value another run's positions with a q network: the labels that distil an ensemble into one network.

A run of ``sixtysix distill label`` holds positions (each decider's observation and legal actions) with their labels.
``python -m train.relabel --positions RUN --teacher SPEC --out DIR`` writes a label run over the same positions whose
action values are those of the q network ``SPEC`` (suit-network files ``A.npz+B.npz+...``, an ensemble, or a
MaskablePPO q model, or the alias of either; :class:`agents.ppo.QValueNetwork`) in game points, and whose teacher
action is the network's best legal one. A fit with ``fit.target: q`` and ``fit.labels_from: DIR`` then teaches one
network the ensemble's values (knowledge distillation: Bucilua, Caruana & Niculescu-Mizil 2006; Hinton, Vinyals &
Dean 2015), so it can play at about one network's cost per decision (docs/training.md, "Session 23").

The new run's ``config.yaml`` is the positions run's with ``label.source: network``, ``label.teacher: SPEC`` and
``label.positions_from: RUN``, so a fit reads it as its config (``python -m train.suit_network --config
DIR/config.yaml --set run.name=FIT --set fit.labels_from=DIR ...``). Chunks already written are kept (a run
resumes, with the same teacher and positions only); each is written atomically. The chunks still to label are all
read before ``--out`` is written to, so a damaged one is refused with nothing written.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from sixtysix_env.fileio import remove_stale_temp_files, write_json_atomic, write_text_atomic
from sixtysix_env.rules import Rules

from .config import read_yaml_file, strict_yaml_load
from .distill import LabelledDecisions, saved_label_settings


def chunk_paths(run: Path) -> list[Path]:
    """Every label chunk of a run, relative to it: its rounds' and its endgame's."""
    folders = sorted(run.glob("round_*")) + [run / "endgame"]
    return [path.relative_to(run) for folder in folders for path in sorted(folder.glob("chunk_*.npz"))]


def network_labels(data: LabelledDecisions, network: Any, block: int = 8192) -> LabelledDecisions:
    """The same decisions with the network's values of their legal actions (game points; NaN elsewhere) and its
    best legal action as the teacher's; ``block`` rows per forward pass (an ensemble's stacked members hold
    (members, rows, 4 suits, units) floats per layer)."""
    values = network.values_of_observations(data.observations, data.masks, block=block)
    actions = np.where(data.masks, values, -np.inf).argmax(axis=1).astype(np.int64)
    return LabelledDecisions(observations=data.observations, masks=data.masks, teacher_actions=actions,
                             teacher_values=values, returns=data.returns, phase2=data.phase2, deals=data.deals)


def relabel(positions: Path, teacher: str, out: Path, quiet: bool = False) -> dict[str, Any]:
    """Label every chunk of the run ``positions`` with the q network ``teacher`` into the run directory ``out``;
    returns its figures (also in ``out/summary.json``)."""
    from tqdm import tqdm

    from agents.ppo import QValueNetwork

    positions, out = Path(positions), Path(out)
    settings = saved_label_settings(positions)
    if settings is None:
        raise ValueError(f"--positions {str(positions)!r} is not a distillation run directory (no config.yaml)")
    if out.resolve() == positions.resolve():
        raise ValueError("--out must be another directory than --positions")
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {str(out)!r} is a file, not a directory")
    chunks = chunk_paths(positions)
    if not chunks:
        raise ValueError(f"--positions {str(positions)!r} holds no label chunks: run `sixtysix distill label` there")
    network = QValueNetwork(teacher, where="relabel's teacher")
    if network.rules != Rules.preset(settings["rules"]):
        raise ValueError(f"relabel's teacher {teacher!r} was fitted for the rules {network.rules.preset_name!r}, "
                         f"the positions of {str(positions)!r} are of {settings['rules']!r}")
    # saved_label_settings above has read and checked this file
    config = strict_yaml_load((positions / "config.yaml").read_text(encoding="utf-8"))
    if not isinstance(config.get("run", {}), dict):
        raise ValueError(f"{str(positions / 'config.yaml')!r}: config key 'run' must be a mapping of run settings")
    config["run"] = {**config.get("run", {}), "name": out.name, "out_dir": str(out.parent)}
    config["label"] = {**config.get("label", {}), "source": "network", "teacher": teacher,
                       "positions_from": str(positions)}
    if (out / "config.yaml").exists():  # a resumed run: its chunks so far must be of this teacher and positions
        _refuse_another_labelling(out, config["label"])
    pending = [relative for relative in chunks if not (out / relative).exists()]
    # Every chunk still to label is read once before --out is made or added to: a damaged one is refused while
    # nothing has been written (each is read again when it is labelled, so only one chunk is held at a time).
    for relative in tqdm(pending, desc="check the positions", unit="chunk", disable=quiet):
        LabelledDecisions.load(positions / relative)
    out.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out / "config.yaml", yaml.safe_dump(config, sort_keys=False))
    for folder in sorted({relative.parent for relative in chunks}):  # a run cut short may have left temporary files
        (out / folder).mkdir(parents=True, exist_ok=True)
        remove_stale_temp_files(out / folder)
    started, decisions, written = time.perf_counter(), 0, 0
    for relative in tqdm(pending, desc=f"relabel with {teacher}", unit="chunk", disable=quiet):
        target = out / relative
        labels = network_labels(LabelledDecisions.load(positions / relative), network)
        labels.save(target)
        decisions += len(labels)
        written += 1
    seconds = time.perf_counter() - started
    figures = {"positions_from": str(positions), "teacher": teacher, "chunks": len(chunks), "new_chunks": written,
               "new_decisions": decisions, "wall_seconds": round(seconds, 1),
               "decisions_per_second": round(decisions / seconds, 1) if decisions and seconds > 0 else None}
    write_json_atomic(out / "summary.json", figures)
    return figures


def _refuse_another_labelling(out: Path, label: dict[str, Any]) -> None:
    """Refuse to resume the label run ``out`` with another teacher or other positions than it was started with: its
    kept chunks would hold one network's values and the new ones another's, under a config naming only the last."""
    previous, where = read_yaml_file(out / "config.yaml")  # unreadable text or bad YAML is refused naming it
    previous_label = previous.get("label") if isinstance(previous, dict) else None
    if not isinstance(previous_label, dict):
        raise ValueError(f"--out {str(out)!r}: {where} has no label section; is it a relabel run?")
    for key, option in (("teacher", "--teacher"), ("positions_from", "--positions")):
        if previous_label.get(key) != label[key]:
            raise ValueError(f"--out {str(out)!r} was labelled with {option} {previous_label.get(key)!r}, not "
                             f"{label[key]!r}: resume it with the same one, or label into another --out")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m train.relabel", description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--positions", type=Path, required=True, help="a label run whose positions are valued")
    parser.add_argument("--teacher", required=True,
                        help="the q network: suit-network files A.npz+B.npz+... (an ensemble), a MaskablePPO q model, "
                             "or the alias of either")
    parser.add_argument("--out", type=Path, required=True, help="the new label run's directory")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    try:
        print(relabel(args.positions, args.teacher, args.out, args.quiet))
    except (ValueError, OSError) as error:  # bad input, or a path that cannot be read or written: no traceback
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
