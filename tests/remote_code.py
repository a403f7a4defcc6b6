"""Run Python in a subprocess where `textrec` cannot be imported, as on a machine without it.

Used to prove that saved folders load with `trust_remote_code=True` from their own copied code.
"""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

_BLOCK_TEXTREC = """
import importlib.abc, sys
class _NoTextrec(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "textrec" or name.startswith("textrec."):
            raise ModuleNotFoundError(f"No module named {name!r} (blocked by the test)")
        return None
sys.meta_path.insert(0, _NoTextrec())
"""


def run_without_textrec(code: str, workdir: Path, timeout: float = 300) -> str:
    """Runs `code` with textrec blocked, offline, in `workdir`; returns stdout, fails on error."""
    env = dict(os.environ)
    env.update(
        HF_HUB_OFFLINE="1",
        HF_MODULES_CACHE=str(workdir / "hf_modules"),
        PYTHONPATH="",
    )
    script = _BLOCK_TEXTREC + textwrap.dedent(code)
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=workdir, env=env, capture_output=True, text=True, timeout=timeout
    )
    if result.returncode != 0:
        raise AssertionError(f"subprocess failed:\nSTDOUT:\n{result.stdout}\nSTDERR:\n{result.stderr}")
    return result.stdout
