"""Production static files (config/staticfiles.py): hashed names with a .gz and a .br beside
each, and a second `collectstatic` that reuses what it finds intact."""

from __future__ import annotations

import gzip
import io
import os
import secrets
from pathlib import Path

import brotli
import pytest
from django.core.management import call_command

from config.staticfiles import ReusingCompressor
from tests.fresh_interpreter import fresh_python

SCRIPT = "const chart = () => 'plotted';\n" * 400
STYLE = "body { color: #223344; margin: 0 auto; }\n" * 200


@pytest.fixture
def collect(settings, tmp_path):
    source = tmp_path / "source"
    (source / "app").mkdir(parents=True)
    (source / "app" / "chart.js").write_text(SCRIPT)
    (source / "app" / "page.css").write_text(STYLE)
    settings.STATICFILES_DIRS = [source]
    settings.STATICFILES_FINDERS = ["django.contrib.staticfiles.finders.FileSystemFinder"]
    settings.STATIC_ROOT = tmp_path / "static"
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "config.staticfiles.CompressedStaticFilesStorage"},
    }

    def run() -> Path:
        call_command("collectstatic", "--noinput", stdout=io.StringIO())
        return tmp_path / "static" / "app"

    return run


def hashed(folder: Path, stem: str, suffix: str) -> Path:
    (found,) = [p for p in folder.glob(f"{stem}.*{suffix}") if p.name.count(".") == 2]
    return found


def test_each_file_gets_a_gzip_and_a_brotli_twin_under_its_hashed_name(collect):
    folder = collect()
    for stem, suffix, content in (("chart", ".js", SCRIPT), ("page", ".css", STYLE)):
        file = hashed(folder, stem, suffix)
        assert gzip.decompress(Path(f"{file}.gz").read_bytes()).decode() == content
        assert brotli.decompress(Path(f"{file}.br").read_bytes()).decode() == content


def test_a_second_run_reuses_intact_twins_and_redoes_a_damaged_one(collect, monkeypatch):
    folder = collect()
    compressed: list[int] = []
    original = ReusingCompressor.compress_brotli

    def counting(data: bytes) -> bytes:
        compressed.append(len(data))
        return original(data)

    monkeypatch.setattr(ReusingCompressor, "compress_brotli", staticmethod(counting))
    collect()
    assert compressed == []

    script = hashed(folder, "chart", ".js")
    brotli_twin = Path(f"{script}.br")
    brotli_twin.write_bytes(brotli_twin.read_bytes()[:20])  # a write cut short
    collect()
    # Only the file whose twin was damaged is compressed again (the plain-named copy of the
    # same script keeps its intact twins).
    assert compressed == [len(SCRIPT)]
    assert brotli.decompress(brotli_twin.read_bytes()).decode() == SCRIPT
    assert os.stat(brotli_twin).st_mtime == pytest.approx(os.stat(script).st_mtime, abs=0.01)


def test_production_settings_choose_the_compressing_storage(tmp_path):
    env = {
        **os.environ,
        "RECONCILE_PRODUCTION": "1",
        "RECONCILE_SECRET_KEY": secrets.token_urlsafe(40),
        "RECONCILE_VAR_DIR": str(tmp_path),
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    env.pop("RECONCILE_STATICFILES_STORAGE", None)
    env.pop("RECONCILE_DEBUG", None)
    printed = fresh_python(
        "from django.conf import settings; "
        "print(settings.STORAGES['staticfiles']['BACKEND'], settings.WHITENOISE_USE_FINDERS)",
        env=env,
    )
    assert printed.split() == ["config.staticfiles.CompressedStaticFilesStorage", "False"]
