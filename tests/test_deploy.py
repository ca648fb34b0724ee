"""The deployment files cannot drift from the code: every variable they set is a setting
Lore reads, every command they run is a `lore` command, the migration runs before Lore
starts and the workers run no jobs in the web process. (Their schemas are checked by
`make deploy-check`; the image by `make image`.)"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from bot.app.settings import Settings
from bot.cli.main import app

ROOT = Path(__file__).parents[1]
OTHERS = {"POSTGRES_PASSWORD", "ANONYMIZED_TELEMETRY", "PORT"}
"""Variables for the other services (PostgreSQL's password) and libraries, not Lore's settings."""


@cache
def compose() -> dict[str, Any]:
    return dict(yaml.safe_load((ROOT / "compose.yaml").read_text()))


def manifests() -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((ROOT / "deploy/kubernetes/lore.yaml").read_text()) if d]


def commands() -> set[str]:
    found = {c.name or (c.callback.__name__ if c.callback else "") for c in app.registered_commands}
    return found | {g.name or "" for g in app.registered_groups}


def known(variable: str) -> bool:
    return variable.lower() in Settings.model_fields or variable in OTHERS


def test_compose_runs_the_migration_once_before_lore_and_its_workers() -> None:
    services = compose()["services"]
    assert services["migrate"]["command"] == ["db", "upgrade"] and services["migrate"]["restart"] == "no"
    for name in ("lore", "worker"):
        assert services[name]["depends_on"]["migrate"] == {"condition": "service_completed_successfully"}
        assert services[name]["environment"]["LORE_JOBS_IN_PROCESS"] == "false"
    assert services["worker"]["deploy"]["replicas"] == 2 and services["worker"]["command"] == ["worker"]
    assert services["lore"]["command"] == ["run"]
    assert {"postgres-data", "chroma-data", "lore-data"} <= set(compose()["volumes"])


def test_every_command_and_variable_of_the_deployment_files_is_lores() -> None:
    services = compose()["services"]
    lore_services = [s for s in services.values() if "lore" in str(s.get("image"))]
    ran = [s["command"][0] for s in lore_services]
    ran += [c["args"][0] for d in manifests() if d["kind"] in ("Deployment", "Job")
            for c in d["spec"]["template"]["spec"]["containers"] if "args" in c]  # fmt: skip
    assert set(ran) <= commands(), set(ran) - commands()
    variables = {name for s in lore_services for name in s["environment"]}
    variables |= {name for d in manifests() if d["kind"] in ("ConfigMap", "Secret")
                  for name in d.get("data") or d.get("stringData") or {}}  # fmt: skip
    variables |= set(re.findall(r"^([A-Z_]+)=", (ROOT / ".env.example").read_text(), re.MULTILINE))
    assert all(known(v) for v in variables), sorted(v for v in variables if not known(v))


def test_the_image_runs_lore_as_a_user_with_the_model_inside() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert re.search(r"^ARG BASE=debian:bookworm-slim$", dockerfile, re.MULTILINE)
    assert re.search(r"^USER lore$", dockerfile, re.MULTILINE)
    assert 'ENTRYPOINT ["lore"]' in dockerfile and "/healthz" in dockerfile
    # Runtime dependencies only: the package without its test extra.
    assert "-c constraints.txt ." in dockerfile and "[test]" not in dockerfile
