"""Schemathesis against a real td2048 serve process: requests made from the server's own OpenAPI schema, fitting
it and not, to every operation; no answer may be a 5xx or break the schema, and the server stays up."""

import os

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.specs.openapi.checks import positive_data_acceptance
from serving import Server

# per operation and mode: about 550 requests in all, seconds; TD2048_FUZZ_EXAMPLES=300 for a longer hunt
EXAMPLES = int(os.environ.get("TD2048_FUZZ_EXAMPLES", 30))


@pytest.fixture(scope="module")
def server():
    s = Server("--threads", 1, "--max-depth", 2, "--max-games", 50)
    yield s
    assert s.stop() == 0


def test_the_schema_fuzzer_finds_no_server_error(server):
    schema = schemathesis.openapi.from_url(server.url + "/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert {op.label for op in operations} >= {"POST /api/analyze", "POST /api/move", "POST /api/games",
                                               "GET /api/games/{game_id}", "POST /api/games/{game_id}/moves",
                                               "POST /api/games/{game_id}/undo", "GET /api/games/{game_id}/record",
                                               "POST /api/replay", "GET /api/model"}
    game = server.ok("POST", "/api/games", {"seed": 1})["id"]
    statuses = {}
    for op in operations:
        known = {"game_id": game} if "{game_id}" in op.path else None
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            for path_parameters in ([None, known] if known else [None]):
                try:
                    strategy = op.as_strategy(generation_mode=mode, path_parameters=path_parameters)
                except Exception:  # noqa: BLE001 - no negative data can be made for an operation without inputs
                    continue

                @given(case=strategy)
                @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                          suppress_health_check=list(HealthCheck))
                def call(case):
                    # the schema cannot say which boards have a legal move or which moves a game allows:
                    # those get a 4xx (422 or 409) though they fit it; every other check holds
                    response = case.call_and_validate(excluded_checks=[positive_data_acceptance])
                    statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
                    assert response.status_code < 500

                try:
                    call()
                except Unsatisfiable:  # no data breaks the schema of an operation without inputs (GET /api/model)
                    assert mode == GenerationMode.NEGATIVE, op.label
    total = sum(statuses.values())
    print(f"schemathesis: {total} requests, statuses {dict(sorted(statuses.items()))}")
    assert total >= 200 and not any(code >= 500 for code in statuses)
    assert server.ok("GET", "/api/model")["game"] == "2048" and server.process.poll() is None
