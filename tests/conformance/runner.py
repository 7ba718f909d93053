"""Run a scenario against one API server (the real kube-apiserver or the embedded one) and
return its normalised outcomes.

Blocking on purpose (httpx's sync client and ``subprocess``): the recorder runs it against a
real server from a script, and the tests run it against an embedded server served from a
background thread (``tests/apiserver/conftest.py``'s pattern), so both sides take exactly the
same code path.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from .normalise import Normaliser, keep_paths
from .scenario import PRESENT, Http, Kubectl, Scenario, Sleep, Step, WaitFor, Watch

__all__ = ["Target", "run_scenario"]

_PATCH_TYPES = {
    "merge": "application/merge-patch+json",
    "json": "application/json-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "apply": "application/apply-patch+yaml",
}


ADMIN_TOKEN = "admintoken"
"""real-kube's administrator token (its token file: ``admintoken,admin,admin,system:masters``)."""


def embedded_server(directory: Path) -> Any:
    """The embedded server, authenticating as the recording's real one does: real-kube's token
    file in ``directory``, over TLS (kubectl sends no bearer token over plain HTTP)."""
    from kcm.apiserver import ApiServer

    tokens = directory / "tokens.csv"
    tokens.write_text(f"{ADMIN_TOKEN},admin,admin,system:masters\n")
    return ApiServer(token_auth_file=tokens, tls=True)


def write_embedded_kubeconfig(server: Any, path: Path) -> Path:
    """The embedded server's kubeconfig with the administrator's token (kubectl steps)."""
    import yaml

    config = server.kubeconfig()
    config["users"][0]["user"] = {"token": ADMIN_TOKEN}
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


@dataclass(frozen=True)
class Target:
    """Where to send a scenario: the server's URL, how to authenticate, and a kubeconfig for
    kubectl steps."""

    url: str
    kubeconfig: Path
    token: str | None = None

    def client(self) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        return httpx.Client(base_url=self.url, headers=headers, verify=False, timeout=30.0)


def _substitute(value: Any, variables: dict[str, str]) -> Any:
    if isinstance(value, str):
        return re.sub(
            r"\$(\$|[A-Za-z_][A-Za-z0-9_]*)",
            lambda m: "$" if m.group(1) == "$" else variables.get(m.group(1), m.group(0)),
            value,
        )
    if isinstance(value, dict):
        return {_substitute(k, variables): _substitute(v, variables) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_substitute(v, variables) for v in value]
    return value


def _lookup(body: Any, path: str) -> Any:
    for part in path.split("."):
        if isinstance(body, list) and part.startswith("[") and part.endswith("]"):
            key, _, want = part[1:-1].partition("=")
            body = next((i for i in body if isinstance(i, dict) and str(i.get(key)) == want), None)
        elif isinstance(body, list) and part.isdigit():
            body = body[int(part)]
        elif isinstance(body, dict):
            body = body.get(part)
        else:
            return None
    return body


def _decode(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return response.text


def _setup_namespace(client: httpx.Client, ns: str) -> None:
    client.post("/api/v1/namespaces", json={"metadata": {"name": ns}})
    client.post(f"/api/v1/namespaces/{ns}/serviceaccounts", json={"metadata": {"name": "default"}})


def _http(client: httpx.Client, step: Http, variables: dict[str, str]) -> tuple[Any, Any]:
    path = _substitute(step.path, variables)
    query = _substitute(step.query or {}, variables)
    headers = dict(_substitute(step.headers or {}, variables))
    content: bytes | None = None
    if step.body is not None:
        body = _substitute(step.body, variables)
        content = (
            body.encode()
            if isinstance(body, str)
            else (body if isinstance(body, bytes) else json.dumps(body).encode())
        )
        ctype = step.content_type or "application/json"
        headers["Content-Type"] = _PATCH_TYPES.get(ctype, ctype)
    response = client.request(step.method, path, params=query, content=content, headers=headers)
    body_out = _decode(response)
    for name, where in (step.save or {}).items():
        value = _lookup(body_out, where)
        if value is not None:
            variables[name] = str(value)
    outcome = {
        "code": response.status_code,
        "reason_phrase": response.reason_phrase,
        "body": keep_paths(body_out, step.keep),
        "warnings": response.headers.get_list("warning"),
    }
    if step.response_headers:
        outcome["headers"] = {name: response.headers.get(name) for name in step.response_headers}
    return outcome, body_out


def _watch(client: httpx.Client, step: Watch, variables: dict[str, str]) -> dict[str, Any]:
    path = _substitute(step.path, variables)
    query = _substitute(step.query, variables)
    events: list[Any] = []
    closed = False
    deadline = time.monotonic() + step.timeout
    timeout = httpx.Timeout(30.0, read=step.timeout)
    headers = dict(_substitute(step.headers or {}, variables))
    with client.stream("GET", path, params=query, headers=headers, timeout=timeout) as response:
        code = response.status_code
        seen = {name: response.headers.get(name) for name in step.response_headers}
        if code != 200:
            response.read()
            failed = {"code": code, "body": keep_paths(_decode(response), None)}
            return {**failed, "headers": seen} if step.response_headers else failed
        during = [_http(client, request, variables)[0] for request in step.during]
        try:
            for line in response.iter_lines():
                if line.strip():
                    event = json.loads(line)
                    obj = event.get("object")
                    events.append({"type": event.get("type"), "object": keep_paths(obj, step.keep)})
                if len(events) >= step.events or time.monotonic() > deadline:
                    break
            else:
                closed = True
        except httpx.ReadTimeout:
            pass
    outcome: dict[str, Any] = {"code": code}
    if step.response_headers:
        outcome["headers"] = seen
    if step.during:
        outcome["during"] = during
    outcome["events"] = events
    if step.closed:
        outcome["closed"] = closed
    return outcome


def _kubectl(target: Target, step: Kubectl, variables: dict[str, str]) -> dict[str, Any]:
    kubectl = shutil.which("kubectl")
    assert kubectl is not None
    args = [str(a) for a in _substitute(list(step.args), variables)]
    stdin = _substitute(step.stdin, variables) if step.stdin is not None else None
    done = subprocess.run(
        [kubectl, f"--kubeconfig={target.kubeconfig}", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    try:
        stdout: Any = keep_paths(json.loads(done.stdout), step.keep)
    except ValueError:
        stdout = done.stdout
    stderr = done.stderr.strip().splitlines()
    return {"exit": done.returncode, "stdout": stdout, "stderr": stderr[0] if stderr else ""}


def _wait_for(client: httpx.Client, step: WaitFor, variables: dict[str, str]) -> dict[str, Any]:
    path = _substitute(step.path, variables)
    deadline = time.monotonic() + step.timeout
    reached = False
    while not reached:
        response = client.get(path)
        value = _lookup(_decode(response), step.field) if step.field else None
        reached = response.status_code == step.code and (
            step.field is None
            or (value is not None if step.equals == PRESENT else value == step.equals)
        )
        if reached or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    condition = f" {step.field}={step.equals!r}" if step.field else ""
    return {"wait_for": f"{step.path} {step.code}{condition}", "reached": reached}


def _run_step(target: Target, client: httpx.Client, step: Step, variables: dict[str, str]) -> Any:
    if isinstance(step, Http):
        return _http(client, step, variables)[0]
    if isinstance(step, Watch):
        return _watch(client, step, variables)
    if isinstance(step, WaitFor):
        return _wait_for(client, step, variables)
    if isinstance(step, Sleep):
        time.sleep(step.seconds)
        return {"sleep": step.seconds}
    return _kubectl(target, step, variables)


def _learn_generated_name(normalise: Normaliser, step: Step, outcome: Any) -> None:
    """A create with ``generateName`` that fails names the generated name only in the Status's
    details (and message): teach the normaliser that name."""
    if not isinstance(step, Http) or not isinstance(step.body, dict):
        return
    meta = step.body.get("metadata")
    generate_name = meta.get("generateName") if isinstance(meta, dict) else None
    body = outcome.get("body")
    if isinstance(generate_name, str) and isinstance(body, dict) and body.get("kind") == "Status":
        name = (body.get("details") or {}).get("name")
        if isinstance(name, str):
            normalise.learn_generated_name(generate_name, name)


def _run_and_normalise(
    target: Target,
    client: httpx.Client,
    step: Step,
    variables: dict[str, str],
    normalise: Normaliser,
) -> Any:
    outcome = _run_step(target, client, step, variables)
    _learn_generated_name(normalise, step, outcome)
    return normalise(outcome)


def run_scenario(target: Target, scenario: Scenario) -> list[Any]:
    """Run every step of ``scenario`` against ``target``; the normalised outcomes, one per
    step."""
    normalise = Normaliser()
    variables: dict[str, str] = {}
    with target.client() as client:
        if scenario.namespace:
            variables["ns"] = scenario.ns
            _setup_namespace(client, scenario.ns)
        return [
            _run_and_normalise(target, client, step, variables, normalise)
            for step in scenario.steps
        ]
