"""The console's habits in real Chromium: dark mode, keyboard shortcuts, the layout and the
menu at 390 px (with and without JavaScript) and 1024 px. Times: test_console_times.py;
axe-core on every page: test_console_axe.py."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.test_console_offline import (  # noqa: F401 (fixtures)
    CHROMIUM,
    CHROMIUM_ARGS,
    PASSWORD,
    Traffic,
    browser_page,
    close_connections_opened_under_playwright,
    console_data,
)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's Chromium"),
]


@pytest.fixture
def new_page(live_server: Any, monkeypatch: Any) -> Iterator[Callable[..., tuple[Any, Traffic]]]:
    """Pages in contexts of the test's choosing (a time zone, no JavaScript, a width), on the
    same closed network as browser_page: every other host is aborted and kept."""
    from playwright.sync_api import sync_playwright

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # see browser_page
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )

        def make(**options: Any) -> tuple[Any, Traffic]:
            traffic = Traffic()
            context = browser.new_context(**{"viewport": {"width": 1440, "height": 900}, **options})
            context.route("**/*", traffic.route)
            page = context.new_page()
            page.on("response", traffic.response)
            page.set_default_timeout(10_000)
            return page, traffic

        try:
            yield make
        finally:
            browser.close()
            close_connections_opened_under_playwright()


def sign_in(page: Any, base: str, username: str) -> None:
    page.goto(f"{base}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(r"/$"))


def background(page: Any) -> str:
    return page.evaluate("getComputedStyle(document.body).backgroundColor")


def test_dark_mode_follows_the_system_and_the_toggle_is_remembered(
    live_server, browser_page, console_data
):
    page, traffic = browser_page
    sign_in(page, live_server.url, console_data["operator"].user.username)
    light = background(page)
    page.emulate_media(color_scheme="dark")
    dark = background(page)
    assert light != dark
    # The toggle overrides the system and survives a reload.
    page.click("#theme-toggle")
    assert background(page) == light
    # Its label names the theme a press gives, with no pressed state to contradict it.
    toggle = page.locator("#theme-toggle")
    expect(toggle).to_have_text("Dark")
    assert toggle.get_attribute("aria-pressed") is None
    page.reload()
    assert background(page) == light
    page.click("#theme-toggle")
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"
    page.emulate_media(color_scheme="light")
    page.goto(f"{live_server.url}/snapshots/")
    assert background(page) == dark
    assert traffic.external == []


SCRIPTED_CONTROLS = ("#time-mode", "#theme-toggle", "#shortcuts-open")


def test_controls_only_scripts_make_work_are_shown_only_with_scripts(
    live_server, new_page, console_data
):
    """Without JavaScript the time mode, theme toggle and shortcuts button would do nothing."""
    username = console_data["operator"].user.username
    plain, traffic = new_page(java_script_enabled=False)
    sign_in(plain, live_server.url, username)
    expect(plain.locator("#goto-q")).to_be_visible()  # the tools are on screen: a plain form
    for control in SCRIPTED_CONTROLS:
        expect(plain.locator(control)).to_be_hidden()
    scripted, _ = new_page()
    sign_in(scripted, live_server.url, username)
    for control in SCRIPTED_CONTROLS:
        expect(scripted.locator(control)).to_be_visible()
    assert traffic.external == []


def test_keyboard_shortcuts(live_server, browser_page, console_data):
    page, _ = browser_page
    sign_in(page, live_server.url, console_data["operator"].user.username)
    page.keyboard.press("?")
    expect(page.locator("#shortcuts-dialog")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.locator("#shortcuts-dialog")).to_be_hidden()
    page.keyboard.press("g")
    page.keyboard.press("s")
    page.wait_for_url(re.compile(r"/snapshots/$"))
    page.wait_for_selector("#snapshots tbody tr")
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.type") == "search"
    # Typing in a field is not a shortcut.
    page.keyboard.type("jg")
    assert page.locator("tr.row-cursor").count() == 0
    assert "/snapshots/" in page.url
    page.goto(f"{live_server.url}/snapshots/")
    page.wait_for_selector("#snapshots tbody tr")
    page.keyboard.press("j")
    page.keyboard.press("j")
    page.keyboard.press("k")
    first = page.locator("#snapshots tbody tr").first
    expect(first).to_have_class(re.compile("row-cursor"))
    href = first.locator("a[href]").first.get_attribute("href")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(re.escape(href) + "$"))
    # The go-to box opens an id.
    page.fill("#goto-q", console_data["snapshot"].snapshot_id)
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(re.escape(console_data["snapshot"].snapshot_id) + "/$"))


def page_overflow(page: Any) -> tuple[int, list[str]]:
    """How far the page itself scrolls sideways, and the first elements that reach past the
    screen without a box of their own that scrolls (for the failure message)."""
    overflow = page.evaluate("document.scrollingElement.scrollWidth - innerWidth")
    wide = page.evaluate(
        """() => Array.from(document.querySelectorAll('main *'))
          .filter(e => !(e instanceof SVGElement))
          .filter(e => e.getBoundingClientRect().right > innerWidth + 0.5)
          .filter(e => {
            for (let p = e.parentElement; p && p !== document.body; p = p.parentElement) {
              const x = getComputedStyle(p).overflowX;
              if (x !== 'visible' && p.getBoundingClientRect().right <= innerWidth + 0.5) return false;
            }
            return true;
          })
          .slice(0, 6).map(e => `${e.tagName}.${e.className}#${e.id}:${Math.round(e.getBoundingClientRect().right)}`)"""
    )
    return overflow, wide


@pytest.mark.parametrize("width", [390, 1024])
def test_layout_at_narrow_widths(live_server, browser_page, console_data, width):
    page, _ = browser_page
    page.set_viewport_size({"width": width, "height": 800})
    sign_in(page, live_server.url, console_data["operator"].user.username)
    for path in ("/", "/snapshots/", "/audit/", "/contradictions/"):
        page.goto(f"{live_server.url}{path}")
        overflow, wide = page_overflow(page)
        assert overflow <= 0 and not wide, (path, overflow, wide)
    links = page.locator("#console-nav a")
    if width == 390:
        expect(page.locator("#nav-toggle")).to_be_visible()
        expect(links.first).to_be_hidden()
        page.click("#nav-toggle")
        expect(page.locator("#nav-toggle")).to_have_attribute("aria-expanded", "true")
    assert_every_link_on_screen(page, width)


def assert_every_link_on_screen(page: Any, width: int) -> None:
    links = page.locator("#console-nav a")
    assert links.count() >= 13
    for index in range(links.count()):
        link = links.nth(index)
        link.scroll_into_view_if_needed()
        expect(link).to_be_visible()
        box = link.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width


def test_the_menu_at_390px_with_javascript(live_server, browser_page, console_data):
    page, traffic = browser_page
    page.set_viewport_size({"width": 390, "height": 800})
    sign_in(page, live_server.url, console_data["operator"].user.username)
    toggle = page.locator("#nav-toggle")
    # A button (for assistive technology too) that says whether the menu is open.
    expect(toggle).to_have_attribute("role", "button")
    expect(toggle).to_have_attribute("aria-controls", "topbar-menu")
    expect(toggle).to_have_attribute("aria-expanded", "false")
    expect(page.locator("#console-nav a").first).to_be_hidden()
    toggle.click()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    assert "#" not in page.url, "the button folds the menu; it does not follow the link"
    expect(page.locator(".nav-close")).to_be_hidden()
    assert_every_link_on_screen(page, 390)
    # The keyboard: Space and Enter fold it shut and open again.
    toggle.focus()
    page.keyboard.press("Space")
    expect(toggle).to_have_attribute("aria-expanded", "false")
    expect(page.locator("#console-nav a").first).to_be_hidden()
    page.keyboard.press("Enter")
    expect(toggle).to_have_attribute("aria-expanded", "true")
    # Every section opens from the menu.
    page.locator("#console-nav a", has_text="Audit").click()
    page.wait_for_url(re.compile(r"/audit/$"))
    expect(page.locator("#nav-toggle")).to_have_attribute("aria-expanded", "false")
    assert traffic.external == []


def test_the_menu_at_390px_without_javascript(live_server, new_page, console_data):
    page, traffic = new_page(java_script_enabled=False, viewport={"width": 390, "height": 800})
    sign_in(page, live_server.url, console_data["operator"].user.username)
    assert page.evaluate("1") == 1  # Playwright's own evaluate still runs; the page's do not
    toggle = page.locator("#nav-toggle")
    expect(toggle).to_be_visible()
    expect(toggle).not_to_have_attribute("role", "button")  # console.js never ran
    expect(page.locator("#console-nav a").first).to_be_hidden()
    toggle.click()
    page.wait_for_url(re.compile(r"#topbar-menu$"))
    assert_every_link_on_screen(page, 390)
    expect(page.locator("#goto-q")).to_be_visible()
    # It closes again, and a section opens from it.
    page.click(".nav-close")
    expect(page.locator("#console-nav a").first).to_be_hidden()
    toggle.click()
    page.locator("#console-nav a", has_text="Snapshots").click()
    page.wait_for_url(re.compile(r"/snapshots/$"))
    expect(page.locator("#console-nav a").first).to_be_hidden()
    overflow, wide = page_overflow(page)
    assert overflow <= 0 and not wide, wide
    assert traffic.external == []
