from kcm.cli import main


def test_help_exits_zero(capsys: object) -> None:
    assert main([]) == 0
