"""docker/Dockerfile and docker-compose.yml, checked without a Docker engine: the files
parse, every `faithscreen` command they run exists with the options given, every
FAITHSCREEN_* name they use is a real setting, the services start in the right order,
workers can scale, and the image is multi-stage, non-root and health-checked.

What only an engine can show (the build, the containers talking) is not tested here.
"""

from __future__ import annotations

import ipaddress
import json
import re
import shlex
import tomllib
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

import pytest
import typer
import yaml
from pydantic import BaseModel
from sqlalchemy.engine import make_url

from app.cli import cli
from app.db.migrate import MIGRATIONS_DIR_ENV
from app.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker-compose.yml"
DOCKERFILE = ROOT / "docker" / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"
HEALTHZ = "http://127.0.0.1:8000/healthz"


# --- what the code defines ------------------------------------------------------------


def setting_names() -> set[str]:
    """Every environment name Settings reads: FAITHSCREEN_<FIELD>, and
    FAITHSCREEN_<GROUP>_<FIELD> for the nested groups (TRANSLATOR, JUDGE)."""
    names = set()
    for name, field in Settings.model_fields.items():
        if name == "panel_providers":
            # Built from FAITHSCREEN_JUDGE_<NAME>_* for the names in FAITHSCREEN_JUDGES, which
            # only the deployment knows; the compose file says where to add them.
            continue
        group = field.annotation
        if isinstance(group, type) and issubclass(group, BaseModel):
            names |= {f"FAITHSCREEN_{name}_{sub}".upper() for sub in group.model_fields}
        else:
            names.add(f"FAITHSCREEN_{name}".upper())
    return names


# Read by app.db.migrate, outside Settings: where the migrations are when installed.
KNOWN_NAMES = setting_names() | {MIGRATIONS_DIR_ENV}


def check_command(argv: list[str]) -> None:
    """Resolve `faithscreen <sub> ... [options]` through typer's click group and parse its
    options (nothing runs): an unknown command raises AssertionError, an unknown option a
    usage error (typer.TyperException)."""
    assert argv[0] == "faithscreen", argv
    # Typer vendors click (typer._click): groups are told apart by having subcommands.
    command: Any = typer.main.get_command(cli)
    args = argv[1:]
    while hasattr(command, "get_command") and args and not args[0].startswith("-"):
        sub = command.get_command(typer.Context(command), args[0])
        assert sub is not None, f"`faithscreen` has no command {args[0]!r} (in {argv})"
        command, args = sub, args[1:]
    assert not hasattr(command, "get_command"), f"{argv} names a group, not a command"
    command.make_context(command.name or "", list(args))


def test_setting_names_are_derived_from_the_settings_class() -> None:
    assert {"FAITHSCREEN_DATABASE_URL", "FAITHSCREEN_JUDGE_API_KEY"} <= KNOWN_NAMES
    assert "FAITHSCREEN_TRANSLATOR" not in KNOWN_NAMES


def test_the_command_check_rejects_what_the_cli_lacks() -> None:
    check_command(["faithscreen", "serve", "--host", "0.0.0.0", "--no-worker"])
    for argv in (
        ["faithscreen", "serv"],
        ["faithscreen", "serve", "--workers", "2"],
        ["faithscreen", "db"],
        ["faithscreen", "db", "migrate"],
    ):
        with pytest.raises((AssertionError, typer.TyperException)):
            check_command(argv)


# --- docker-compose.yml -----------------------------------------------------------------


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(COMPOSE.read_text())
    return loaded


@pytest.fixture(scope="module")
def services(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = compose["services"]
    return found


def environment(service: dict[str, Any]) -> dict[str, str | None]:
    """A service's environment as name -> value (None: passed through from the host)."""
    env = service.get("environment") or {}
    if isinstance(env, dict):
        return {name: None if value is None else str(value) for name, value in env.items()}
    pairs = [item.split("=", 1) for item in env]
    return {pair[0]: pair[1] if len(pair) == 2 else None for pair in pairs}


def argv(command: str | list[str]) -> list[str]:
    return shlex.split(command) if isinstance(command, str) else [str(a) for a in command]


def test_compose_has_the_four_services(services: dict[str, dict[str, Any]]) -> None:
    started = {name for name, service in services.items() if "profiles" not in service}
    assert started == {"postgres", "migrate", "api", "worker"}
    # Everything else starts only under a profile of its own.
    assert set(services) == started | {"lean"}


def test_the_lean_profile_runs_a_kimina_lean_server(services: dict[str, Any]) -> None:
    """`docker compose --profile lean up` starts Kimina beside us (docs/lean.md): unpublished,
    health-checked on its /health, and api and workers take its URL from the host."""
    lean = services["lean"]
    assert lean["profiles"] == ["lean"]
    assert lean["image"].startswith("projectnumina/kimina-lean-server:")
    assert "ports" not in lean
    assert lean["expose"] == ["8000"]
    assert lean["healthcheck"]["test"][-1] == "http://127.0.0.1:8000/health"
    for name in ("api", "worker"):
        env = environment(services[name])
        assert env["FAITHSCREEN_LEAN_SERVER_URL"] is None  # passed through, never fixed
        assert "lean" not in services[name].get("depends_on", {})  # Lean stays optional


def test_every_faithscreen_command_in_compose_exists(services: dict[str, Any]) -> None:
    commands = {name: argv(s["command"]) for name, s in services.items() if "command" in s}
    assert commands["migrate"] == ["faithscreen", "db", "upgrade"]
    assert commands["worker"] == ["faithscreen", "worker"]
    assert commands["api"][:2] == ["faithscreen", "serve"]
    assert "--no-worker" in commands["api"]
    for command in commands.values():
        check_command(command)


def test_every_faithscreen_name_in_compose_is_a_setting(compose: dict[str, Any]) -> None:
    text = COMPOSE.read_text()
    used = set(re.findall(r"\bFAITHSCREEN_[A-Z0-9_]+", text))
    assert used, "compose names no FAITHSCREEN_* variable"
    assert used <= KNOWN_NAMES, f"not settings: {sorted(used - KNOWN_NAMES)}"


def test_api_and_worker_get_every_setting(services: dict[str, Any]) -> None:
    """A setting the deployment cannot pass cannot be configured: a new one must be added."""
    for name in ("api", "worker"):
        env = environment(services[name])
        missing = setting_names() - set(env)
        assert not missing, f"{name}: add {sorted(missing)} to docker-compose.yml"
        passed_through = {key for key, value in env.items() if value is None}
        # Provider settings come from the host; none is fixed in the file.
        assert {n for n in env if "_TRANSLATOR_" in n or "_JUDGE_" in n} <= passed_through


def test_the_api_believes_forwarded_headers_only_from_private_networks(
    services: dict[str, Any],
) -> None:
    """Secure cookies and HSTS follow X-Forwarded-Proto from the TLS proxy, which reaches
    the container from a Docker (private) network; a client elsewhere is not believed."""
    value = environment(services["api"])["FAITHSCREEN_FORWARDED_ALLOW_IPS"]
    default = re.fullmatch(r"\$\{FAITHSCREEN_FORWARDED_ALLOW_IPS:-(.+)\}", value or "")
    assert default, f"compose must set it (overridable from the shell): {value!r}"
    allowed = Settings(forwarded_allow_ips=default.group(1)).forwarded_allow_ips
    networks = [ipaddress.ip_network(entry.strip()) for entry in allowed.split(",")]
    assert networks and all(network.is_private for network in networks), networks


def test_the_database_url_names_the_postgres_service(services: dict[str, Any]) -> None:
    postgres_env = environment(services["postgres"])
    for name in ("migrate", "api", "worker"):
        url = make_url(environment(services[name])["FAITHSCREEN_DATABASE_URL"] or "")
        assert url.drivername == "postgresql"
        assert (url.host, url.port) == ("postgres", 5432)
        assert url.username == postgres_env["POSTGRES_USER"]
        assert url.password == postgres_env["POSTGRES_PASSWORD"]
        assert url.database == postgres_env["POSTGRES_DB"]


def test_postgres_is_health_checked_on_a_named_volume(compose: dict[str, Any]) -> None:
    postgres = compose["services"]["postgres"]
    assert postgres["image"] == "postgres:16"
    assert "pg_isready" in " ".join(argv(postgres["healthcheck"]["test"]))
    volume = postgres["volumes"][0].split(":")[0]
    assert volume in (compose.get("volumes") or {}), "the data volume must be a named volume"


def test_migrate_runs_once_before_api_and_workers(services: dict[str, Any]) -> None:
    assert services["migrate"]["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert services["migrate"].get("restart") == "no"
    for name in ("api", "worker"):
        condition = services[name]["depends_on"]["migrate"]["condition"]
        assert condition == "service_completed_successfully", name


def test_workers_can_scale(services: dict[str, Any]) -> None:
    worker = services["worker"]
    assert "container_name" not in worker
    assert "ports" not in worker
    # The image's /healthz check would mark every worker unhealthy: no HTTP there.
    assert worker["healthcheck"] == {"disable": True}


def test_the_api_is_published_and_health_checked(services: dict[str, Any]) -> None:
    api = services["api"]
    command = argv(api["command"])
    port = command[command.index("--port") + 1]
    assert f"{port}:{port}" in api["ports"]
    assert HEALTHZ.replace("8000", port) in " ".join(argv(api["healthcheck"]["test"]))


# --- docker/Dockerfile --------------------------------------------------------------------


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments), continuation lines joined and comments dropped."""
    lines = [ln for ln in DOCKERFILE.read_text().splitlines() if not ln.lstrip().startswith("#")]
    joined = re.sub(r"\\\n", " ", "\n".join(lines))
    parsed = [line.strip().split(None, 1) for line in joined.splitlines() if line.strip()]
    return [(parts[0].upper(), parts[1] if len(parts) > 1 else "") for parts in parsed]


def arguments(keyword: str) -> list[str]:
    return [args for name, args in instructions() if name == keyword]


def final_stage() -> list[tuple[str, str]]:
    steps = instructions()
    last_from = max(i for i, (name, _) in enumerate(steps) if name == "FROM")
    return steps[last_from:]


def env_values() -> dict[str, str]:
    found = {}
    for args in arguments("ENV"):
        found.update(pair.split("=", 1) for pair in shlex.split(args))
    return found


def test_the_image_is_multi_stage_and_slim() -> None:
    stages = arguments("FROM")
    assert len(stages) >= 2
    assert stages[-1].startswith("python:3.11-slim")
    assert any("--from=builder" in args for args in arguments("COPY"))


def test_the_image_runs_as_a_non_root_user() -> None:
    users = [args for name, args in final_stage() if name == "USER"]
    assert users, "the final stage sets no USER"
    assert users[-1].split(":")[0] not in {"root", "0"}


def test_the_image_is_health_checked_on_healthz() -> None:
    (check,) = arguments("HEALTHCHECK")
    assert "CMD" in check
    assert HEALTHZ in check
    assert "python" in check and "curl" not in check  # the slim image has no curl
    assert arguments("EXPOSE") == ["8000"]


def test_the_default_command_exists() -> None:
    (command,) = arguments("CMD")
    check_command(json.loads(command))
    assert json.loads(command)[:2] == ["faithscreen", "serve"]


def test_the_migrations_the_image_points_at_are_copied_from_the_repo() -> None:
    env = env_values()
    unknown = {name for name in env if name.startswith("FAITHSCREEN_")} - KNOWN_NAMES
    assert not unknown, f"not settings: {sorted(unknown)}"
    target = env[MIGRATIONS_DIR_ENV].rstrip("/")
    copies = [args.split() for name, args in final_stage() if name == "COPY"]
    sources = [args[0].rstrip("/") for args in copies if args[-1].rstrip("/") == target]
    assert sources, f"nothing is copied to {MIGRATIONS_DIR_ENV}={target}"
    assert (ROOT / sources[0] / "env.py").is_file()
    assert (ROOT / sources[0] / "versions").is_dir()


def test_dockerignore_keeps_what_the_image_copies() -> None:
    lines = [line.strip() for line in DOCKERIGNORE.read_text().splitlines()]
    patterns = [line for line in lines if line and not line.startswith("#")]
    copied = [
        source
        for args in arguments("COPY")
        if "--from=" not in args
        for source in args.split()[:-1]
    ]
    assert {"app", "migrations", "pyproject.toml", "README.md"} <= {c.rstrip("/") for c in copied}
    for source in copied:
        assert (ROOT / source).exists(), source
        excluded = [p for p in patterns if fnmatch(source.rstrip("/"), p.rstrip("/"))]
        assert not excluded, f".dockerignore {excluded} drops {source}, which the image needs"


def test_the_builder_copies_every_package_the_project_installs() -> None:
    """pyproject.toml finds packages under several roots (the client's files are shipped
    from clients/python): each package found must be in the build context's copy."""
    found = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    roots = found["packages"]["find"]["where"]
    packages = [
        package.relative_to(ROOT).as_posix()
        for root in roots
        for package in sorted((ROOT / root).iterdir())
        if (package / "__init__.py").is_file()
        and any(fnmatch(package.name, p) for p in found["packages"]["find"]["include"])
    ]
    assert {"app", "clients/python/faithscreen_client"} <= set(packages)
    copied = {args.split()[0].rstrip("/") for args in arguments("COPY") if "--from=" not in args}
    assert set(packages) <= copied
