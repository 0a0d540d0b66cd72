"""TLS in front of the collector: the compose files publish only nginx's TLS listener, and the nginx configs work.

Without a Docker engine the configs run under Debian's nginx (``.ci/run`` installs it): both pass ``nginx -t``
with a certificate made by ``deploy/tls/self-signed.sh``, and the single-node one serves a real collector on
127.0.0.1, reached through TLS by the SDK's transport with that certificate as its CA file. Rendering for a local
run changes only addresses, ports and file paths; every replacement is checked to have happened.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from inferwatch.options import Options
from inferwatch.transport import Transport
from inferwatch_collector.settings import Settings
from inferwatch_server.app import create_app
from tests.helpers.live_collector import ServerThread, free_port
from tests.helpers.payloads import make_request, otel_genai_span

ROOT = Path(__file__).resolve().parents[2]
NGINX_DIR = ROOT / "deploy" / "nginx"
# compose file -> (the service that publishes the collector, its nginx config)
PUBLIC_FILES = {"docker-compose.yml": ("tls", "collector.conf"),
                "docker-compose.cluster.yml": ("lb", "nginx.conf")}
MOUNTS = {"tls.conf": "/etc/nginx/inferwatch/tls.conf", "proxy.conf": "/etc/nginx/inferwatch/proxy.conf"}


def load(name: str) -> dict:
    return yaml.safe_load((ROOT / name).read_text())


def directives(text: str, name: str) -> list[str]:
    return re.findall(rf"^\s*{name}\s+([^;]+);", text, re.M)


# --- static: compose and configs ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name", PUBLIC_FILES)
def test_only_the_tls_listener_and_the_local_dashboard_are_published(name):
    services = load(name)["services"]
    proxy_name, conf_name = PUBLIC_FILES[name]
    published = {service: svc["ports"] for service, svc in services.items() if svc.get("ports")}
    assert published == {proxy_name: ["4318:4318"], "dashboard": ["127.0.0.1:8501:8501"]}
    conf = (NGINX_DIR / conf_name).read_text()
    assert directives(conf, "listen")[0] == "4318 ssl"  # the published port is the TLS one
    volumes = services[proxy_name]["volumes"]
    assert f"./deploy/nginx/{conf_name}:/etc/nginx/nginx.conf:ro" in volumes
    for file, target in MOUNTS.items():
        assert f"./deploy/nginx/{file}:{target}:ro" in volumes and f"include {target};" in conf
    assert "${INFERWATCH_TLS_DIR:-./deploy/tls}:/etc/nginx/tls:ro" in volumes
    collectors = [s for s in services.values() if s.get("command") == ["collector"]]
    assert collectors and not any(s.get("ports") for s in collectors)  # plain HTTP stays in the network


def test_tls_settings_are_modern_and_the_proxy_fits_the_collector():
    tls = (NGINX_DIR / "tls.conf").read_text()
    assert directives(tls, "ssl_protocols") == ["TLSv1.2 TLSv1.3"]
    (ciphers,) = directives(tls, "ssl_ciphers")
    assert all(c.startswith("ECDHE-") and ("GCM" in c or "CHACHA20" in c) for c in ciphers.split(":"))
    assert directives(tls, "ssl_certificate") == ["/etc/nginx/tls/tls.crt"]
    assert directives(tls, "ssl_certificate_key") == ["/etc/nginx/tls/tls.key"]
    assert not re.search(r"Strict-Transport-Security", tls)  # an API for exporters, not browsers

    proxy = (NGINX_DIR / "proxy.conf").read_text()
    exporter_timeout = Options().export_timeout_s  # the SDK's; OTLP exporters default to 10 s too
    for name in ("proxy_read_timeout", "proxy_send_timeout"):
        (value,) = directives(proxy, name)
        assert int(value.rstrip("s")) > exporter_timeout
    # replaced with the peer address, never appended to what the client sent
    assert directives(proxy, "proxy_set_header X-Forwarded-For") == ["$remote_addr"]
    for conf_name in ("collector.conf", "nginx.conf"):
        conf = (NGINX_DIR / conf_name).read_text()
        limits = {int(v.rstrip("m")) * 1024 * 1024 for v in directives(conf, "client_max_body_size")}
        assert limits == {Settings.model_fields["max_body_bytes"].default}
        public = conf.split("listen 4318 ssl;")[1].split("server {")[0]
        assert re.search(r"location = /metrics \{\s*return 404;", public)  # scraped inside the network only


def test_the_certificate_directory_keeps_keys_out_of_git():
    ignore = [line for line in (ROOT / "deploy" / "tls" / ".gitignore").read_text().splitlines()
              if line and not line.startswith("#")]
    assert ignore[0] == "*" and set(ignore[1:]) == {"!.gitignore", "!self-signed.sh"}
    tracked = subprocess.run(["git", "ls-files", "deploy/tls"], cwd=ROOT, capture_output=True, text=True).stdout
    assert not re.search(r"\.(key|crt|pem)$", tracked, re.M)


# --- nginx itself ------------------------------------------------------------------------------------------------
def nginx() -> str:
    path = shutil.which("nginx") or ("/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None)
    if path is None:
        if os.environ.get("INFERWATCH_REQUIRE_NGINX") == "1":
            pytest.fail("nginx is not installed (.ci/run installs Debian's nginx)")
        pytest.skip("nginx is not installed (apt-get install nginx; .ci/run does)")
    return path


@pytest.fixture(scope="module")
def certificate(tmp_path_factory) -> Path:
    """tls.crt + tls.key made by the script the docs tell operators to run."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    directory = tmp_path_factory.mktemp("tls")
    subprocess.run([str(ROOT / "deploy" / "tls" / "self-signed.sh")], check=True, capture_output=True,
                   env={**os.environ, "INFERWATCH_TLS_DIR": str(directory)})
    assert oct((directory / "tls.key").stat().st_mode & 0o777) == "0o600"
    return directory


def replaced(text: str, old: str, new: str) -> str:
    assert old in text, f"rendering for the test: {old!r} not found (the config changed; update the test)"
    return text.replace(old, new)


def render(conf_name: str, work: Path, certificate: Path, upstream: int, public: int, internal: int) -> Path:
    """The config as nginx would run it in compose, with this machine's paths and ports."""
    tls = replaced((NGINX_DIR / "tls.conf").read_text(), "/etc/nginx/tls/", f"{certificate}/")
    (work / "tls.conf").write_text(tls)
    shutil.copy(NGINX_DIR / "proxy.conf", work / "proxy.conf")
    text = (NGINX_DIR / conf_name).read_text()
    for file, target in MOUNTS.items():
        text = replaced(text, target, str(work / file))
    text = re.sub(r"server collector\d?:4318", f"server 127.0.0.1:{upstream}", text)
    assert f"127.0.0.1:{upstream}" in text
    text = replaced(text, "listen 4318 ssl;", f"listen 127.0.0.1:{public} ssl;")
    text = re.sub(r"listen (127\.0\.0\.1:)?8080;", f"listen 127.0.0.1:{internal};", text)
    assert f"127.0.0.1:{internal};" in text
    kinds = ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    temp = "".join(f"    {kind}_temp_path {work}/{kind};\n" for kind in kinds)
    text = replaced(text, "http {\n", "http {\n" + temp)
    path = work / conf_name
    path.write_text(f"pid {work}/nginx.pid;\nerror_log {work}/error.log;\n" + text)
    return path


@pytest.mark.parametrize("conf_name", ["collector.conf", "nginx.conf"])
def test_nginx_accepts_the_config(conf_name, tmp_path, certificate):
    conf = render(conf_name, tmp_path, certificate, free_port(), free_port(), free_port())
    done = subprocess.run([nginx(), "-t", "-p", str(tmp_path), "-e", str(tmp_path / "error.log"), "-c", str(conf)],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr


def test_nginx_refuses_a_config_without_its_certificate(tmp_path, certificate):
    """The check above can fail: the same config with the key missing does not pass."""
    copy = tmp_path / "certs"
    copy.mkdir()
    shutil.copy(certificate / "tls.crt", copy / "tls.crt")
    conf = render("collector.conf", tmp_path, copy, free_port(), free_port(), free_port())
    done = subprocess.run([nginx(), "-t", "-p", str(tmp_path), "-e", str(tmp_path / "error.log"), "-c", str(conf)],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode != 0 and "tls.key" in done.stderr


def wait_for_port(port: int, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"nginx exited: {log.read_text() if log.exists() else ''}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError("nginx did not start listening")


@pytest.fixture
def behind_tls(app_settings, store, keys, certificate, tmp_path) -> Iterator[str]:
    """A real collector on 127.0.0.1 behind the single-node nginx config; yields its https base URL."""
    binary = nginx()
    app = create_app(app_settings.model_copy(update={"pairing_window_s": 0}), store=store)  # rows written at once
    with ServerThread(app) as collector_url:
        public, internal = free_port(), free_port()
        conf = render("collector.conf", tmp_path, certificate, int(collector_url.rsplit(":", 1)[1]), public,
                      internal)
        command = [binary, "-p", str(tmp_path), "-e", str(tmp_path / "error.log"), "-c", str(conf),
                   "-g", "daemon off;"]
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_for_port(public, process, tmp_path / "error.log")
            yield f"https://127.0.0.1:{public}"
        finally:
            process.terminate()
            process.wait(15)


def test_the_sdk_sends_spans_through_tls_with_the_ca_file(behind_tls, certificate, keys, store):
    body = make_request(otel_genai_span()).SerializeToString()
    trusted = Transport(behind_tls, keys.ingest, ca_file=str(certificate / "tls.crt"))
    answer = trusted.post("/v1/traces", body, "application/x-protobuf", timeout_s=10)
    assert answer.status == 200
    deadline = time.monotonic() + 10
    while store.query("SELECT count() FROM llm_calls").result_rows[0][0] < 1:
        assert time.monotonic() < deadline, "the span sent through nginx was not stored"
        time.sleep(0.05)
    # without the CA file the self-signed certificate is not trusted: nothing is sent
    assert Transport(behind_tls, keys.ingest).post("/v1/traces", body, "application/x-protobuf",
                                                   timeout_s=5).status == 0


def https_get(url: str, context: ssl.SSLContext) -> int:
    try:
        with urllib.request.urlopen(url, context=context, timeout=5) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_the_public_listener_speaks_only_modern_tls(behind_tls, certificate):
    trusted = ssl.create_default_context(cafile=str(certificate / "tls.crt"))
    assert https_get(f"{behind_tls}/healthz", trusted) == 200
    assert https_get(f"{behind_tls}/metrics", trusted) == 404  # never through the public listener
    host, port = "127.0.0.1", int(behind_tls.rsplit(":", 1)[1])
    with socket.create_connection((host, port), timeout=5) as raw:
        with trusted.wrap_socket(raw, server_hostname=host) as tls:
            assert tls.version() in ("TLSv1.2", "TLSv1.3")

    weak = ssl.create_default_context(cafile=str(certificate / "tls.crt"))
    weak.maximum_version = ssl.TLSVersion.TLSv1_2
    weak.set_ciphers("ECDHE-ECDSA-AES128-SHA:ECDHE-ECDSA-AES256-SHA:AES128-SHA")  # CBC/SHA-1 suites: none offered
    with socket.create_connection((host, port), timeout=5) as raw, pytest.raises(ssl.SSLError):
        weak.wrap_socket(raw, server_hostname=host)

    plain = urllib.request.Request(f"http://{host}:{port}/healthz")
    with pytest.raises(urllib.error.HTTPError) as refused:  # plain HTTP on the TLS port
        urllib.request.urlopen(plain, timeout=5)
    assert refused.value.code == 400


def test_a_body_over_the_limit_is_refused_at_the_proxy(behind_tls, certificate, keys):
    trusted = Transport(behind_tls, keys.ingest, ca_file=str(certificate / "tls.crt"))
    too_big = b"\0" * (Settings.model_fields["max_body_bytes"].default + 1024)
    assert trusted.post("/v1/traces", too_big, "application/x-protobuf", timeout_s=10).status == 413


def test_the_sdk_trusts_a_private_ca_through_inferwatch_ca_file(behind_tls, certificate, keys, store, monkeypatch):
    import inferwatch

    monkeypatch.setenv("INFERWATCH_CA_FILE", str(certificate / "tls.crt"))
    inferwatch.init(endpoint=behind_tls, api_key=keys.ingest, schedule_delay_ms=10)
    try:
        inferwatch.observe(name="sent through tls")(lambda: 1)()
        assert inferwatch.flush(timeout=10)
        stats = inferwatch.stats()
        assert stats["exported"] == 1 and stats["export_failures"] == 0
    finally:
        inferwatch.shutdown()
    deadline = time.monotonic() + 10
    while not store.query("SELECT count() FROM spans WHERE name = 'sent through tls'").result_rows[0][0]:
        assert time.monotonic() < deadline, "the SDK's span did not arrive through nginx"
        time.sleep(0.05)
    assert inferwatch.budget.make_guard(endpoint=behind_tls, api_key=keys.read)._transport._verify == str(
        certificate / "tls.crt")  # the budget guard's requests trust the same CA
