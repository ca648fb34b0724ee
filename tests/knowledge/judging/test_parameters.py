"""The fitted numbers are data: the engine reads them from the parameters file the bench's
fitting scripts write, and writing one table keeps the rest of the file."""

from __future__ import annotations

import shutil
from dataclasses import fields
from pathlib import Path

import pytest

from knowledge.judging import parameters
from knowledge.judging.abstain import Calibration
from knowledge.judging.ranking import Weights


def test_the_engine_reads_its_weights_and_calibration_from_the_shipped_file() -> None:
    shipped = parameters.read(parameters.PARAMETERS)
    weights, calibration = Weights.fitted(), Calibration.fitted()
    assert {f.name: getattr(weights, f.name) for f in fields(Weights)} == shipped["ranking"]
    assert list(calibration.coefficients) == shipped["abstention"]["coefficients"]
    assert calibration.threshold == shipped["abstention"]["threshold"] < calibration.hedge
    assert calibration.typical_standout == shipped["abstention"]["typical_standout"]


def test_writing_a_table_replaces_its_numbers_and_keeps_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "parameters.toml"
    shutil.copy(parameters.PARAMETERS, path)
    before = path.read_text()
    parameters.write(path, "abstention", {"threshold": 0.4444, "coefficients": [1, 2, 3, 4, 5.12345]})
    after = parameters.read(path)
    assert after["abstention"]["threshold"] == 0.444
    assert after["abstention"]["coefficients"] == [1.0, 2.0, 3.0, 4.0, 5.123]
    assert after["ranking"] == parameters.read(parameters.PARAMETERS)["ranking"]
    kept = [line for line in before.split("\n") if not line.startswith(("threshold", "coefficients"))]
    assert kept == [
        line for line in path.read_text().split("\n") if not line.startswith(("threshold", "coefficients"))
    ]


def test_a_number_the_file_has_no_line_for_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    path = tmp_path / "parameters.toml"
    shutil.copy(parameters.PARAMETERS, path)
    before = path.read_text()
    with pytest.raises(ValueError, match="no line for threshold in \\[ranking\\]"):
        parameters.write(path, "ranking", {"threshold": 0.5})
    assert path.read_text() == before
