"""``kcm completion bash|zsh|fish``: shtab's scripts from kcm's own parsers; bash's completes
commands and flags of kcm and its commands. Without shtab: one line naming the extra."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from kcm.cli import main
from kcm.cli._completion import completion_script


def _complete_bash(script: str, *words: str) -> list[str]:
    """What bash offers after ``kcm WORDS`` (the last word being completed)."""
    line = " ".join(f"'{w}'" for w in words)
    program = (
        f"{script}\nCOMP_WORDS=(kcm {line}); COMP_CWORD={len(words)}; "
        'COMP_LINE="kcm ' + " ".join(words) + '"; COMP_POINT=${#COMP_LINE}; '
        '_shtab_kcm; printf "%s\\n" "${COMPREPLY[@]}"'
    )
    done = subprocess.run(
        ["bash", "-c", program], capture_output=True, text=True, timeout=30, check=True
    )
    return done.stdout.split()


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_bash_completes_commands_and_flags() -> None:
    pytest.importorskip("shtab", reason="the cli extra is not installed")
    script = completion_script("bash")
    assert "completion" in _complete_bash(script, "comp")
    assert "--leader-elect-resource-name" in _complete_bash(script, "--leader-elect-res")
    assert "--insecure-http" in _complete_bash(script, "apiserver", "--insecure")
    assert _complete_bash(script, "completion", "") == ["bash", "zsh", "fish"]


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_zsh_and_fish_scripts_know_the_flags(shell: str) -> None:
    pytest.importorskip("shtab", reason="the cli extra is not installed")
    script = completion_script(shell)
    assert "leader-elect-resource-name" in script
    assert "insecure-http" in script  # kcm apiserver's


def test_without_shtab_it_is_one_line_naming_the_extra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "shtab", None)  # import shtab raises ImportError
    assert main(["completion", "bash"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "kcm: error: kcm completion needs kcm[cli]: pip install 'pykcm[cli]' "
        "(shtab is not installed)"
    ]


def test_an_unknown_shell_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["completion", "tcsh"])
    assert exc.value.code == 2
