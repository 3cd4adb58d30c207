"""The console honours the system's "reduce motion" setting: the spinners of running work
(jobs, readbacks, release gates, drills) stop turning and regions stop fading."""

from __future__ import annotations

import pytest

from tests.browser.test_console_habits import sign_in
from tests.browser.test_console_offline import (  # noqa: F401 (fixtures)
    CHROMIUM,
    browser_page,
    console_data,
)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's Chromium"),
]

# A spinner as the polling panels draw it, and the region the filters swap.
MOTION = """() => {
  const spinner = document.createElement('span');
  spinner.className = 'spinner';
  document.querySelector('main').appendChild(spinner);
  const turning = getComputedStyle(spinner);
  const region = getComputedStyle(document.querySelector('.table-region'));
  const seconds = (value) => Math.max(...value.split(',').map(parseFloat));
  return {
    turns: turning.animationName !== 'none' && turning.animationIterationCount === 'infinite',
    spin: seconds(turning.animationDuration),
    fade: seconds(region.transitionDuration),
  };
}"""


@pytest.mark.parametrize("motion", ["no-preference", "reduce"])
def test_spinners_and_fades_follow_the_motion_setting(
    live_server, browser_page, console_data, motion
):
    page, traffic = browser_page
    page.emulate_media(reduced_motion=motion)
    sign_in(page, live_server.url, console_data["operator"].user.username)
    page.goto(f"{live_server.url}/snapshots/")
    page.add_style_tag(url=f"{live_server.url}/static/reconcile/oversight.css")
    found = page.evaluate(MOTION)
    if motion == "reduce":
        assert not found["turns"] and found["spin"] < 0.01 and found["fade"] < 0.01, found
    else:
        assert found["turns"] and found["spin"] > 0.5 and found["fade"] > 0.1, found
    assert traffic.external == []
