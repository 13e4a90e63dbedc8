"""Takes the analysis board's screenshot for the docs: a uttt line analysed by the shipped agent.

``python scripts/screenshot_analysis_board.py [OUT]`` (default ``docs/images/analysis_board.png``)
serves the play site's default uttt levels on a free port, opens ``/analysis`` on a short opening
in headless Chromium and saves the page once the agent's analysis is drawn. Needs what the browser
tests need: Debian's chromium and chromium-driver, and selenium.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from urllib.parse import urlencode

from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from ultimate_rl.games import make
from ultimate_rl.play.api import WebPlay
from ultimate_rl.play.levels import default_levels
from ultimate_rl.play.service import PlayService
from ultimate_rl.play.store import Database
from ultimate_rl.play.web import make_server

LINE = "e5 e4 d2 b5 e6 f9 h8 d6"  # a short uttt opening; the board shows the position after it
OUT = Path("docs/images/analysis_board.png")


def main(out: Path) -> None:
    game = make("uttt")
    service = PlayService(game, default_levels(game, seed=0), Database(":memory:"))
    app = WebPlay(service)
    app.board.target(None)[1].get_agent()  # loaded now: the page's first request would wait
    server = make_server(app, "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--window-size=1100,1180"):
        options.add_argument(flag)
    driver = webdriver.Chrome(
        options=options, service=webdriver.ChromeService(executable_path="/usr/bin/chromedriver")
    )
    try:
        port = server.server_address[1]
        driver.get(f"http://127.0.0.1:{port}/analysis?{urlencode({'kind': 'uttt', 'moves': LINE})}")
        plies = str(len(LINE.split()))
        WebDriverWait(driver, 120).until(
            lambda d: d.find_element(By.ID, "board").get_attribute("data-ply") == plies
        )
        out.parent.mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(out))
        print(f"wrote {out}")
    finally:
        driver.quit()
        server.shutdown()
        server.server_close()


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)
