"""Arms: the runs of one seller on one suite, loaded from run folders and compared.

Folders written by ``negotiator eval`` with the same suite, seller, buyers and seed are
one arm (its shards, or a resumed run): their episodes merge, each episode id once.
Two arms are compared on the negotiations both played (``labels["negotiation"]``), so a
difference is never an artefact of one arm meeting easier scenarios.

A seller from ``negotiator train`` (spec ``local/DIR`` or ``local/DIR/merged``) has a
manifest naming its training buyer pool; an evaluation buyer of the same model family
inflates the measured gain (arXiv 2610.06204), so it is flagged.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from negotiator.errors import UsageError
from negotiator.models.families import model_family
from negotiator.models.local.shipped import local_folder
from negotiator.runtime.episode import Episode
from negotiator.runtime.log import iter_episodes

from .runner import RUN_KEYS, read_config
from .summary import buyer_of, scenario_of


@dataclass
class Arm:
    name: str
    seller: str
    config: dict
    runs: list[Path]
    episodes: list[Episode] = field(default_factory=list)
    repeats: dict[tuple[Path, Path], int] = field(default_factory=dict)
    """(later run, earlier run): negotiations the later run logged again, counted once from the earlier."""

    @property
    def suite(self) -> str:
        return self.config.get("suite", "?")


def negotiation_key(ep: Episode) -> str:
    """What identifies the negotiation an episode played, independent of the seller."""
    return ep.labels.get("negotiation") or f"{ep.scenario.id}|{ep.buyer.spec}|{ep.seed}"


def load_arms(run_dirs: list[str | Path]) -> list[Arm]:
    """One arm per distinct (suite, seller, buyers, seed) among ``run_dirs``, in order of first appearance."""
    if not run_dirs:
        raise UsageError("give at least one run folder (the --out of negotiator eval)")
    groups: dict[tuple, Arm] = {}
    for d in run_dirs:
        path = Path(d)
        if not path.exists():
            raise UsageError(f"{path} does not exist: pass the --out folder of a `negotiator eval` run")
        if not (path / "episodes.jsonl").exists():
            raise UsageError(f"no episodes.jsonl in {path}: pass the --out folder of a `negotiator eval` run")
        config = read_config(path)
        key = tuple(json.dumps(config.get(k), sort_keys=True) for k in RUN_KEYS)
        arm = groups.get(key)
        if arm is None:
            arm = groups[key] = Arm(
                name=config.get("seller", path.name), seller=config.get("seller", "?"), config=config, runs=[]
            )
        if path.resolve() in [r.resolve() for r in arm.runs]:
            continue
        arm.runs.append(path)
    arms = list(groups.values())
    for arm in arms:
        seen: dict[str, Path] = {}
        for run in arm.runs:
            for ep in iter_episodes(run / "episodes.jsonl"):
                first = seen.get(ep.episode_id)
                if first is None:
                    seen[ep.episode_id] = run
                    arm.episodes.append(ep)
                elif first != run:  # another folder of the arm played it too: not a shard, a repeat
                    arm.repeats[(run, first)] = arm.repeats.get((run, first), 0) + 1
    _name_arms(arms)
    return arms


def _name_arms(arms: list[Arm]) -> None:
    """Seller specs name arms; the same seller twice gets what differs added (its buyers, seed, suite,
    temperature or max tokens), else its folder."""
    same: dict[str, list[Arm]] = defaultdict(list)
    for a in arms:
        same[a.seller].append(a)
    shown = {"buyers": "vs {}", "seed": "seed {}", "suite_name": "{}", "temperature": "temperature {}"}
    shown["max_tokens"] = "max tokens {}"
    for a in arms:
        others = same[a.seller]
        if len(others) == 1:
            a.name = a.seller
            continue
        differ = [k for k in shown if len({json.dumps(o.config.get(k), sort_keys=True) for o in others}) > 1]
        parts = [shown[k].format(_said(a.config.get(k))) for k in differ]
        a.name = f"{a.seller} ({', '.join(parts) if parts else a.runs[0].name})"


def _said(value) -> str:
    if value is None:
        return "default"
    return "+".join(map(str, value)) if isinstance(value, list) else str(value)


def same_seller(a: str, b: str) -> bool:
    """Whether two seller specs name one seller: the same spec, the same settings written two ways
    (``?temperature=0.7`` and ``?temperature=0.70``), or a rule tactic with its own defaults spelled out
    (``rule/boulware`` and ``rule/boulware?e=0.2``)."""
    from negotiator.buyers.rules import RuleParty
    from negotiator.models.specs import coerce_param, parse_spec

    if a == b:
        return True
    try:
        x, y = parse_spec(a), parse_spec(b)
        if (x.kind, x.name) != (y.kind, y.name):
            return False
        if x.kind != "rule":
            settings = [{k: coerce_param(v) for k, v in s.params.items()} for s in (x, y)]
            return settings[0] == settings[1]
        p, q = (RuleParty(s.name, "seller", params=s.params, seed=-1) for s in (x, y))
    except UsageError:  # a spec this version cannot build: only the same text is the same seller
        return False
    return (p.tactic, p.strategy, p.patience, p.noise, p.seed) == (q.tactic, q.strategy, q.patience, q.noise, q.seed)


def _plays_alike(a: Arm, b: Arm) -> bool:
    """The same seller under the same generation settings (a rule seller has none: it ignores them)."""
    if not same_seller(a.seller, b.seller):
        return False
    return a.seller.startswith("rule/") or all(
        a.config.get(k) == b.config.get(k) for k in ("temperature", "max_tokens")
    )


def expected_size(arm: Arm) -> int | None:
    """How many negotiations the arm's run asked for (all shards together), if known."""
    from .suites import SUITES

    suite = next((s for s in SUITES.values() if s.key == arm.suite), None)
    if suite is None or arm.config.get("limit"):
        return None
    return suite.size(len(arm.config.get("buyers") or suite.buyers))


def compare(a: Arm, b: Arm, *, seed: int = 0) -> dict:
    """B minus A on the negotiations both arms played (error episodes left out), overall and per buyer."""

    def usable(arm: Arm) -> dict[str, Episode]:
        return {negotiation_key(e): e for e in arm.episodes if e.outcome.ended_by != "error"}

    ea, eb = usable(a), usable(b)
    common = sorted(set(ea) & set(eb))
    out = {"a": a.name, "b": b.name, "n": len(common)}
    if not common:
        played = {negotiation_key(e) for e in a.episodes} & {negotiation_key(e) for e in b.episodes}
        out["note"] = (
            f"all {len(played)} negotiations both played ended in an error in one arm or both: nothing to compare"
            if played
            else "no negotiation in common: compare runs of the same suite, buyers and seed"
        )
        return out
    if _plays_alike(a, b):
        out["note"] = f"{b.name} and {a.name} are one seller" + (
            f" ({a.seller}): B - A compares it with itself, and is 0 on every negotiation both played"
            if a.seller == b.seller and a.seller.startswith("rule/")
            else (" written two ways" if a.seller != b.seller else "")
            + ": B - A compares it with itself, and a difference is chance alone (a rule seller's random draws "
            "follow its spec as written; a model's, its sampling)"
        )
    pairs = [(ea[k], eb[k]) for k in common]
    out["overall"] = _paired(pairs, a.name, b.name, seed)
    per: dict[str, list] = defaultdict(list)
    for x, y in pairs:
        per[buyer_of(x)].append((x, y))
    out["by_buyer"] = {buyer: _paired(ps, a.name, b.name, seed) for buyer, ps in sorted(per.items())}
    return out


def _paired(pairs: list[tuple[Episode, Episode]], a: str, b: str, seed: int) -> dict:
    from .stats import paired_difference

    d = paired_difference(
        [x.metrics.seller_score for x, _ in pairs],
        [y.metrics.seller_score for _, y in pairs],
        [scenario_of(x) for x, _ in pairs],
        seed=seed,
        bounds=(-1.0, 1.0),  # seller scores lie in [0, 1]
    )
    out = d.as_dict()
    out["verdict"] = f"{b} better" if d.low > 0 else f"{a} better" if d.high < 0 else "no detectable difference"
    return out


# --- training manifests and buyer families ---------------------------------------------


def training_manifest(seller: str) -> tuple[Path, dict] | None:
    """The manifest of a seller trained by ``negotiator train`` (``local/DIR``, ``local/DIR/merged`` or
    ``local/DIR/adapter``, or a shipped seller such as ``local/gemma-3-270m-seller``)."""
    if not seller.startswith("local/"):
        return None
    path = local_folder(seller[len("local/") :].split("?", 1)[0])
    for d in (path, path.parent) if path.name in ("merged", "adapter") else (path,):
        m = d / "manifest.json"
        if m.is_file():
            try:
                return m, json.loads(m.read_text())
            except json.JSONDecodeError as e:
                raise UsageError(f"{m} is not valid JSON ({e}); re-run training or fix the file") from None
    return None


def training_pool(config: dict) -> dict | None:
    """The training buyer pool recorded in a run's config, or read from the seller's manifest."""
    if config.get("training"):
        return config["training"]
    found = training_manifest(config.get("seller", ""))
    if found is None:
        return None
    path, manifest = found
    pool = list(manifest.get("buyer_pool") or [])
    families = list(manifest.get("buyer_pool_families") or sorted({model_family(s) for s in pool}))
    return {"manifest": str(path), "buyer_pool": pool, "buyer_pool_families": families}


def family_warnings(seller: str, buyers: list[str], pool: dict | None) -> list[str]:
    """Warnings for the evaluation buyers that the seller's training pool held, or whose model family
    it held: one line for the buyers it met, one per shared family (not one per buyer)."""
    if not pool:
        return []
    members = list(dict.fromkeys(pool.get("buyer_pool") or []))  # a pool lists a buyer once per persona
    families = set(pool.get("buyer_pool_families") or [])
    met = [b for b in buyers if b in members]
    out = []
    if met:
        out.append(
            f"{seller}: evaluation buyer{'s' if len(met) > 1 else ''} {', '.join(met)} "
            f"{'were' if len(met) > 1 else 'was'} in its training buyer pool; its measured gain there is not "
            "held-out. Evaluate against buyers it never met."
        )
    shared: dict[str, list[str]] = {}
    for b in buyers:
        if b not in met and model_family(b) in families:
            shared.setdefault(model_family(b), []).append(b)
    for fam, bs in shared.items():
        out.append(
            f"{seller}: evaluation buyer{'s' if len(bs) > 1 else ''} {', '.join(bs)} share{'' if len(bs) > 1 else 's'} "
            f"model family '{fam}' with its training buyer pool ({', '.join(members or sorted(families))}); gains "
            "measured against them are likely inflated. Read the per-buyer rows, and include a buyer from another family."
        )
    return out


def arm_warnings(arm: Arm) -> list[str]:
    buyers = sorted({buyer_of(e) for e in arm.episodes}) or list(arm.config.get("buyers") or [])
    out = family_warnings(arm.seller, buyers, training_pool(arm.config))
    size = expected_size(arm)
    if size is not None and len(arm.episodes) < size:
        out.append(
            f"{arm.name}: {len(arm.episodes)} of {size} negotiations present; run the missing shards "
            "(or rerun into the same folder to resume) before drawing conclusions"
        )
    for (run, first), n in arm.repeats.items():
        out.append(
            f"{arm.name}: {run} repeats {n} negotiation{'s' if n > 1 else ''} of {first}, a run of the same arm "
            "(seller, suite, buyers, seed and generation settings); each is counted once, from "
            f"{first}: runs of one arm merge (as its shards and a resumed run do), so it is not compared with itself"
        )
    errors = sum(1 for e in arm.episodes if e.outcome.ended_by == "error")
    if errors:
        out.append(f"{arm.name}: {errors} episodes ended in an error and are left out of the scores")
    return out
