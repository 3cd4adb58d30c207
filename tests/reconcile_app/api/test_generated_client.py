"""A client generated from docs/openapi.yaml by openapi-python-client builds without a single
warning, so teams in other languages can trust their generators too (issue 15)."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

from tests.openapi_conformance import SCHEMA_PATH

BIN = Path(sys.executable).parent


def test_a_generated_python_client_builds_without_warnings(tmp_path: Path) -> None:
    # The generator runs ruff over what it writes: from this environment, not the machine's.
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    generated = subprocess.run(  # our own tool, fixed arguments
        [
            str(BIN / "openapi-python-client"),
            "generate",
            "--path",
            str(SCHEMA_PATH),
            "--meta",
            "none",
            "--output-path",
            str(tmp_path / "reconcile_generated"),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    output = generated.stdout + generated.stderr
    assert generated.returncode == 0, output
    warnings = [line for line in output.splitlines() if "warning" in line.lower()]
    assert not warnings, output

    sys.path.insert(0, str(tmp_path))
    try:
        package = importlib.import_module("reconcile_generated")
        commit = importlib.import_module("reconcile_generated.api.effects.effect_commit")
        models = importlib.import_module("reconcile_generated.models")
    finally:
        sys.path.remove(str(tmp_path))
        for name in [name for name in sys.modules if name.startswith("reconcile_generated")]:
            del sys.modules[name]
    assert hasattr(package, "AuthenticatedClient")
    assert callable(commit.sync_detailed)
    assert {"Snapshot", "Effect", "EffectStatusEnum", "Problem"} <= set(dir(models))
