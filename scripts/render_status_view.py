"""Render the front page's picture of ``kcm``'s status view from a real run.

``python scripts/render_status_view.py [docs/images/kcm-status.svg]`` starts ``kcm`` in
embedded mode (a fresh $HOME) in a tmux terminal (a real TTY, so the live view is on),
creates a Deployment, a Job, a CronJob and a Service with kubectl, waits for the controllers
to act, captures the terminal with its colours (``tmux capture-pane -e``) and writes the
status view as SVG through rich (``Console(record=True).save_svg``). Needs tmux and kubectl;
not run in CI.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.text import Text

SESSION = "kcm-status-view"
WIDTH, HEIGHT = 100, 60


def _capture(home: Path) -> str:
    """Run kcm with ``home`` as $HOME, so its state goes where a user's would."""
    kcm = (
        f"env -u XDG_DATA_HOME HOME={home} {sys.executable} -m kcm --secure-port=0 --status-view=on"
    )
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", SESSION, "-x", str(WIDTH), "-y", str(HEIGHT), kcm],
        check=True,
    )
    try:
        kubeconfig = home / ".local" / "share" / "kcm" / "kubeconfig"
        deadline = time.monotonic() + 30
        while not kubeconfig.exists():
            if time.monotonic() > deadline:
                raise TimeoutError("kcm wrote no kubeconfig")
            time.sleep(0.2)
        env = {**os.environ, "KUBECONFIG": str(kubeconfig)}
        for command in (
            "create deployment web --image=nginx --replicas=3",
            "create job pi --image=perl -- perl -e 1",
            "create cronjob tick --image=busybox --schedule=*/1_*_*_*_* -- date",
            "expose deployment web --port 80",
        ):
            args = [arg.replace("_", " ") for arg in command.split()]
            subprocess.run(["kubectl", *args], env=env, check=True, capture_output=True)
        time.sleep(12)  # the controllers act; the view redraws every second
        return subprocess.run(
            ["tmux", "capture-pane", "-e", "-p", "-t", SESSION],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    finally:
        subprocess.run(["tmux", "kill-session", "-t", SESSION], check=False)


def status_view(screen: str) -> str:
    """The live view: the screen from its header line (``kcm https://...``) down, without the
    log lines above it and the blank rows below it."""
    lines = screen.splitlines()
    plain = [Text.from_ansi(line).plain for line in lines]
    start = max(i for i, line in enumerate(plain) if line.startswith("kcm http"))
    end = max(i for i, line in enumerate(plain) if line.strip()) + 1
    return "\n".join(lines[start:end])


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/images/kcm-status.svg")
    with tempfile.TemporaryDirectory(prefix="kcm-shot-") as tmp:
        screen = _capture(Path(tmp)).replace(tmp, "~")  # as the user's own home would show
    with open(os.devnull, "w") as sink:
        console = Console(record=True, width=WIDTH, force_terminal=True, file=sink)
        console.print(Text.from_ansi(status_view(screen)))
    console.save_svg(str(out), title="kcm")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
