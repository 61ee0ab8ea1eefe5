"""Every deployment config loads with its own tool's parser or schema, so a typo cannot ship."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1] / "deployments"


# --- Docker Compose ------------------------------------------------------------------------


def _compose(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    exe = shutil.which("docker-compose")
    if exe is None:
        pytest.skip("docker-compose is not installed (.ci/run installs Debian's docker-compose)")
    base = {"PATH": "/usr/bin:/bin", "HOME": "/tmp"}
    return subprocess.run(
        [exe, "-f", str(ROOT / "vllm" / "docker-compose.yml"), *args],
        capture_output=True,
        text=True,
        env={**base, **(env or {})},
        timeout=60,
    )


def test_the_compose_file_is_valid_for_docker_compose():
    r = _compose("--profile", "proxy", "config", env={"HF_TOKEN": "hf_x", "LITELLM_MASTER_KEY": "sk-x"})
    assert r.returncode == 0, r.stderr
    resolved = yaml.safe_load(r.stdout)
    vllm = resolved["services"]["vllm"]
    assert "/health" in " ".join(vllm["healthcheck"]["test"])
    assert vllm["deploy"]["resources"]["reservations"]["devices"][0]["capabilities"] == ["gpu"]
    assert "--enable-lora" in vllm["command"] and any(a.startswith("--lora-modules=seller=") for a in vllm["command"])
    assert resolved["services"]["litellm"]["depends_on"]["vllm"]["condition"] == "service_healthy"
    # Without the gated-model token compose refuses to start, with a message that says why.
    r = _compose("config", env={})
    assert r.returncode != 0 and "HF_TOKEN" in r.stderr


def test_vllm_alone_starts_without_the_proxys_key_and_the_proxy_refuses_to_start_without_it(tmp_path):
    """Compose reads the variables of every service, a profile's that is off too: `up` of vLLM alone, as the
    README says, stopped on `set LITELLM_MASTER_KEY for the proxy`. The proxy's own shell says it now."""
    r = _compose("config", "-q", env={"HF_TOKEN": "hf_x"})  # no LITELLM_MASTER_KEY, no proxy profile
    assert r.returncode == 0, r.stderr
    r = _compose("--profile", "proxy", "config", env={"HF_TOKEN": "hf_x"})
    assert r.returncode == 0, r.stderr
    proxy = yaml.safe_load(r.stdout)["services"]["litellm"]
    # What the container runs, as docker does: the entrypoint, then the command; `$$` is a literal `$`.
    argv = [a.replace("$$", "$") for a in [*proxy["entrypoint"], *proxy["command"]]]
    (tmp_path / "litellm").write_text('#!/bin/sh\necho "litellm $*"\n')  # stands in for the image's litellm
    (tmp_path / "litellm").chmod(0o755)
    path = f"{tmp_path}:/usr/bin:/bin"
    r = subprocess.run(argv, capture_output=True, text=True, env={**proxy["environment"], "PATH": path}, timeout=60)
    assert proxy["environment"]["LITELLM_MASTER_KEY"] == "" and r.returncode != 0
    assert "set LITELLM_MASTER_KEY for the proxy" in r.stderr and r.stdout == ""
    env = {**proxy["environment"], "LITELLM_MASTER_KEY": "sk-x", "PATH": path}
    r = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0 and r.stdout == "litellm --config /app/config.yaml --port 4000\n", r.stderr


def test_the_vllm_readmes_commands_reach_the_published_port_and_serve_listens_on_another():
    """On the compose host vLLM publishes its port; the README's `negotiator serve` took serve's default port,
    the same 8000, and stopped on `cannot listen on 127.0.0.1:8000: address already in use`."""
    import shlex

    import typer.main

    from negotiator.cli.app import _register, app

    compose = yaml.safe_load((ROOT / "vllm" / "docker-compose.yml").read_text())
    (published,) = [int(p.split(":")[0]) for p in compose["services"]["vllm"]["ports"]]
    blocks = re.findall(r"```bash\n(.*?)```", (ROOT / "vllm" / "README.md").read_text(), re.S)
    commands = {}
    for line in (ln for b in blocks for ln in b.splitlines()):
        words = [w for w in shlex.split(line, comments=True) if not re.fullmatch(r"[A-Z_]+=.*", w)]
        if words[:1] == ["negotiator"]:
            commands[words[1]] = words[2:]
    assert set(commands) == {"eval", "serve"}
    group = _register() or typer.main.get_command(app)
    params = {name: group.commands[name].make_context(name, list(args)).params for name, args in commands.items()}
    for p in params.values():
        assert p["seller"] == "hosted_vllm/seller" and p["seller_base_url"] == f"http://localhost:{published}/v1"
    assert params["serve"]["port"] != published


def test_docker_compose_rejects_a_typo(tmp_path):
    exe = shutil.which("docker-compose")
    if exe is None:
        pytest.skip("docker-compose is not installed")
    bad = (ROOT / "vllm" / "docker-compose.yml").read_text().replace("healthcheck:", "healthchek:", 1)
    (tmp_path / "c.yml").write_text(bad)
    r = subprocess.run(
        [exe, "-f", str(tmp_path / "c.yml"), "config", "-q"],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "HF_TOKEN": "x", "LITELLM_MASTER_KEY": "x"},
        timeout=60,
    )
    assert r.returncode != 0 and "healthchek" in r.stderr


# --- Kubernetes ----------------------------------------------------------------------------

K8S_VERSION = "1.30.0"


def _manifests():
    return sorted((ROOT / "vllm" / "k8s").glob("*.yaml"))


def test_kubernetes_manifests_match_the_api_schema():
    kv = pytest.importorskip("kubernetes_validate")
    docs = [d for f in _manifests() for d in yaml.safe_load_all(f.read_text()) if d]
    assert {d["kind"] for d in docs} == {"PersistentVolumeClaim", "Deployment", "Service"}
    for doc in docs:
        kv.validate(doc, K8S_VERSION, strict=True)  # strict: unknown fields are errors too
    (deploy,) = [d for d in docs if d["kind"] == "Deployment"]
    (c,) = deploy["spec"]["template"]["spec"]["containers"]
    assert c["resources"]["requests"]["nvidia.com/gpu"] == "1" and c["resources"]["requests"]["memory"]
    assert {p: c[p]["httpGet"]["path"] for p in ("startupProbe", "readinessProbe", "livenessProbe")} == dict.fromkeys(
        ("startupProbe", "readinessProbe", "livenessProbe"), "/health"
    )
    (svc,) = [d for d in docs if d["kind"] == "Service"]
    labels = deploy["spec"]["template"]["metadata"]["labels"]
    assert labels | svc["spec"]["selector"] == labels  # the Service selects the vLLM pods


def test_the_kubernetes_validator_rejects_a_typo():
    kv = pytest.importorskip("kubernetes_validate")
    deploy = [d for d in yaml.safe_load_all(_manifests()[0].read_text()) if d and d["kind"] == "Deployment"][0]
    deploy["spec"]["template"]["spec"]["containers"][0]["readinesProbe"] = deploy["spec"]["template"]["spec"][
        "containers"
    ][0].pop("readinessProbe")
    with pytest.raises(kv.ValidationError, match="readinesProbe"):
        kv.validate(deploy, K8S_VERSION, strict=True)


# --- LiteLLM proxy -------------------------------------------------------------------------


def _check_litellm_config(config: dict) -> None:
    """What ``litellm --config`` does with each section, checked with LiteLLM's own types."""
    import inspect

    import litellm
    from litellm.proxy._types import ConfigGeneralSettings, ConfigYAML
    from litellm.types.router import LiteLLM_Params

    ConfigYAML.model_validate(config)  # the proxy's documented schema of config.yaml
    # ConfigYAML lets unknown keys through; the proxy would silently ignore a misspelt one.
    unknown = set(config) - set(ConfigYAML.model_fields)
    assert not unknown, f"unknown top-level keys {unknown}"
    unknown = set(config.get("general_settings", {})) - set(ConfigGeneralSettings.model_fields)
    assert not unknown, f"unknown general_settings {unknown}"
    # The proxy sets litellm.<key> = value for each litellm_settings entry.
    unknown = {k for k in config.get("litellm_settings", {}) if not hasattr(litellm, k)}
    assert not unknown, f"unknown litellm_settings {unknown}"
    # router_settings become litellm.Router(**router_settings).
    router_params = set(inspect.signature(litellm.Router.__init__).parameters)
    unknown = set(config.get("router_settings", {})) - router_params
    assert not unknown, f"unknown router_settings {unknown}"
    for entry in config["model_list"]:
        unknown = set(entry["litellm_params"]) - set(LiteLLM_Params.model_fields)
        assert not unknown, f"{entry['model_name']}: unknown litellm_params {unknown}"
    groups = {e["model_name"] for e in config["model_list"]}
    for fallback in config.get("router_settings", {}).get("fallbacks", []):
        for src, targets in fallback.items():
            assert src in groups and set(targets) <= groups, fallback
    litellm.Router(model_list=config["model_list"], **config.get("router_settings", {}))


@pytest.fixture
def litellm_env(monkeypatch):
    for k, v in {
        "VLLM_API_BASE": "http://127.0.0.1:8000/v1",
        "OPENAI_API_KEY": "sk-test",
        "ANTHROPIC_API_KEY": "sk-test",
        "GEMINI_API_KEY": "test",
        "LITELLM_MASTER_KEY": "sk-master",
    }.items():
        monkeypatch.setenv(k, v)


async def test_the_litellm_proxy_config_loads(litellm_env):
    config = yaml.safe_load((ROOT / "litellm" / "config.yaml").read_text())
    try:
        _check_litellm_config(config)  # builds a Router, which starts budget tasks on the loop
    finally:
        await _cancel_background_tasks()
    names = {e["model_name"]: e["litellm_params"]["model"] for e in config["model_list"]}
    assert names["seller"].startswith("hosted_vllm/")
    assert {"openai", "anthropic", "gemini"} <= {m.split("/")[0] for k, m in names.items() if k.startswith("buyer-")}
    assert config["router_settings"]["provider_budget_config"] and config["litellm_settings"]["max_budget"]


async def _cancel_background_tasks():
    import asyncio

    tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def test_the_litellm_proxy_routes_each_model_name_and_falls_back(litellm_env, monkeypatch):
    """The Router the proxy builds from config.yaml, against loopback servers standing in for vLLM and OpenAI:
    each name the READMEs use reaches the model the file names, and a seller whose vLLM fails falls back."""
    import litellm

    from negotiator.testing import FakeOpenAIServer, FakeReply

    config = yaml.safe_load((ROOT / "litellm" / "config.yaml").read_text())
    down = False

    def vllm_answer(req):
        return FakeReply(status=500, text="down") if down and req["model"] == "seller" else "from vllm"

    messages = [{"role": "user", "content": "hi"}]
    with FakeOpenAIServer(vllm_answer) as vllm, FakeOpenAIServer(lambda req: "from openai") as openai:
        monkeypatch.setenv("VLLM_API_BASE", vllm.base_url)
        monkeypatch.setenv("OPENAI_BASE_URL", openai.base_url)  # where LiteLLM sends openai/ models
        try:
            router = litellm.Router(model_list=config["model_list"], **config["router_settings"])
            said = {}
            for name in ("seller", "seller-base", "buyer-openai"):
                said[name] = (await router.acompletion(model=name, messages=messages)).choices[0].message.content
            assert said == {"seller": "from vllm", "seller-base": "from vllm", "buyer-openai": "from openai"}
            assert [r["model"] for r in vllm.requests] == ["seller", "gemma-base"]  # the adapter, the base
            down = True
            reply = await router.acompletion(model="seller", messages=messages)
        finally:
            await _cancel_background_tasks()
    assert reply.choices[0].message.content == "from openai"  # seller-fallback
    tries = 1 + config["router_settings"]["num_retries"]
    assert [r["model"] for r in vllm.requests[2:]] == ["seller"] * tries
    assert [r["model"] for r in openai.requests] == ["gpt-4o-mini", "gpt-4o-mini"]


@pytest.mark.parametrize(
    "section, typo",
    [("router_settings", "num_retry"), ("litellm_settings", "drop_param"), ("general_settings", "master_kee")],
)
async def test_the_litellm_check_rejects_a_typo(litellm_env, section, typo):
    config = yaml.safe_load((ROOT / "litellm" / "config.yaml").read_text())
    config[section][typo] = 1
    with pytest.raises(AssertionError, match=typo):
        _check_litellm_config(config)
    await _cancel_background_tasks()


# --- accelerate / DeepSpeed / TRL ------------------------------------------------------------


def _accelerate_files():
    return sorted((ROOT / "training" / "accelerate").glob("*.yaml"))


@pytest.mark.parametrize("path", _accelerate_files(), ids=lambda p: p.name)
def test_accelerate_configs_load_with_accelerates_loader(path):
    from accelerate.commands.config.config_args import ClusterConfig, load_config_from_file
    from accelerate.commands.launch import launch_command_parser

    config = load_config_from_file(str(path))  # raises on unknown keys
    assert isinstance(config, ClusterConfig) and config.num_processes >= 2 and config.mixed_precision == "bf16"
    # accelerate launch turns each deepspeed_config key into one of its own options.
    options = {a.dest for a in launch_command_parser()._actions}
    unknown = set(config.deepspeed_config) - options
    assert not unknown, f"{path.name}: deepspeed_config keys accelerate launch does not know: {unknown}"
    if config.distributed_type == "DEEPSPEED":
        assert config.deepspeed_config["zero_stage"] in (2, 3)


def test_accelerates_loader_rejects_a_typo(tmp_path):
    from accelerate.commands.config.config_args import load_config_from_file

    bad = tmp_path / "bad.yaml"
    bad.write_text(_accelerate_files()[0].read_text().replace("num_processes", "num_procesess"))
    with pytest.raises(ValueError, match="num_procesess"):
        load_config_from_file(str(bad))


def _grpo_config(overrides: dict):
    from transformers import HfArgumentParser
    from trl import GRPOConfig

    data = yaml.safe_load((ROOT / "training" / "grpo_vllm_server.yaml").read_text())
    # This CPU machine cannot build a bf16 config; only these two fields change for the check.
    (config,) = HfArgumentParser(GRPOConfig).parse_dict(
        {**data, "bf16": False, "use_cpu": True, **overrides}, allow_extra_keys=False
    )
    return data, config


def test_the_grpo_config_builds_a_trl_grpo_config():
    data, config = _grpo_config({})
    assert data["bf16"] is True and config.use_vllm and config.vllm_mode == "server"
    assert config.learning_rate == 1e-6 and config.num_generations == 8
    with pytest.raises(ValueError, match="learnig_rate"):
        _grpo_config({"learnig_rate": 3e-6})


def _readme_commands(tool: str) -> list[list[str]]:
    text = (ROOT / "training" / "README.md").read_text()
    blocks = re.findall(r"```bash\n(.*?)```", text, re.S)
    lines = [ln.replace("\\\n", " ") for b in blocks for ln in b.replace("\\\n", " ").splitlines()]
    out = []
    for ln in lines:
        words = ln.split()
        if tool in " ".join(words):
            i = next(
                j
                for j, w in enumerate(words)
                if w == tool.split()[0] and " ".join(words[j : j + len(tool.split())]) == tool
            )
            out.append(words[i + len(tool.split()) :])
    return out


def test_negotiator_train_on_the_gpu_profile_plays_the_grpo_configs_game():
    """What the training README says `negotiator train --profile gpu` shares with grpo_vllm_server.yaml, and
    what it sets otherwise. It said the same fields, when the learning rate, its schedule and the batch differ."""
    from train.config import resolve
    from train.run import grpo_args

    data, _ = _grpo_config({})
    cfg = resolve("gpu", out=Path("run"), generation="vllm-server", dtype="float32")  # bf16 needs a GPU
    args = grpo_args(cfg)
    shared = ("num_generations", "max_completion_length", "temperature", "beta", "loss_type", "use_vllm", "vllm_mode")
    assert {k: getattr(args, k) for k in shared} == {k: data[k] for k in shared}
    assert (args.learning_rate, str(args.lr_scheduler_type.value), args.warmup_steps) == (3e-6, "constant", 0)
    assert (args.per_device_train_batch_size, args.gradient_accumulation_steps, args.save_steps) == (8, 8, 25)


def test_the_readme_trl_vllm_serve_command_parses_with_trls_parser():
    from trl.scripts.vllm_serve import make_parser

    (args,) = _readme_commands("trl vllm-serve")
    (parsed,) = make_parser().parse_args_and_config(args)
    assert parsed.model.startswith("google/gemma-3") and parsed.port == 8001
    config = yaml.safe_load((ROOT / "training" / "grpo_vllm_server.yaml").read_text())
    assert config["vllm_server_port"] == parsed.port  # the trainer talks to that server
    with pytest.raises(ValueError, match="tensor-paralel-size"):
        make_parser().parse_args_and_config([*args, "--tensor-paralel-size", "2"])


def test_the_readme_train_command_parses_and_resolves_to_the_vllm_server():
    import typer.main

    from negotiator.cli.app import _register, app
    from train.config import resolve

    (train_args,) = _readme_commands("negotiator train")
    command = _register() or typer.main.get_command(app).commands["train"]
    params = command.make_context("train", list(train_args)).params
    cfg = resolve(
        params["profile"], out=params["out"], generation=params["generation"], vllm_server_url=params["vllm_server_url"]
    )
    (serve_args,) = _readme_commands("trl vllm-serve")
    port = serve_args[serve_args.index("--port") + 1]
    assert (cfg.generation, cfg.vllm_server_url) == ("vllm-server", f"http://127.0.0.1:{port}")


def test_negotiator_train_under_several_processes_stops_before_touching_its_folder(tmp_path):
    """Under torchrun (accelerate launch alike) with two processes each ran the whole run into one folder, and
    one ended on `No such file or directory: .../reward_curve.part.png`. Now each says why, at once."""
    out = tmp_path / "run"
    env = {**os.environ, "NEGOTIATOR_BLOCK_REMOTE": "1", "WORLD_SIZE": "2", "RANK": "1", "COLUMNS": "400"}
    args = ["train", "--out", str(out), "--base", "local/tiny-random-gemma", "--steps", "1"]
    r = subprocess.run(
        [sys.executable, "-m", "negotiator", *args], capture_output=True, text=True, env=env, timeout=300
    )
    said = " ".join((r.stdout + r.stderr).split())
    assert r.returncode == 2 and "Traceback" not in said, said
    assert "negotiator train runs as one process, and this is one of 2 (WORLD_SIZE" in said
    assert not out.exists()


# --- sharded evaluation: an Indexed Job, then the report ----------------------------------------

EVAL = ROOT / "eval"


def _eval_docs() -> dict[str, dict]:
    docs = [d for f in sorted(EVAL.glob("*.yaml")) for d in yaml.safe_load_all(f.read_text()) if d]
    return {f"{d['kind']}/{d['metadata']['name']}": d for d in docs}


def _expand(arg: str, env: dict[str, str]) -> str:
    """What the kubelet does to a container's args: $(VAR) from the container's environment."""
    return re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", lambda m: env.get(m.group(1), m.group(0)), arg)


def test_the_eval_manifests_match_the_api_schema():
    kv = pytest.importorskip("kubernetes_validate")
    docs = _eval_docs()
    assert set(docs) == {
        "PersistentVolumeClaim/negotiator-eval-runs",
        "Job/negotiator-eval",
        "Job/negotiator-eval-report",
        "Pod/negotiator-eval-runs",
    }
    for doc in docs.values():
        kv.validate(doc, K8S_VERSION, strict=True)
    job = docs["Job/negotiator-eval"]["spec"]
    assert job["completionMode"] == "Indexed" and job["parallelism"] <= job["completions"]
    assert job["template"]["spec"]["restartPolicy"] == "Never"  # what backoffLimitPerIndex requires
    (c,) = job["template"]["spec"]["containers"]
    env = {e["name"]: e["value"] for e in c["env"]}
    assert int(env["SHARDS"]) == job["completions"]  # shard i/N for every index of the Job
    assert docs["PersistentVolumeClaim/negotiator-eval-runs"]["spec"]["accessModes"] == ["ReadWriteMany"]
    claims = {
        v["persistentVolumeClaim"]["claimName"]
        for d in docs.values()
        if d["kind"] != "PersistentVolumeClaim"
        for v in (d["spec"].get("template", {}).get("spec") or d["spec"])["volumes"]
    }
    assert claims == {"negotiator-eval-runs"}
    report = docs["Job/negotiator-eval-report"]["spec"]["template"]["spec"]["containers"][0]
    assert {e["name"]: e["value"] for e in report["env"]}["RUN"] == env["RUN"]  # it reads the folders the shards wrote


def test_the_kubernetes_validator_rejects_a_typo_in_the_eval_job():
    kv = pytest.importorskip("kubernetes_validate")
    job = _eval_docs()["Job/negotiator-eval"]
    job["spec"]["completionMod"] = job["spec"].pop("completionMode")
    with pytest.raises(kv.ValidationError, match="completionMod"):
        kv.validate(job, K8S_VERSION, strict=True)


def test_the_eval_job_shards_and_the_report_job_merge_them(tmp_path):
    """Every pod's command as the kubelet expands it, run here against a stand-in for the served seller, then the report job."""
    from negotiator.testing import FakeOpenAIServer

    docs = _eval_docs()
    job = docs["Job/negotiator-eval"]["spec"]
    (c,) = job["template"]["spec"]["containers"]
    env = {e["name"]: e["value"] for e in c["env"]}
    assert env["SELLER"] == "hosted_vllm/seller"
    walk_away = '{"action": "walk_away", "message": "Not today."}'
    with FakeOpenAIServer(lambda req: walk_away, model="seller") as server:  # stands in for vllm-seller
        env.update(SUITE="quick", SELLER_BASE_URL=server.base_url)  # the quick suite, and this server as vllm-seller
        pods = [
            [_expand(a, {**env, "JOB_COMPLETION_INDEX": str(i)}) for a in c["args"]] for i in range(job["completions"])
        ]
        assert all("$(" not in a for args in pods for a in args)
        assert sorted(a for args in pods for a in args if a.startswith("--shard=")) == sorted(
            f"--shard={i}/{job['completions']}" for i in range(job["completions"])
        )
        assert (
            len({a for args in pods for a in args if a.startswith("--out=")}) == job["completions"]
        )  # a folder per pod
        # Run the same Job with two pods (the machine has two cores): shards 0/2 and 1/2.
        env["SHARDS"] = "2"
        runs = tmp_path / "runs"
        bin_dir = str(Path(sys.executable).parent)  # the `negotiator` entry point beside this Python
        base = {
            **os.environ,
            "PATH": f"{bin_dir}:{os.environ['PATH']}",
            "NEGOTIATOR_BLOCK_REMOTE": "1",
            "COLUMNS": "160",
        }
        procs = []
        for index in range(2):
            args = [
                _expand(a, {**env, "JOB_COMPLETION_INDEX": str(index)}).replace("=/runs/", f"={runs}/")
                for a in c["args"]
            ]
            procs.append(
                subprocess.Popen(
                    ["negotiator", *args],
                    env={**base, **env},
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
            )
        for p in procs:
            out, err = p.communicate(timeout=600)
            assert p.returncode == 0, err
    assert len(server.requests) >= 24 and {r["model"] for r in server.requests} == {"seller"}
    shards = sorted(runs.joinpath(env["RUN"]).iterdir())
    assert [s.name for s in shards] == ["shard-0", "shard-1"]
    counts = [len(s.joinpath("episodes.jsonl").read_text().splitlines()) for s in shards]
    assert sum(counts) == 24 and min(counts) >= 1  # the quick suite, each negotiation in exactly one shard

    report = docs["Job/negotiator-eval-report"]["spec"]["template"]["spec"]["containers"][0]
    renv = {e["name"]: e["value"] for e in report["env"]}
    shell, flag, script = report["command"]
    r = subprocess.run(
        [shell, flag, script.replace("/runs/", f"{runs}/")],
        env={**base, **renv},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr
    summary = json.loads(runs.joinpath(env["RUN"], "report", "summary.json").read_text())
    (arm,) = summary["arms"]
    assert arm["summary"]["overall"]["n"] == 24 and len(arm["runs"]) == 2
    assert summary["warnings"] == []  # no shard missing
    assert runs.joinpath(env["RUN"], "report", "report.html").is_file()


def test_the_eval_image_copies_what_exists_and_installs_extras_that_exist():
    dockerfile = pytest.importorskip("dockerfile")  # the official (BuildKit) parser
    import tomllib

    commands = dockerfile.parse_file(str(EVAL / "Dockerfile"))
    known = {"FROM", "ARG", "ENV", "WORKDIR", "COPY", "RUN", "USER", "ENTRYPOINT", "CMD", "LABEL", "EXPOSE"}
    assert {c.cmd for c in commands} <= known and commands[0].cmd == "FROM"
    for c in commands:
        if c.cmd == "COPY":
            for src in c.value[:-1]:
                assert (ROOT.parent / src).exists(), f"COPY {src}: not in the repository"
    extras = set(tomllib.loads((ROOT.parent / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    (arg,) = [c for c in commands if c.cmd == "ARG"]
    default = arg.value[0].split("=", 1)[1]
    assert set(default.split(",")) <= extras
    packages = set(
        tomllib.loads((ROOT.parent / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]["include"]
    )
    copied = {c.value[0] for c in commands if c.cmd == "COPY"}
    assert {p.rstrip("*") for p in packages} <= copied  # every package setuptools looks for is in the image
    (entry,) = [c for c in commands if c.cmd == "ENTRYPOINT"]
    assert entry.json and entry.value == ("negotiator",)
    # the manifests run that image with `negotiator` subcommands, or a shell for the report's glob
    docs = _eval_docs()
    assert docs["Job/negotiator-eval"]["spec"]["template"]["spec"]["containers"][0]["args"][0] == "eval"


def test_the_eval_image_copies_every_file_the_build_reads():
    """pyproject.toml names a readme and license files; setuptools reads them while pip installs the image's
    checkout. Without LICENSE the wheel lost its license text and setuptools warned that from 2027-02-18 such a
    build fails: `docker build` of this image would have stopped with the next setuptools."""
    dockerfile = pytest.importorskip("dockerfile")
    import tomllib

    project = tomllib.loads((ROOT.parent / "pyproject.toml").read_text())["project"]
    copied = {src for c in dockerfile.parse_file(str(EVAL / "Dockerfile")) if c.cmd == "COPY" for src in c.value[:-1]}
    assert {project["readme"], *project["license-files"]} <= copied


def _readme_shell(path: Path, program: str) -> list[list[str]]:
    """The commands of a README's bash blocks that start with ``program``, split as the shell splits them."""
    import shlex

    blocks = re.findall(r"```bash\n(.*?)```", path.read_text(), re.S)
    lines = [ln for b in blocks for ln in b.replace("\\\n", " ").splitlines()]
    return [shlex.split(ln, comments=True) for ln in lines if ln.startswith(f"{program} ")]


def test_the_litellm_readmes_eval_reaches_each_model_through_the_proxy_and_its_rule_comparison_runs(tmp_path):
    """The README's `negotiator eval` through the proxy, run here with a loopback server standing in for the
    proxy: every model by its name in config.yaml, with the proxy key. The rule seller's command the summary
    prints for a comparison dropped --buyer-base-url, so it sent the proxy's buyers to the provider's default."""
    from negotiator.testing import FakeOpenAIServer

    config = yaml.safe_load((ROOT / "litellm" / "config.yaml").read_text())
    groups = {e["model_name"] for e in config["model_list"]}
    (args,) = _readme_shell(ROOT / "litellm" / "README.md", "negotiator eval")
    offer = '{"action": "offer", "terms": {}, "message": "Lower, please."}'
    walk_away = '{"action": "walk_away", "message": "Not today."}'
    env = {**os.environ, "NEGOTIATOR_BLOCK_REMOTE": "1", "LITELLM_PROXY_API_KEY": "sk-master", "COLUMNS": "400"}
    exe = str(Path(sys.executable).parent / "negotiator")
    with FakeOpenAIServer(lambda req: offer if req["model"].startswith("buyer-") else walk_away) as proxy:
        root = proxy.base_url.removesuffix("/v1")  # what `litellm --port 4000` answers on, here
        argv = [root if a == "http://localhost:4000" else a for a in args[1:]]
        assert argv.count(root) == 2  # the seller's and the buyers' base URL
        argv += ["--limit", "2", "--out", str(tmp_path / "proxy")]
        r = subprocess.run([exe, *argv], capture_output=True, text=True, env=env, timeout=600)
        assert r.returncode == 0, r.stderr
        used = {req["model"] for req in proxy.requests}
        assert used == {"seller", "buyer-openai", "buyer-gemini"} and used <= groups
        assert {h["authorization"] for h in proxy.headers} == {"Bearer sk-master"}
        (line,) = [ln for ln in r.stdout.splitlines() if ln.startswith("for a point of comparison")]
        rule = line.split(": ", 1)[1].split(";")[0].split()
        assert rule[rule.index("--buyer-base-url") + 1] == root
        rule[0] = exe  # `negotiator`, the way the eval was started
        del proxy.requests[:]
        r = subprocess.run([*rule, "--limit", "2"], capture_output=True, text=True, env=env, timeout=600)
        assert r.returncode == 0, r.stderr
        assert {req["model"] for req in proxy.requests} == {"buyer-openai", "buyer-gemini"}


def test_the_training_readme_waits_on_the_url_trls_client_checks():
    """`trl vllm-serve` runs vLLM's own server, and TRL's client checks `/health` there; the README waited on
    `/health/`, a route that server does not have."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from types import SimpleNamespace

    from trl.generation.vllm_client import VLLMClient

    (url,) = re.findall(r"curl -fsS (\S+?)`", (ROOT / "training" / "README.md").read_text())
    config = yaml.safe_load((ROOT / "training" / "grpo_vllm_server.yaml").read_text())
    base = f"http://{config['vllm_server_host']}:{config['vllm_server_port']}"
    assert url.startswith(base)  # the server the trainer talks to
    paths = []

    class Health(BaseHTTPRequestHandler):
        def do_GET(self):
            paths.append(self.path)
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Health)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        VLLMClient.check_server(SimpleNamespace(base_url=f"http://127.0.0.1:{server.server_port}"), total_timeout=0)
    finally:
        server.shutdown()
        server.server_close()
    assert paths == [url.removeprefix(base)]


def test_every_variable_the_deployments_set_is_one_its_program_reads():
    """A renamed variable breaks this test, not a deployment: negotiator's own, and LiteLLM's cost-map switch
    that keeps the pods from fetching the map at start."""
    import inspect

    from litellm.litellm_core_utils import get_model_cost_map

    texts = [p.read_text() for p in ROOT.rglob("*") if p.is_file()]
    texts += [(ROOT.parent / "docs" / n).read_text() for n in ("deployments.md", "vllm.md", "training.md")]
    code = "\n".join(p.read_text() for p in (ROOT.parent / "negotiator").rglob("*.py"))
    ours = {m for t in texts for m in re.findall(r"\bNEGOTIATOR_[A-Z_]+\b", t)}
    assert ours and {v for v in ours if f'"{v}"' not in code} == set()
    assert sum("LITELLM_LOCAL_MODEL_COST_MAP" in t for t in texts) >= 2  # the image and the eval Job set it
    assert 'os.getenv("LITELLM_LOCAL_MODEL_COST_MAP"' in inspect.getsource(get_model_cost_map).replace("'", '"')


def test_the_eval_pods_run_as_the_images_user():
    """The Jobs' runAsUser and fsGroup are the uid the image creates: another uid could not write its home
    (the local model's cache) nor, without fsGroup, the runs volume."""
    dockerfile = pytest.importorskip("dockerfile")

    commands = dockerfile.parse_file(str(EVAL / "Dockerfile"))
    (useradd,) = [c.value[0] for c in commands if c.cmd == "RUN" and "useradd" in c.value[0]]
    uid = int(re.search(r"--uid (\d+)", useradd)[1])
    (user,) = [c.value[0] for c in commands if c.cmd == "USER"]
    assert useradd.split()[-1] == user
    for name, doc in _eval_docs().items():
        if doc["kind"] == "Job":
            context = doc["spec"]["template"]["spec"]["securityContext"]
            assert (context["runAsUser"], context["fsGroup"]) == (uid, uid), name


def _restricted_violations(pod: dict) -> list[str]:
    """What the "restricted" Pod Security Standard (kubernetes.io/docs/concepts/security/pod-security-standards)
    refuses in a pod spec: the checks of PodSecurity admission that these manifests could trip."""
    allowed = {
        "configMap",
        "csi",
        "downwardAPI",
        "emptyDir",
        "ephemeral",
        "persistentVolumeClaim",
        "projected",
        "secret",
    }
    ctx = pod.get("securityContext", {})
    out = [f"volume {v['name']}" for v in pod.get("volumes", []) if not set(v) - {"name"} <= allowed]
    out += [k for k in ("hostNetwork", "hostPID", "hostIPC") if pod.get(k)]
    for c in pod["containers"] + pod.get("initContainers", []):
        cc = c.get("securityContext", {})
        if cc.get("allowPrivilegeEscalation") is not False:
            out.append(f"{c['name']}: allowPrivilegeEscalation")
        if "ALL" not in cc.get("capabilities", {}).get("drop", []):
            out.append(f"{c['name']}: capabilities.drop ALL")
        if cc.get("privileged") or set(cc.get("capabilities", {}).get("add", [])) - {"NET_BIND_SERVICE"}:
            out.append(f"{c['name']}: privileged or added capabilities")
        if not cc.get("runAsNonRoot", ctx.get("runAsNonRoot")) or cc.get("runAsUser", ctx.get("runAsUser")) == 0:
            out.append(f"{c['name']}: runAsNonRoot")
        if cc.get("seccompProfile", ctx.get("seccompProfile", {})).get("type") not in ("RuntimeDefault", "Localhost"):
            out.append(f"{c['name']}: seccompProfile")
    return out


def test_the_eval_pods_meet_the_restricted_pod_security_standard():
    """A namespace that enforces "restricted" refused every pod of these Jobs (no runAsNonRoot, seccomp profile,
    allowPrivilegeEscalation: false nor dropped capabilities); they need none of what it forbids."""
    for name, doc in _eval_docs().items():
        if doc["kind"] != "PersistentVolumeClaim":
            pod = doc["spec"]["template"]["spec"] if doc["kind"] == "Job" else doc["spec"]
            assert _restricted_violations(pod) == [], name
    bad = {
        "containers": [{"name": "x", "securityContext": {"privileged": True}}],
        "volumes": [{"name": "h", "hostPath": {}}],
    }
    assert len(_restricted_violations(bad)) == 6  # the check itself sees each rule broken
