#!/usr/bin/python3
"""The service's web page end to end in headless Chromium: submit a job
through the form, follow it live on its page until it succeeds, and check
that the charts (loss and accuracy, the time/cost front with the knee) and
predicted against measured time and cost are there, and that the pages load
nothing from anywhere else.

  tests/service/web_page_test.py TULA_BINARY [--screenshot PNG] [--job JSON] [--timeout S]

--job replaces the form's "More fields" and goal (default: small_cnn for 2
epochs on 512 synthetic samples). Exits 77 (skipped) without Chromium,
chromedriver or Selenium.
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from urllib.parse import urlparse


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tula")
    ap.add_argument("--screenshot")
    ap.add_argument("--goal", default="epochs", choices=["epochs", "target_accuracy"])
    ap.add_argument("--goal-value", default="2")
    ap.add_argument("--dataset", default="synthetic")
    ap.add_argument("--extra", default='{"synthetic_size": 512, "pilot_steps": 6, "watch_every": 4}')
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--record", help="append the finished job's JSON to this file")
    args = ap.parse_args()
    try:
        from selenium import webdriver
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import Select, WebDriverWait
    except ImportError:
        print("skipped: python3-selenium is not installed")
        sys.exit(77)
    if not shutil.which("chromedriver") or not (shutil.which("chromium") or shutil.which("chromium-browser")):
        print("skipped: chromium or chromedriver is not installed")
        sys.exit(77)

    with tempfile.TemporaryDirectory() as tmp:
        ready = os.path.join(tmp, "ready.json")
        log_path = os.path.join(tmp, "server.log")
        server = subprocess.Popen([args.tula, "serve", "--listen", "127.0.0.1:0", "--db", os.path.join(tmp, "jobs.db"),
                                   "--workdir", os.path.join(tmp, "work"), "--ready-file", ready],
                                  stdout=open(log_path, "w"), stderr=subprocess.STDOUT)
        driver = None
        try:
            deadline = time.time() + 60
            while not os.path.exists(ready):
                if time.time() > deadline or server.poll() is not None:
                    sys.exit("the server did not start:\n" + open(log_path).read())
                time.sleep(0.05)
            base = f"http://127.0.0.1:{json.load(open(ready))['port']}"
            options = webdriver.ChromeOptions()
            for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,2600"):
                options.add_argument(flag)
            options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
            driver = webdriver.Chrome(options=options)
            started = time.time()

            driver.get(base + "/")
            Select(driver.find_element(By.ID, "model")).select_by_visible_text("small_cnn")
            Select(driver.find_element(By.ID, "dataset")).select_by_visible_text(args.dataset)
            Select(driver.find_element(By.ID, "goal")).select_by_value(args.goal)
            for field, value in (("goal_value", args.goal_value), ("extra", args.extra)):
                box = driver.find_element(By.ID, field)
                box.clear()
                box.send_keys(value)
            Select(driver.find_element(By.ID, "objective")).select_by_visible_text("knee")
            driver.find_element(By.ID, "submit_button").click()
            WebDriverWait(driver, 30, poll_frequency=0.2).until(
                lambda d: "/jobs/" in d.current_url, message="the form to lead to the job's page")
            job_id = int(urlparse(driver.current_url).path.rsplit("/", 1)[1])

            def state(d):  # read in one script: the live part is replaced while we look
                return d.execute_script("const s = document.getElementById('status'); return s ? s.dataset.state : '';")

            WebDriverWait(driver, args.timeout, poll_frequency=0.5).until(
                lambda d: state(d) in ("succeeded", "failed", "cancelled"),
                message=f"job {job_id}'s page to show it finished (it shows '{state(driver)}')")
            assert state(driver) == "succeeded", f"job {job_id} ended {state(driver)}"
            # The last redraw after the end event brings the final report in.
            WebDriverWait(driver, 30, poll_frequency=0.5).until(
                lambda d: d.find_elements(By.CSS_SELECTOR, "section#choice svg"),
                message="the time/cost front (section#choice svg) on the job's page")
            curves = driver.find_elements(By.CSS_SELECTOR, "section#curves svg")
            assert len(curves) == 2, f"expected the loss and the accuracy charts, found {len(curves)} SVGs"
            drawn = driver.find_elements(By.CSS_SELECTOR, "section#curves svg path, section#curves svg polyline")
            assert drawn, "the loss and accuracy charts draw no line"
            knee = driver.find_element(By.CSS_SELECTOR, "section#choice").text
            assert "knee" in knee.lower(), "section#choice does not mention the knee: " + knee[:300]
            pm = driver.find_element(By.ID, "predicted-vs-measured").text
            assert "predicted" in pm and "measured" in pm and "not yet planned" not in pm, pm
            assert driver.find_elements(By.CSS_SELECTOR, "section#run svg"), "no predicted-against-measured chart"
            if args.screenshot:
                driver.save_screenshot(args.screenshot)

            for url in (driver.current_url, base + "/"):
                driver.get(url)
                for tag, attr in (("script", "src"), ("link", "href"), ("img", "src")):
                    for e in driver.find_elements(By.TAG_NAME, tag):
                        ref = e.get_attribute(attr)
                        if ref and urlparse(ref).netloc not in ("", urlparse(base).netloc):
                            sys.exit(f"{url} loads {ref} from elsewhere: the page must work offline")
            WebDriverWait(driver, 30, poll_frequency=0.2).until(
                lambda d: "succeeded" in d.execute_script(
                    f"const r = document.getElementById('job-{job_id}'); return r ? r.textContent : '';"),
                message=f"the job list to show job {job_id} succeeded")
            errors = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
            assert not errors, f"the browser logged errors: {errors}"
            if args.record:
                import urllib.request
                with urllib.request.urlopen(f"{base}/v1/jobs/{job_id}") as r:
                    detail = json.load(r)
                with open(args.record, "a") as out:
                    out.write(json.dumps({"via": "web form", "wall_s": time.time() - started, "job": detail}) + "\n")
            print(f"ok: job {job_id} submitted through the form and followed to 'succeeded' in "
                  f"{time.time() - started:.0f} s; charts, knee and predicted-vs-measured present")
        finally:
            if driver:
                driver.quit()
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(timeout=120)
            except subprocess.TimeoutExpired:
                server.kill()


if __name__ == "__main__":
    main()
