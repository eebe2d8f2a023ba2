"""deploy/kubernetes: every object against the Kubernetes schemas (kubernetes-validate, which
carries them: no cluster, no network), the containers against tracemill's own start-up
checks, the probes against real `tracemill serve` processes configured as the manifests
configure them, and the generation CronJob starting a real run in a real service."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import signal
import ssl
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import kubernetes_validate  # type: ignore[import-untyped]
import pytest

from tests.deploy._files import (
    IMAGE_HELPERS,
    KUBERNETES,
    TRIGGER,
    container_env,
    helper,
    kubernetes_objects,
    long_flags,
    pod_spec,
    run,
    serving,
    tls_files,
    tracemill_containers,
    with_free_ports,
)
from tests.support.pipeline import processed_production_store
from tracemill.api import check_api_exposure
from tracemill.cli import build_parser
from tracemill.config import Settings, is_loopback, load_settings, split_address

#: The oldest release the files are written for (native sidecars, CronJob timeZone and
#: podFailurePolicy are all on by default there) and the newest schemas the package has.
VERSIONS = ["1.31", kubernetes_validate.utils.latest_version()]
KUBELET_PROBES = ("startupProbe", "readinessProbe", "livenessProbe")


def _objects() -> list[tuple[Path, dict[str, Any]]]:
    return kubernetes_objects()


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize(("path", "obj"), _objects(),
                         ids=lambda v: v.name if isinstance(v, Path) else v["kind"])
def test_objects_match_the_kubernetes_schemas(path: Path, obj: dict[str, Any],
                                              version: str) -> None:
    try:
        kubernetes_validate.validate(obj, version, strict=True)
    except kubernetes_validate.ValidationError as exc:
        where = ".".join(str(part) for part in exc.path)
        pytest.fail(f"{path.name} {obj['kind']}/{obj['metadata']['name']} against "
                    f"{version}: {where}: {exc.message}")
    except kubernetes_validate.utils.SchemaNotFoundError as exc:
        pytest.fail(exc.message)


def test_the_validator_is_strict() -> None:
    # a misspelt field fails, so the test above can fail
    obj = next(o for p, o in _objects() if p.name == "sidecar.yaml")
    container = pod_spec(obj)["initContainers"][0]  # type: ignore[index]
    container["livenessProbe"]["periodSecond"] = 20
    with pytest.raises(kubernetes_validate.ValidationError, match="periodSecond"):
        kubernetes_validate.validate(obj, VERSIONS[0], strict=True)


def test_validation_needs_no_network() -> None:
    unshare = shutil.which("unshare")
    cli = Path(sys.executable).parent / "kubernetes-validate"
    if unshare is None or subprocess.run([unshare, "-rn", "true"], capture_output=True,
                                         check=False).returncode != 0:
        pytest.skip("cannot make a network namespace here (unshare -rn) to prove it offline")
    no_network = subprocess.run(
        [unshare, "-rn", sys.executable, "-c",
         "import socket; socket.create_connection(('pypi.org', 443), timeout=3)"],
        capture_output=True, text=True, check=False)
    assert no_network.returncode != 0, "the namespace still reaches the internet"
    files = [str(p) for p in sorted(KUBERNETES.glob("*.yaml"))]
    result = subprocess.run([unshare, "-rn", str(cli), "--strict", "-k", VERSIONS[0], *files],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("passed for resource") == len(_objects()), result.stdout


def _serve_containers() -> list[tuple[str, dict[str, Any]]]:
    return [(where, c) for where, c in tracemill_containers() if "command" not in c]


def test_tracemill_containers_pass_tracemill_start_up_checks() -> None:
    from collector.server import check_exposure

    containers = _serve_containers()
    assert len(containers) >= 2
    for where, container in containers:
        args = container["args"]
        parsed = build_parser().parse_args(args)  # exits on an unknown option
        flags = {k: v for k, v in vars(parsed).items() if v is not None}
        settings = load_settings({k: v for k, v in flags.items() if k in Settings.model_fields},
                                 container_env(container))
        check_exposure(settings)       # beyond loopback only with a token or TLS
        check_api_exposure(settings)   # admin API beyond loopback only with its token
        assert str(settings.db).startswith(container["volumeMounts"][0]["mountPath"]), where
        help_text = run(helper(["tracemill", args[0], "--help"])).stdout
        for flag in long_flags(args):
            assert flag in help_text, f"{where}: {flag} is not a `tracemill {args[0]}` option"


def test_helper_containers_use_options_the_helpers_have() -> None:
    helpers = [(w, c) for w, c in tracemill_containers() if "command" in c]
    assert helpers
    for where, container in helpers:
        assert container["command"][0] in IMAGE_HELPERS, where
        shown = run(helper([*container["command"], "--help"])).stdout
        for flag in long_flags(container.get("args", [])):
            assert flag in shown, f"{where}: {flag} is not an option of {container['command']}"


def test_probes_can_reach_the_container() -> None:
    for where, container in _serve_containers():
        env = container_env(container)
        host, port = split_address(env["TRACEMILL_HTTP_ADDRESS"])
        ports = {p["name"]: p["containerPort"] for p in container.get("ports", [])}
        probes = [container[name] for name in KUBELET_PROBES if name in container]
        assert "livenessProbe" in container, f"{where}: nothing restarts a hung collector"
        for probe in probes:
            if "exec" in probe:
                assert probe["exec"]["command"][0] in IMAGE_HELPERS, where
                continue
            # the kubelet dials the pod's IP: something must listen there
            assert not is_loopback(host), f"{where}: network probe to a loopback listener"
            check = probe.get("httpGet") or probe["tcpSocket"]
            assert "host" not in check, f"{where}: a probe host bypasses the pod IP"
            assert ports.get(check["port"], check["port"]) == port, where
            if "httpGet" in probe:
                assert check["path"] in ("/healthz", "/readyz"), where
                tls = bool(env.get("TRACEMILL_TLS_CERT"))
                assert check.get("scheme", "HTTP") == ("HTTPS" if tls else "HTTP"), where


def _container(file: str, name: str) -> dict[str, Any]:
    return next(c for where, c in tracemill_containers()
                if where.startswith(file) and where.endswith("/" + name))


@pytest.mark.integration
def test_sidecar_exec_probes_pass_against_a_real_collector(tmp_path: Path) -> None:
    container = _container("sidecar.yaml", "tracemill")
    env = with_free_ports(container_env(container))
    env["TRACEMILL_DB"] = str(tmp_path / "tracemill.duckdb")
    probes = [container[name]["exec"]["command"] for name in KUBELET_PROBES
              if name in container]
    assert probes
    with serving(["tracemill", *container["args"]], env, tmp_path) as server:
        assert is_loopback(split_address(server.http)[0])
        for command in probes:
            answer = run(helper(command), {**env, "TRACEMILL_HTTP_ADDRESS": server.http})
            assert answer.returncode == 0, (command, answer.stderr)


@pytest.mark.integration
def test_standalone_https_probes_answer_without_a_token(tmp_path: Path) -> None:
    container = _container("standalone.yaml", "tracemill")
    env = with_free_ports(container_env(container))
    chain, key, _ = tls_files(tmp_path / "tls", "tracemill")
    env.update(TRACEMILL_TLS_CERT=str(chain), TRACEMILL_TLS_KEY=str(key),
               TRACEMILL_DB=str(tmp_path / "tracemill.duckdb"), TRACEMILL_AGENT="offline")
    with serving(["tracemill", *container["args"]], env, tmp_path) as server:
        port = split_address(server.http)[1]
        kubelet = ssl.create_default_context()
        kubelet.check_hostname = False
        kubelet.verify_mode = ssl.CERT_NONE  # as the kubelet: HTTPS without verification
        for name in KUBELET_PROBES:
            probe = container[name]["httpGet"]
            answer = httpx.get(f"https://127.0.0.1:{port}{probe['path']}", verify=kubelet,
                               timeout=10)
            assert answer.status_code == 200, (name, answer.text)
        # what needs the token still does
        assert httpx.get(f"https://127.0.0.1:{port}/stats", verify=kubelet,
                         timeout=10).status_code == 401


def test_secrets_are_referenced_never_written() -> None:
    # the `kubectl create secret` commands in the files' comments, one logical line each
    comments = "\n".join(line.lstrip("# ") for path in KUBERNETES.glob("*.yaml")
                         for line in path.read_text().splitlines() if line.startswith("#"))
    created = comments.replace("\\\n", " ")
    for path, obj in _objects():
        assert obj["kind"] != "Secret", f"{path.name} writes a Secret; reference one"
        spec = pod_spec(obj)
        if spec is None:
            continue
        for container in [*spec.get("initContainers", []), *spec.get("containers", [])]:
            for item in container.get("env", []):
                ref = item.get("valueFrom", {}).get("secretKeyRef")
                if ref:
                    assert re.search(rf"create secret generic {ref['name']} [^\n]*"
                                     rf"--from-literal={ref['key']}=", created), ref
            for source in container.get("envFrom", []):
                name = source["secretRef"]["name"]
                assert f"create secret generic {name}" in created, name
        for volume in spec.get("volumes", []):
            if "secret" in volume:
                assert f"create secret tls {volume['secret']['secretName']}" in created


@pytest.fixture(scope="module")
def processed_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return processed_production_store(tmp_path_factory.mktemp("cron") / "tracemill.duckdb",
                                      seed=11)


@pytest.mark.integration
@pytest.mark.slow
def test_generation_cronjob_starts_a_run_in_the_running_service(
        processed_store: Path, tmp_path: Path) -> None:
    cronjob = next(o for _, o in _objects() if o["kind"] == "CronJob")
    trigger = pod_spec(cronjob)["containers"][0]  # type: ignore[index]
    labels = cronjob["spec"]["jobTemplate"]["spec"]["template"]["metadata"]["labels"]
    service = next(o for _, o in _objects() if o["kind"] == "Service")
    policy = next(o for _, o in _objects() if o["kind"] == "NetworkPolicy")
    deployment = _container("standalone.yaml", "tracemill")

    # the CronJob reaches the Deployment's admin API through the Service and the policy
    cron_env = container_env(trigger)
    host, port = split_address(cron_env["TRACEMILL_API_ADDRESS"])
    admin = next(p for p in service["spec"]["ports"] if p["port"] == port)
    assert host == service["metadata"]["name"]
    assert split_address(container_env(deployment)["TRACEMILL_API_ADDRESS"])[1] == port
    assert admin["targetPort"] in {p["name"] for p in deployment["ports"]}
    allowed = [rule for rule in policy["spec"]["ingress"]
               if {p["port"] for p in rule["ports"]} == {port}]
    assert allowed and all(labels.get(k) == v for rule in allowed for peer in rule["from"]
                           for k, v in peer["podSelector"]["matchLabels"].items())
    assert cron_env["TRACEMILL_ADMIN_TOKEN"] == container_env(deployment)[
        "TRACEMILL_ADMIN_TOKEN"]  # the same secret key

    db = tmp_path / "tracemill.duckdb"
    shutil.copy(processed_store, db)
    env = with_free_ports(container_env(deployment))
    chain, key, _ = tls_files(tmp_path / "tls", "tracemill")
    env.update(TRACEMILL_TLS_CERT=str(chain), TRACEMILL_TLS_KEY=str(key),
               TRACEMILL_DB=str(db), TRACEMILL_AGENT="offline")
    with serving(["tracemill", *deployment["args"]], env, tmp_path) as server:
        job_env = {**cron_env, "TRACEMILL_API_ADDRESS": server.api}
        command = helper([*trigger["command"], "--budget", "6", "--poll", "0.2"])
        done = run(command, job_env, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "started job" in done.stdout and "finished" in done.stdout, done.stdout
        runs = httpx.get(f"http://{server.api}/api/v1/runs", timeout=30, headers={
            "authorization": f"Bearer {env['TRACEMILL_ADMIN_TOKEN']}"}).json()
        assert len(runs) == 1, runs

        wrong = run(command, {**job_env, "TRACEMILL_ADMIN_TOKEN": "not-it"})
        assert wrong.returncode == 3 and "refused the admin token" in wrong.stderr

        # while a run is under way a second trigger starts nothing and says so (exit 3,
        # which the CronJob's podFailurePolicy retries)
        long = run(helper([*trigger["command"], "--budget", "300", "--no-wait"]), job_env)
        assert long.returncode == 0, long.stderr
        job_id = re.search(r"started job (\S+)", long.stdout).group(1)  # type: ignore[union-attr]
        headers = {"authorization": f"Bearer {env['TRACEMILL_ADMIN_TOKEN']}"}
        state = ""
        for _ in range(200):
            state = httpx.get(f"http://{server.api}/api/v1/jobs/{job_id}", headers=headers,
                              timeout=30).json()["state"]
            if state != "queued":
                break
            time.sleep(0.05)
        assert state == "running", state
        busy = run(command, job_env)
        assert busy.returncode == 3 and "not started" in busy.stderr, busy.stderr
    gone = run(command, job_env)
    assert gone.returncode == 3 and "did not answer" in gone.stderr, gone.stderr
    assert "Traceback" not in gone.stderr + wrong.stderr


def _trigger_module() -> Any:
    spec = importlib.util.spec_from_file_location("trigger_generation", TRIGGER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_cronjob_retries_only_a_trigger_that_started_nothing() -> None:
    """A retry POSTs /runs again: after a run was started that is a second run, the
    budget spent twice. Only 'nothing was started' may be retried."""
    trigger = _trigger_module()
    cronjob = next(o for _, o in _objects() if o["kind"] == "CronJob")
    job = cronjob["spec"]["jobTemplate"]["spec"]
    assert job["backoffLimit"] > 0
    (rule,) = job["podFailurePolicy"]["rules"]
    assert rule["action"] == "FailJob" and rule["onExitCodes"]["operator"] == "In"
    assert rule["onExitCodes"]["containerName"] == pod_spec(cronjob)["containers"][0]["name"]  # type: ignore[index]
    assert set(rule["onExitCodes"]["values"]) == {
        trigger.EXIT_FAILED, trigger.EXIT_USAGE, trigger.EXIT_LOST_CONTACT}
    assert trigger.EXIT_UNAVAILABLE not in rule["onExitCodes"]["values"]
    assert len({trigger.EXIT_FAILED, trigger.EXIT_USAGE, trigger.EXIT_UNAVAILABLE,
                trigger.EXIT_LOST_CONTACT}) == 4
    # the header table of the trigger lists every code
    for code in (0, 1, 2, 3, 4):
        assert re.search(rf"^{code}   \S", trigger.__doc__, re.M), code


@pytest.mark.integration
@pytest.mark.slow
def test_a_trigger_that_loses_the_service_after_starting_a_run_does_not_start_another(
        processed_store: Path, tmp_path: Path) -> None:
    cronjob = next(o for _, o in _objects() if o["kind"] == "CronJob")
    trigger = pod_spec(cronjob)["containers"][0]  # type: ignore[index]
    deployment = _container("standalone.yaml", "tracemill")
    fail_job = set(cronjob["spec"]["jobTemplate"]["spec"]["podFailurePolicy"]["rules"][0]
                   ["onExitCodes"]["values"])
    db = tmp_path / "tracemill.duckdb"
    shutil.copy(processed_store, db)
    env = with_free_ports(container_env(deployment))
    chain, key, _ = tls_files(tmp_path / "tls", "tracemill")
    env.update(TRACEMILL_TLS_CERT=str(chain), TRACEMILL_TLS_KEY=str(key),
               TRACEMILL_DB=str(db), TRACEMILL_AGENT="offline", TRACEMILL_CONCURRENCY="1")
    headers = {"authorization": f"Bearer {env['TRACEMILL_ADMIN_TOKEN']}"}
    clean = {k: v for k, v in os.environ.items() if not k.startswith("TRACEMILL_")}
    with serving(["tracemill", *deployment["args"]], env, tmp_path) as server:
        api = f"http://{server.api}/api/v1"
        follower = subprocess.Popen(
            helper([*trigger["command"], "--budget", "30000", "--poll", "0.2",
                    "--timeout", "1"]),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**clean, **container_env(trigger), "TRACEMILL_API_ADDRESS": server.api})
        assert follower.stdout is not None
        started = follower.stdout.readline()
        job_id = re.search(r"started job (\S+)", started).group(1)  # type: ignore[union-attr]
        deadline = time.monotonic() + 60
        while httpx.get(f"{api}/jobs/{job_id}", headers=headers,
                        timeout=30).json()["run_id"] is None:  # planned and recorded
            assert time.monotonic() < deadline, "the run did not start"
            time.sleep(0.05)
        os.kill(server.process.pid, signal.SIGSTOP)  # the API stops answering
        try:
            out, err = follower.communicate(timeout=60)
        finally:
            os.kill(server.process.pid, signal.SIGCONT)
        assert follower.returncode == 4, out + err
        assert follower.returncode in fail_job  # the Job fails at once: no second POST
        assert "Traceback" not in err and "Not retrying" in err and job_id in err, err
        # the run goes on in the service: one job, one run
        jobs = httpx.get(f"{api}/status", headers=headers, timeout=30).json()["jobs"]
        assert [(j["job_id"], j["state"]) for j in jobs] == [(job_id, "running")]
        stopped = httpx.post(f"{api}/jobs/{job_id}/stop", headers=headers, timeout=30)
        assert stopped.status_code == 200, stopped.text
        deadline = time.monotonic() + 60
        while (job := httpx.get(f"{api}/jobs/{job_id}", headers=headers,
                                timeout=30).json())["state"] != "stopped":
            assert time.monotonic() < deadline, job
            time.sleep(0.1)
        runs = httpx.get(f"{api}/runs", headers=headers, timeout=30).json()
        assert [(r["run_id"], r["stop_reason"]) for r in runs] == [(job["run_id"],
                                                                    "interrupted")]
