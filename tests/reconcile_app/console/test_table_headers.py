"""Every column of the console's tables has a header a screen reader can name its cells by,
the columns of buttons and links included (their header is visually hidden)."""

from __future__ import annotations

import re

import pytest

from tests.reconcile_app.console.contract_world import load_draft


def headers(page: str, table: str) -> list[list[str]]:
    """The text of each <th> of each table whose class or id names `table`."""
    found = []
    for body in re.findall(rf"<table[^>]*{table}[^>]*>(.*?)</table>", page, re.S):
        cells = re.findall(r"<th\b[^>]*>(.*?)</th>", body, re.S)
        found.append([re.sub(r"<[^>]+>", "", cell).strip() for cell in cells])
    return found


@pytest.mark.parametrize(
    ("path", "table", "hidden"),
    [
        ("/contracts/", "contract-versions", "Compare"),
        ("/quarantine/", "quarantine-targets", "Actions"),
    ],
)
def test_columns_of_buttons_have_a_hidden_header(
    operator_browser, estate, tmp_path, path, table, hidden
):
    load_draft(tmp_path)
    page = operator_browser.get(path).content.decode()
    tables = headers(page, table)
    assert tables, f"no {table} table"
    for names in tables:
        assert all(names), names
        assert hidden in names
    assert f'<span class="visually-hidden">{hidden}</span></th>' in re.sub(
        r"\s+</th>", "</th>", page
    )
