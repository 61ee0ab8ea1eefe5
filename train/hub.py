"""Pushing a trained seller to a model hub: ``negotiator train --push-to-hub``.

What goes up is what a PEFT user expects to find (TRL's ``push_to_hub`` pushes the adapter
too): the LoRA adapter and its tokenizer, with the run's records (training config, manifest,
step log, reward curve) and a model card that says how the seller was trained and how to
serve it. The merged model stays
in ``OUT/merged`` (a full copy of the base; upload it yourself if a server needs it).

``huggingface_hub`` does the talking, so the hub and the credentials are the ones every
Hugging Face tool reads: ``HF_ENDPOINT`` (a private hub), ``HF_TOKEN`` or ``hf auth login``,
``HF_HUB_OFFLINE``. Nothing is pushed unless asked: training never needs the network.
"""

from __future__ import annotations

import importlib
import json
import os
from pathlib import Path

from negotiator.errors import PushFailed

# The run's records that travel with the adapter, as a kept run holds them (the shipped sellers do):
# downloaded into a folder, local/FOLDER serves the adapter and plays the strategy it trained with
# (config.json, the training config, says which).
RECORDS = ("config.json", "manifest.json", "metrics.jsonl", "reward_curve.png")


def default_repo_id(out: Path) -> str:
    """The repository a run pushes to when none is named: the output folder's name (as transformers does)."""
    return out.resolve().name


def push(out: Path, repo_id: str, *, private: bool = False) -> dict:
    """Upload ``out``'s adapter, records and a model card to ``repo_id``; returns what the manifest records.

    Raises PushFailed (the run's files are untouched) when the hub refuses or cannot be reached.
    """
    from huggingface_hub import CommitOperationAdd, HfApi
    from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled

    adapter = out / "adapter"
    if not (adapter / "adapter_config.json").is_file():
        raise PushFailed(f"{out} holds no trained adapter to push (no {adapter / 'adapter_config.json'})")
    manifest = json.loads((out / "manifest.json").read_text()) if (out / "manifest.json").is_file() else {}
    ops = [
        CommitOperationAdd(path_in_repo=p.relative_to(adapter).as_posix(), path_or_fileobj=str(p))
        for p in sorted(adapter.rglob("*"))
        if p.is_file() and p.name != "README.md"  # peft's placeholder card: ours replaces it
    ]
    ops += [CommitOperationAdd(path_in_repo=n, path_or_fileobj=str(out / n)) for n in RECORDS if (out / n).is_file()]
    ops.append(CommitOperationAdd(path_in_repo="README.md", path_or_fileobj=model_card(manifest, repo_id).encode()))
    # HF_ENDPOINT is read here, not only when huggingface_hub was first imported.
    api = HfApi(endpoint=os.environ.get("HF_ENDPOINT") or None)
    try:
        # not private: the account's default visibility, as transformers leaves it
        repo = api.create_repo(repo_id, private=True if private else None, exist_ok=True, repo_type="model")
        commit = api.create_commit(
            repo.repo_id,
            ops,
            commit_message=f"negotiator train: {manifest.get('steps')} GRPO steps on {manifest.get('base_model')}",
        )
    except OfflineModeIsEnabled:
        raise PushFailed(f"HF_HUB_OFFLINE is set, so nothing can be pushed to {repo_id}; unset it to push") from None
    except HfHubHTTPError as e:
        status = e.response.status_code if e.response is not None else None
        hint = (
            "log in with `hf auth login` or set HF_TOKEN to a token that may write there"
            if status in (401, 403)
            else "check --hub-model-id and the hub's answer"
        )
        raise PushFailed(f"the hub refused the push to {repo_id} (HTTP {status}): {hint}") from None
    except _transport_errors() as e:  # the hub could not be reached (connection refused, DNS, timeouts)
        raise PushFailed(f"could not reach the hub ({api.endpoint}) to push to {repo_id}: {e}") from None
    return {"repo_id": repo.repo_id, "url": str(repo), "commit": commit.oid, "private": private}


def _transport_errors() -> tuple[type[BaseException], ...]:
    """What the HTTP client under huggingface_hub raises when no answer comes (its 2.x uses httpx2,
    1.x httpx; requests' errors, of 0.x, are OSErrors)."""
    errors: list[type[BaseException]] = [OSError]
    for name in ("httpx2", "httpx"):
        try:
            errors.append(importlib.import_module(name).TransportError)
        except (ImportError, AttributeError):
            pass
    return tuple(errors)


def model_card(manifest: dict, repo_id: str) -> str:
    """A model card (README.md with the hub's metadata header) for the pushed adapter."""
    base = manifest.get("base_model", "unknown")
    rewards = manifest.get("reward_curve") or []
    final = manifest.get("final_reward_avg5")
    lines = [
        "---",
        "library_name: peft",
        "pipeline_tag: text-generation",
        "tags: [negotiator, grpo, trl, negotiation]",
        "---",
        "",
        f"# {repo_id.split('/')[-1]}",
        "",
        f"A negotiating seller trained with GRPO by [negotiator](https://pypi.org/project/negotiator-sdk/) "
        f"(`negotiator train`): a LoRA adapter on `{base}`.",
        "",
        "| | |",
        "|---|---|",
        f"| base model | `{base}` |",
        f"| learning rate | {manifest.get('learning_rate')} |",
        f"| steps | {manifest.get('steps')} of {manifest.get('max_steps')} |",
        f"| group size x prompts per step | {manifest.get('group_size')} x {manifest.get('prompts_per_step')} |",
        f"| seller | strategy `{manifest.get('strategy')}` |",
        f"| reward, last 5 steps | {final:+.3f} |" if isinstance(final, float) else "| reward | - |",
        f"| git commit | `{manifest.get('git_commit')}` |",
        "",
        f"The reward per step ({len(rewards)} steps) is in `manifest.json`, `metrics.jsonl` and `reward_curve.png`.",
        "",
        "Serve it with negotiator, downloaded into a folder (`hf download REPO --local-dir seller`):",
        "",
        "```bash",
        "negotiator eval --seller local/seller --suite heldout",
        "```",
        "",
    ]
    return "\n".join(lines)


__all__ = ["default_repo_id", "model_card", "push"]
