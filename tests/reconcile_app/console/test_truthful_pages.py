"""Pages that say what is true, each found by trying it as an operator would (issue 17,
point 6): an auditor reaches an evidence entry's blast radius, filters that refuse a value say
so, text filters forgive case and partial ids, and quarantine actions confirm and link."""

from __future__ import annotations

import re

from tests.reconcile_app.console.test_blast_radius import rows
from tests.reconcile_app.lineage_chain import (  # noqa: F401 (fixtures)
    chain,
    collectible,
)


def test_the_blast_radius_form_takes_an_evidence_id(chain, auditor_browser):
    by_evidence = auditor_browser.get(
        "/lineage/blast-radius/?evidence=ev-collect&kind=memory"
    ).content.decode()
    assert 'id="entry-evidence" value="ev-collect"' in by_evidence
    assert "Blast radius of <span class=\"mono\">evidence ev-collect</span>" in by_evidence
    by_node = auditor_browser.get(
        "/lineage/blast-radius/?node=evidence:ev-collect&kind=memory"
    ).content.decode()
    assert set(rows(by_evidence)) == set(rows(by_node)) == {
        f"memory:{chain.memory_id}",
        f"memory:{chain.fact_memory_id}",
    }


def test_an_evidence_page_links_its_blast_radius(chain, auditor_browser):
    page = auditor_browser.get("/evidence/ev-collect/").content.decode()
    link = re.search(r'<a href="([^"]+)" id="evidence-blast-radius">Blast radius</a>', page)
    assert link and link.group(1) == "/lineage/blast-radius/?evidence=ev-collect"
    assert auditor_browser.get(link.group(1)).status_code == 200
