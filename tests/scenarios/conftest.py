"""Fixtures of the scenario tests."""

import pytest


@pytest.fixture
def case_file(tmp_path):
    """``write(name, **fields)``: a model file declaring ``CASE = ReconstructionCase(**fields)``.

    Each field is a Python expression (a string), written as it is.
    """

    def write(name: str, **fields) -> str:
        arguments = ", ".join(f"{key}={value}" for key, value in fields.items())
        path = tmp_path / f"{name}.py"
        path.write_text(
            "from adversary.scenarios.reconstruction import ReconstructionCase\n"
            f"CASE = ReconstructionCase(name={name!r}, {arguments})\n"
        )
        return str(path)

    return write
