"""What the decision recorders share (``train.imitation``, ``train.rollout_improvement``): a table of per-decision
arrays saved as ``.npz``, observation rows held packed (:class:`PackedObservations`), the chunked deal runner over
worker processes, re-fitting a saved model, and the check that a recording's rules are a two-player preset.

Files are written atomically; a data file that is missing, unreadable, not an ``.npz`` archive of arrays or lacks
a field is refused with an error naming it. A recorder's file also holds the rules its deals were played under
(``rules``, the JSON of ``Rules.to_dict``), and a refit refuses a model fitted for other rules (R19-R20); files
written before it held them are read without that check.
"""

from __future__ import annotations

import io
import json
from multiprocessing import Pool
from pathlib import Path
from typing import Any, Callable, ClassVar, Iterable, TypeVar

import numpy as np

from eval.ray_backend import check_backend, ray_get, ray_session
from sixtysix_env.fileio import read_npz_arrays, write_bytes_atomic
from sixtysix_env.rules import Rules

Table = TypeVar("Table", bound="DecisionTable")


def check_refit_paths(model: str, out: str) -> Rules:
    """Refuse, by name, what a refit of a saved model cannot use, before any data is read or fitted: an ``out`` that
    is not a writable ``.zip`` path, and a ``model`` that is not a model zip of ours with torch weights. Returns the
    rules the model was fitted for (for :func:`load_refit_data`)."""
    import zipfile

    from agents.ppo import check_metadata, read_model_metadata
    from sixtysix_env.fileio import writable_file

    if Path(out).suffix != ".zip":  # an agent reads a .npz path as suit-network weights, not a model
        raise ValueError(f"--out must be a .zip path, got {out!r}")
    rules = check_metadata(read_model_metadata(model), f"--model {model!r}")
    with zipfile.ZipFile(model) as archive:  # the fit starts from the torch weights, not the NumPy actor
        if "policy.pth" not in archive.namelist():
            raise ValueError(f"--model {model!r} has no policy.pth (torch weights) to fit")
    writable_file(out, f"--out {out!r}")
    return rules


def load_refit_data(table: type[Table], model: str, model_rules: Rules, paths: list[str]) -> Table:
    """The recorded decisions of ``paths`` (files of ``table``, read by its ``load``), concatenated; refused by
    name when they cannot fit ``model`` (fitted for ``model_rules``, from :func:`check_refit_paths`):
    observations of another width (a three-player model, R21, given the recorders' two-player decisions failed
    deep in torch), or deals played under other rules (R19-R20: the two-player presets' observations are alike,
    so the fit ran and gave a model whose metadata names rules its data were not played under)."""
    from agents.base import refuse_other_rules
    from agents.ppo import spaces_for

    observation_size = spaces_for(model_rules)[0]
    parts = []
    for path in paths:
        data = table.load(Path(path))
        width = data.observations.shape[1]
        if width != observation_size:
            raise ValueError(f"--model {model!r} reads observations of {observation_size} values, but --data "
                             f"{path!r} holds observations of {width} (recorded for another game: the recorders play "
                             "the two-player game, the three-player one, R21, has wider observations)")
        if data.rules is not None:
            try:
                refuse_other_rules(f"--model {model!r}", model_rules, data.rules)
            except ValueError as error:
                raise ValueError(f"{error}, and --data {path!r} was recorded under the latter") from None
        parts.append(data)
    return table.concatenate(parts)


def two_player_rules(preset: str, what: str) -> Rules:
    """The rules of ``preset`` for a recording or fit that encodes two-player observations; an unknown preset and
    the three-player game (R21, whose observations differ) are refused by name (``what``: the option or key)."""
    try:
        rules = Rules.preset(preset)
    except ValueError as error:
        raise ValueError(f"{what}: {error}") from None
    if rules.players != 2:
        raise ValueError(f"{what}: {preset!r} is the three-player game (R21), and this plays the two-player game "
                         "only")
    return rules


def held_out_split(deals: np.ndarray, share: float,
                   generator: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(training rows, validation rows): a ``share`` of the deals, drawn by ``generator``, held out whole, so no
    validation decision shares its deal with a training one (deal ids repeat across a label run's rounds: a held-out
    id holds out that deal of every round). With a share above zero and two deals or more, at least one deal is
    held out and at least one kept; a single deal is always kept (holding it out would leave nothing to fit)."""
    if not 0 <= share < 1:  # the command lines check it too; a caller of the API gets the same refusal
        raise ValueError(f"validation share must lie in [0, 1), got {share!r}")
    deal_ids = np.unique(deals)
    held_out_count = int(round(share * len(deal_ids)))
    if share > 0 and len(deal_ids) > 1:  # few deals: keep at least one on each side rather than round one side away
        held_out_count = min(max(held_out_count, 1), len(deal_ids) - 1)
    elif len(deal_ids) == 1:  # a share of 0.5 or more would round the only deal into validation
        held_out_count = 0
    held_out = generator.choice(deal_ids, size=held_out_count, replace=False)
    is_validation = np.isin(deals, held_out)
    return np.flatnonzero(~is_validation), np.flatnonzero(is_validation)


class DecisionTable:
    """Base of a dataclass of arrays with one row per recorded decision, in the order of :attr:`FIELDS`."""

    FIELDS: ClassVar[tuple[str, ...]]
    WHAT: ClassVar[str]  # how errors name a file of this kind, e.g. "imitation data"
    RULES_ENTRY: ClassVar[str] = "rules"
    # The rules the decisions were played under, saved with them when known (a recorder sets it); not a dataclass
    # field, so the tables' positional fields stay their arrays.
    rules: Rules | None = None

    def __len__(self) -> int:
        return len(getattr(self, self.FIELDS[0]))

    def save(self, path: Path) -> None:
        buffer = io.BytesIO()
        arrays = {name: getattr(self, name) for name in self.FIELDS}
        if self.rules is not None:
            arrays[self.RULES_ENTRY] = np.array(json.dumps(self.rules.to_dict()))
        np.savez_compressed(buffer, **arrays)
        write_bytes_atomic(path, buffer.getvalue())

    @classmethod
    def read(cls: type[Table], path: Path) -> Table:
        """The table stored in ``path`` (the callers check the shapes), with the rules it holds, if any."""
        where = f"{cls.WHAT} {str(path)!r}"
        arrays = read_npz_arrays(path, where, cls.FIELDS + (cls.RULES_ENTRY,))
        missing = [name for name in cls.FIELDS if name not in arrays]
        if missing:
            # A file of an earlier version (imitation and rollout data had no ``deals`` before session 65) or of
            # another kind: say what to do, since a run folder reuses its recorded data.
            raise ValueError(f"{cls.WHAT} {str(path)!r} lacks {', '.join(missing)}: it was not written by this "
                             "version of the recorder; delete it to record it again")
        table = cls(*(arrays[name] for name in cls.FIELDS))
        if cls.RULES_ENTRY in arrays:
            try:
                table.rules = Rules.from_dict(json.loads(str(arrays[cls.RULES_ENTRY])))
            except ValueError as error:  # json's errors, and from_dict's for a list or an unknown switch
                raise ValueError(f"{where}: its {cls.RULES_ENTRY!r} entry is not a rule set ({error})") from None
        return table

    @classmethod
    def concatenate(cls: type[Table], parts: list[Table]) -> Table:
        """The rows of ``parts`` one after the other; the rules of the parts if they all have the same."""
        table = cls(*(np.concatenate([getattr(part, name) for part in parts]) for name in cls.FIELDS))
        if parts and all(part.rules is not None and part.rules == parts[0].rules for part in parts):
            table.rules = parts[0].rules
        return table


class PackedObservations:
    """Observation rows stored as ``uint8`` codes into a table of their distinct values: exact, and a quarter of
    float32's memory (the encoder's features take a few dozen values: card flags, points / 66, counts), so a fit
    holds tens of millions of labelled decisions. Indexing gives float32 rows, like the array it replaces."""

    MAX_VALUES = 256

    def __init__(self, codes: np.ndarray, table: np.ndarray):
        self.codes, self.table = codes, table

    @classmethod
    def pack(cls, parts: Iterable[np.ndarray], width: int) -> "PackedObservations | np.ndarray":
        """The rows of ``parts`` (float arrays of ``width`` columns, one after the other) packed, coded part by part
        as they come so that only the codes of all rows are held; a plain float32 array if the rows take more than
        256 distinct values."""
        values: dict[float, int] = {}  # value -> code; a new value takes the next code, earlier codes stay valid
        codes: list[np.ndarray] = []
        plain: list[np.ndarray] | None = None
        for part in parts:
            if plain is not None:
                plain.append(np.asarray(part, dtype=np.float32))
                continue
            distinct, inverse = np.unique(part, return_inverse=True)
            for value in distinct.tolist():
                values.setdefault(value, len(values))
            if len(values) > cls.MAX_VALUES:
                table = np.array(list(values), dtype=np.float32)
                plain = [table[earlier] for earlier in codes] + [np.asarray(part, dtype=np.float32)]
                codes = []
                continue
            mapping = np.array([values[value] for value in distinct.tolist()], dtype=np.uint8)
            codes.append(mapping[inverse.reshape(part.shape)])
        if plain is not None:
            return np.concatenate(plain)
        return cls(np.concatenate(codes) if codes else np.zeros((0, width), dtype=np.uint8),
                   np.array(list(values), dtype=np.float32))

    def __len__(self) -> int:
        return len(self.codes)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.codes.shape

    @property
    def ndim(self) -> int:
        return self.codes.ndim

    def __getitem__(self, key: Any) -> np.ndarray:
        return self.table[self.codes[key]]


def run_deal_chunks(function: Callable[[tuple], Any], chunks: list[tuple], deal_counts: list[int], workers: int,
                    description: str, progress: bool, backend: str = "multiprocessing",
                    address: str | None = None) -> list[Any]:
    """``function(chunk)`` for every chunk of deals, in order, with a progress bar counting deals (``deal_counts[i]``
    in chunk ``i``): in this process (``workers`` 1), over ``workers`` processes (``backend`` ``multiprocessing``),
    or as Ray tasks (``backend`` ``ray``: a local ``ray.init()`` with ``workers`` CPUs, or the cluster at
    ``address``). A chunk's result depends only on the chunk, so every backend returns the same list."""
    from tqdm.auto import tqdm

    check_backend(backend, address)
    bar = tqdm(total=sum(deal_counts), unit="deal", desc=description, disable=not progress, dynamic_ncols=True)
    parts: list[Any] = []
    try:
        if backend == "ray":
            parts = _run_on_ray(function, chunks, deal_counts, workers, address, bar)
        elif workers > 1:
            with Pool(workers) as pool:
                for count, part in zip(deal_counts, pool.imap(function, chunks)):
                    parts.append(part)
                    bar.update(count)
        else:
            for count, chunk in zip(deal_counts, chunks):
                parts.append(function(chunk))
                bar.update(count)
    finally:
        bar.close()
    return parts


def _run_on_ray(function: Callable[[tuple], Any], chunks: list[tuple], deal_counts: list[int], workers: int,
                address: str | None, bar: Any) -> list[Any]:
    """The chunks as Ray tasks (one CPU each), results in chunk order; a task's error is raised here as itself."""
    with ray_session(workers, address) as ray:
        task = ray.remote(num_cpus=1)(function)
        futures = [task.remote(chunk) for chunk in chunks]
        index_of = {future: index for index, future in enumerate(futures)}
        results: dict[int, Any] = {}
        waiting = list(futures)
        while waiting:
            done, waiting = ray.wait(waiting, num_returns=1)
            index = index_of[done[0]]
            results[index] = ray_get(ray, done[0])
            bar.update(deal_counts[index])
        return [results[index] for index in range(len(chunks))]


def refit_saved_model(model_path: str | Path, out_path: str | Path, seed: int,
                      fit: Callable[[Any], dict[str, float]],
                      provenance: Callable[[dict[str, float]], dict[str, Any]]) -> dict[str, float]:
    """Load a trained model (``final.zip``, a checkpoint or an exported model; its metadata checked), run
    ``fit(policy)`` on its sb3 policy with torch seeded from ``seed``, and write it to ``out_path`` with the NumPy
    actor and the source's metadata plus ``provenance(figures)``; returns the figures."""
    import torch
    from sb3_contrib import MaskablePPO

    from agents.ppo import ActorNetwork, add_metadata_to_zip, check_metadata, read_model_metadata

    model_path = Path(model_path)
    metadata = read_model_metadata(model_path)
    check_metadata(metadata, f"model {str(model_path)!r}")
    model = MaskablePPO.load(model_path, device="cpu")
    torch.manual_seed(seed)  # after the load, which seeds torch with the seed the model was trained with
    figures = fit(model.policy)
    buffer = io.BytesIO()
    model.save(buffer)
    actor = ActorNetwork.from_policy(model.policy, metadata["activation"])
    metadata = dict(metadata, **provenance(figures))
    write_bytes_atomic(Path(out_path), add_metadata_to_zip(buffer.getvalue(), metadata, actor))
    return figures


__all__ = ["DecisionTable", "refit_saved_model", "run_deal_chunks"]
