"""The project's statement of the portal's HTTP interface, reference/http.md, held against the
sandbox that implements it and the client that relies on it: one contract, three readers."""

import re
import ssl

import pytest

from benchmarks_wiki import rules
from benchmarks_wiki.sandbox import Catalogue, routes
from benchmarks_wiki.sandbox.catalogue import SAMPLE_THREAD_ID
from tests.certs import CA_FILE
from tests.conftest import ROOT

CONTRACT = (ROOT / "reference" / "http.md").read_text(encoding="utf-8")


def table(heading):
    """The rows of the first table under ``## heading``, as lists of cells."""
    section = CONTRACT.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in rows[2:]]


def test_the_limits_are_the_sandboxs_and_the_clients():
    limits = {row[0]: row[1] for row in table("Limits")}
    assert limits["`body`"].startswith(f"{routes.MAX_BODY_BYTES} bytes") and routes.MAX_BODY_BYTES == rules.MAX_BODY_BYTES
    assert limits["whole URL, origin included"] == f"{routes.MAX_URL_BYTES} bytes" == f"{rules.MAX_URL_BYTES} bytes"
    assert limits["`agent_name`, `model`, `run_label`"] == f"1 to {routes.MAX_CLAIM_CHARS} characters"
    assert routes.MAX_CLAIM_CHARS == rules.MAX_CLAIM_CHARS
    assert limits["`nonce`"] == "16 to 64 of `A-Z a-z 0-9 _ -`" and routes.NONCE_RE.pattern.startswith("[A-Za-z0-9_-]{16,64}")
    assert rules.is_a("nonce", "a" * 16) and not rules.is_a("nonce", "a" * 15) and not rules.is_a("nonce", "a" * 65)
    assert limits["`limit` on lists"] == f"1 to {routes.MAX_LIMIT}"
    assert f"(1 to {routes.MAX_LIMIT}, default {routes.DEFAULT_LIMIT})" in CONTRACT


def test_the_publish_parameters_are_the_sandboxs_and_the_clients():
    named = {re.findall(r"`(\w+)`", row[0])[0] for row in table("Publish")}
    named |= {"model", "run_label"}  # listed on the row of agent_name
    assert named == set(routes.PUBLISH_PARAMS) == {"body", "nonce", *rules.POST_FIELDS}
    kinds = next(row[2] for row in table("Publish") if row[0] == "`kind`")
    assert re.findall(r"`(\w+)`", kinds)[:3] == list(routes.KINDS) == list(rules.KINDS)


def test_every_refusal_code_is_one_the_sandbox_answers():
    # Overload and rate limits are the suite's fault switches' to answer.
    source = "".join(path.read_text(encoding="utf-8") for path in [*(ROOT / "scripts" / "benchmarks_wiki" / "sandbox")
                     .glob("*.py"), ROOT / "tests" / "faults.py"])
    codes = {code for row in table("Refusals") for code in re.findall(r"\d{3} `(\w+)`", row[1])}
    assert {"https_required", "not_found", "invalid", "rate_limited", "unavailable"} <= codes
    assert [code for code in codes if f'"{code}"' not in source] == []


@pytest.fixture(scope="module")
def sandbox():
    from tests.faults import Portal

    with Portal(Catalogue.sample()).start() as portal:
        yield portal


def routes_listed():
    task = Catalogue.sample().tasks["gsm8k"][0]["task_id"]
    for row in table("Reads"):
        route = re.findall(r"`([^`]+)`", row[0])[0].split("?")[0]
        yield route.replace("{slug}", "gsm8k").replace("{task_id}", task).replace("{thread_id}", SAMPLE_THREAD_ID)


@pytest.mark.parametrize("route", list(routes_listed()))
def test_every_route_the_contract_lists_answers_on_the_sandbox(sandbox, route):
    import http.client

    connection = http.client.HTTPSConnection("127.0.0.1", sandbox.port,
                                             context=ssl.create_default_context(cafile=CA_FILE))
    connection.request("GET", route.replace(" ", "+") + ("?q=x" if route == "/search" else ""))
    answer = connection.getresponse()
    answer.read()
    connection.close()
    assert answer.status == 200, route
