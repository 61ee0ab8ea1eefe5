"""The distribution as pip sees it: its name on PyPI, its extras, the `negotiator` command and import."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    """A wheel built from a copy of the checkout (the build leaves nothing in the work tree)."""
    src = tmp_path_factory.mktemp("src")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, src / name)
    for package in ("negotiator", "evals", "train"):
        shutil.copytree(ROOT / package, src / package, ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path_factory.mktemp("dist")
    r = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", str(src), "-w", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    (path,) = out.glob("*.whl")
    return zipfile.ZipFile(path)


def _read(wheel: zipfile.ZipFile, suffix: str) -> str:
    (name,) = [n for n in wheel.namelist() if n.endswith(suffix)]
    return wheel.read(name).decode()


def test_the_distribution_is_negotiator_sdk_and_never_depends_on_the_unrelated_negotiator(wheel):
    meta = Parser().parsestr(_read(wheel, ".dist-info/METADATA"))
    assert meta["Name"] == "negotiator-sdk" and Path(wheel.filename).name.startswith("negotiator_sdk-")
    requires = meta.get_all("Requires-Dist")
    # "negotiator" on PyPI is another project: an extra that names it would install that instead.
    names = {r.split(";")[0].split("[")[0].split("=")[0].split(">")[0].split("<")[0].strip().lower() for r in requires}
    assert "negotiator" not in names
    self_refs = sorted(r for r in requires if r.startswith("negotiator-sdk"))
    assert self_refs == [
        'negotiator-sdk[evals,postgres,serve,train]; extra == "dev"',
        'negotiator-sdk[evals]; extra == "local"',  # issue 30: the README's install (.[local]) has the report's plots
        'negotiator-sdk[local]; extra == "train"',
    ]
    evals = sorted(r for r in requires if r.endswith('extra == "evals"'))
    assert any(r.startswith("matplotlib") for r in evals)
    assert set(meta.get_all("Provides-Extra")) >= {"local", "train", "evals", "serve", "postgres", "vllm", "dev"}
    # torch only in the local extra (and through it, train): the base install is torch-free
    torch = [r for r in requires if r.startswith("torch")]
    assert torch == ['torch==2.13.0; extra == "local"']


def test_the_command_and_the_import_stay_negotiator(wheel):
    entry_points = _read(wheel, ".dist-info/entry_points.txt")
    assert "[console_scripts]\nnegotiator = negotiator.cli:main" in entry_points
    top = {n.split("/")[0] for n in wheel.namelist() if not n.split("/")[0].endswith(".dist-info")}
    assert top == {"negotiator", "evals", "train"}


@pytest.mark.parametrize("name", ["gemma-3-270m-reader", "gemma-3-270m-seller"])
def test_the_wheel_ships_the_trained_sellers_with_their_manifests(wheel, name):
    folder = f"negotiator/models/local/shipped/{name}/"
    shipped = {n.removeprefix(folder) for n in wheel.namelist() if n.startswith(folder)}
    assert shipped >= {"adapter_config.json", "adapter_model.safetensors", "manifest.json", "config.json", "README.md"}
    assert (
        wheel.getinfo(folder + "adapter_model.safetensors").file_size
        == (ROOT / folder / "adapter_model.safetensors").stat().st_size
    )


def test_the_license_text_travels_in_the_wheel_and_the_sdist(wheel, tmp_path):
    """pyproject says Apache-2.0; the text itself must ship with the code for anyone to use it."""
    text = (ROOT / "LICENSE").read_text()
    assert text.lstrip().startswith("Apache License") and "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text
    assert _read(wheel, ".dist-info/licenses/LICENSE") == text
    meta = Parser().parsestr(_read(wheel, ".dist-info/METADATA"))
    assert meta["License-Expression"] == "Apache-2.0" and meta["License-File"] == "LICENSE"
    # The sdist, built by the same backend pip uses, from a copy of the wheel's sources.
    src = next(p for p in Path(wheel.filename).parents[1].iterdir() if (p / "pyproject.toml").exists())
    r = subprocess.run(
        [sys.executable, "-c", f"from setuptools import build_meta; print(build_meta.build_sdist({str(tmp_path)!r}))"],
        cwd=src,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    import tarfile

    with tarfile.open(tmp_path / r.stdout.strip().splitlines()[-1]) as sdist:
        (name,) = [n for n in sdist.getnames() if n.count("/") == 1 and n.endswith("/LICENSE")]
        assert sdist.extractfile(name).read().decode() == text
