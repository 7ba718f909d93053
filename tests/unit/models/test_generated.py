"""The generated models match the official client's field tables exactly."""

from __future__ import annotations

import importlib
import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import kubernetes
import msgspec
import pytest

from kcm.models._builtin import GENERATED_FROM

ROOT = Path(__file__).resolve().parents[3]

same_client = pytest.mark.skipif(
    kubernetes.__version__ != GENERATED_FROM,
    reason=f"models were generated from kubernetes {GENERATED_FROM}, "
    f"{kubernetes.__version__} is installed",
)


@pytest.fixture(scope="module")
def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "kcm_generate_models", ROOT / "scripts" / "generate_models.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["kcm_generate_models"] = module
    spec.loader.exec_module(module)
    return module


@same_client
def test_wire_names_match_attribute_map(generator: ModuleType) -> None:
    models = generator.load_models()
    home = generator.assign_modules(models, generator.parse_apis())
    checked = 0
    for cls_name, module_name in home.items():
        module = importlib.import_module(f"kcm.models.{module_name}")
        ours = getattr(module, generator.split_name(cls_name)[2])
        if not isinstance(ours, type):  # XxxList aliases of ObjectList[Xxx]
            continue
        names = {f.encode_name for f in msgspec.structs.fields(ours)}
        if ours.__struct_config__.tag_field:
            names.add("kind")
        assert names == set(models[cls_name].attribute_map.values()), cls_name
        checked += 1
    assert checked > 700


def test_import_is_lazy() -> None:
    code = (
        "import sys, kcm.models as m; "
        "assert 'kcm.models.core_v1' not in sys.modules; "
        "m.Pod; assert 'kcm.models.core_v1' in sys.modules; "
        "assert 'kcm.models.resource_v1beta2' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@same_client
def test_checked_in_models_are_up_to_date() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "generate_models.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "up to date" in done.stdout


def test_generated_files_open_with_the_banner(generator: ModuleType) -> None:
    models = ROOT / "kcm" / "models"
    generated = [*models.glob("*_v*.py"), models / "_builtin.py", models / "__init__.py"]
    assert len(generated) > 30
    for path in generated:
        first = path.read_text(encoding="utf-8").split("\n", 1)[0] + "\n"
        assert first == generator.BANNER, path.name
