import pytest

from kcm.cli import main


def test_kcm_without_a_command_prints_help_listing_its_commands(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: kcm")
    assert "apiserver" in out


def test_unknown_command_fails_with_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["no-such-command"])
    assert exc.value.code == 2
    assert "invalid choice: 'no-such-command'" in capsys.readouterr().err
