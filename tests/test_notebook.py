"""The walkthrough notebook runs from top to bottom on the CPU and shows what it promises."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "walkthrough.ipynb"
CELL_TIMEOUT_S = 120
SQUARE = re.compile(r"^[a-i][1-9]$")


def code_cells(notebook: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    return [cell for cell in notebook.cells if cell.cell_type == "code"]


def stdout_of(cell: nbformat.NotebookNode) -> str:
    return "".join(
        out.text for out in cell.outputs if out.output_type == "stream" and out.name == "stdout"
    )


@pytest.fixture(scope="module")
def executed() -> nbformat.NotebookNode:
    """The notebook run as Jupyter runs it: a python3 kernel started in notebooks/.

    A failing cell raises ``CellExecutionError`` here, which fails every test below.
    """
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    client = NotebookClient(
        notebook,
        kernel_name="python3",
        timeout=CELL_TIMEOUT_S,
        resources={"metadata": {"path": str(NOTEBOOK.parent)}},
    )
    client.execute()
    return notebook


def test_notebook_is_saved_without_outputs() -> None:
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(notebook)
    assert notebook.metadata.kernelspec.name == "python3"
    for cell in code_cells(notebook):
        assert cell.outputs == [] and cell.execution_count is None, cell.source[:60]


def test_every_picture_cell_shows_a_picture(executed: nbformat.NotebookNode) -> None:
    picture_cells = [cell for cell in code_cells(executed) if "plt.show()" in cell.source]
    assert len(picture_cells) == 2  # the analysed position and the training curve
    for cell in picture_cells:
        images = [out for out in cell.outputs if "image/png" in out.get("data", {})]
        assert len(images) == 1, cell.source[:60]


def test_the_agent_loads_and_analyses_the_position(executed: nbformat.NotebookNode) -> None:
    text = "".join(stdout_of(cell) for cell in code_cells(executed))
    assert "NetworkAgent(" in text and "simulations per move" in text
    top_moves = re.findall(r"^([a-i][1-9]): +(\d+) visits", text, flags=re.MULTILINE)
    assert len(top_moves) == 3
    visits = [int(count) for _, count in top_moves]
    assert visits == sorted(visits, reverse=True) and visits[0] > 0


def test_the_game_against_uct_is_printed_to_its_end(executed: nbformat.NotebookNode) -> None:
    outputs = [stdout_of(cell) for cell in code_cells(executed)]
    game_output = next((text for text in outputs if "moves:" in text), "")
    assert game_output, "no cell printed the game's move list"
    move_line = next(line for line in game_output.splitlines() if line.startswith("moves:"))
    squares = [token.split(".")[-1] for token in move_line.split()[1:]]
    assert len(squares) >= 17  # no uttt game ends before X's 9th move
    assert all(SQUARE.match(square) for square in squares), move_line
    assert "big board" in game_output  # game.render's picture of the final position
    assert re.search(r"^result: (the agent \(X\) won|UCT-1000 \(O\) won|draw)$", game_output, re.M)
