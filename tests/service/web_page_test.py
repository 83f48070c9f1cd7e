#!/usr/bin/python3
"""The service's web page end to end in headless Chromium, in two servers.

Without a token: submit a job through the form, follow it live on its page
until it succeeds, and check that the charts (loss and accuracy, the
time/cost front with the knee) and predicted against measured time and cost
are there, and that the pages load nothing from anywhere else.

With a token (--token-file): the page asks for it once, keeps it for the
tab, and sends it on every request: the job list loads, a job submitted
through the form is followed on its page, and its Cancel button cancels it.

In both, the browser logs no error (a Content-Security-Policy violation is
one) but the 401 answers that made the page ask for the token.

  tests/service/web_page_test.py TULA_BINARY [--screenshot PNG] [--goal G --goal-value V] [--extra JSON]
                                 [--dataset D] [--timeout S] [--record JSONL] [--skip-token]

--extra replaces the form's "More fields" (default: small_cnn for 2 epochs
on 512 synthetic samples). Exits 77 (skipped) without Chromium,
chromedriver or Selenium.
"""
import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from urllib.parse import urlparse

TOKEN = "0123456789abcdef-page-test-token"


@contextlib.contextmanager
def server(tula, tmp, name, extra=()):
    """A `tula serve` on a free loopback port; yields its base URL."""
    ready = os.path.join(tmp, name + "-ready.json")
    log_path = os.path.join(tmp, name + "-server.log")
    proc = subprocess.Popen([tula, "serve", "--listen", "127.0.0.1:0", "--db", os.path.join(tmp, name + ".db"),
                             "--workdir", os.path.join(tmp, name + "-work"), "--ready-file", ready, *extra],
                            stdout=open(log_path, "w"), stderr=subprocess.STDOUT)
    try:
        deadline = time.time() + 60
        while not os.path.exists(ready):
            if time.time() > deadline or proc.poll() is not None:
                sys.exit("the server did not start:\n" + open(log_path).read())
            time.sleep(0.05)
        yield f"http://127.0.0.1:{json.load(open(ready))['port']}"
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()


def submit_through_form(driver, goal, goal_value, dataset, extra):
    """Fills the job list's form and submits it; returns the job's id from the page it leads to."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait
    Select(driver.find_element(By.ID, "model")).select_by_visible_text("small_cnn")
    Select(driver.find_element(By.ID, "dataset")).select_by_visible_text(dataset)
    Select(driver.find_element(By.ID, "goal")).select_by_value(goal)
    for field, value in (("goal_value", goal_value), ("extra", extra)):
        box = driver.find_element(By.ID, field)
        box.clear()
        box.send_keys(value)
    Select(driver.find_element(By.ID, "objective")).select_by_visible_text("knee")
    driver.find_element(By.ID, "submit_button").click()
    WebDriverWait(driver, 30, poll_frequency=0.2).until(
        lambda d: "/jobs/" in d.current_url,
        message="the form to lead to the job's page (error shown: '%s')" % driver.execute_script(
            "const e = document.getElementById('submit_error'); return e ? e.textContent : '';"))
    return int(urlparse(driver.current_url).path.rsplit("/", 1)[1])


def shown_state(driver):
    """The state the job's page shows (read in one script: the live part is replaced while we look)."""
    return driver.execute_script("const s = document.getElementById('status'); return s ? s.dataset.state : '';")


def severe_logs(driver, allowed=()):
    """The browser's errors since the last call, less those naming one of `allowed`."""
    return [e for e in driver.get_log("browser")
            if e.get("level") == "SEVERE" and not any(a in e.get("message", "") for a in allowed)]


def open_server(driver, base, args):
    """No token: a job through the form, followed to its end, with its charts."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    started = time.time()
    driver.get(base + "/")
    assert not driver.find_element(By.ID, "token_form").is_displayed(), "a server without a token asked for one"
    job_id = submit_through_form(driver, args.goal, args.goal_value, args.dataset, args.extra)
    WebDriverWait(driver, args.timeout, poll_frequency=0.5).until(
        lambda d: shown_state(d) in ("succeeded", "failed", "cancelled"),
        message=f"job {job_id}'s page to show it finished (it shows '{shown_state(driver)}')")
    assert shown_state(driver) == "succeeded", f"job {job_id} ended {shown_state(driver)}"
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
    errors = severe_logs(driver)
    assert not errors, f"the browser logged errors: {errors}"
    if args.record:
        import urllib.request
        with urllib.request.urlopen(f"{base}/v1/jobs/{job_id}") as r:
            detail = json.load(r)
        with open(args.record, "a") as out:
            out.write(json.dumps({"via": "web form", "wall_s": time.time() - started, "job": detail}) + "\n")
    print(f"ok: job {job_id} submitted through the form and followed to 'succeeded' in "
          f"{time.time() - started:.0f} s; charts, knee and predicted-vs-measured present")


def token_server(driver, base, args):
    """A token: asked once, kept for the tab, sent with every request, Cancel included."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    started = time.time()
    driver.get_log("browser")  # what the first scenario logged was checked there
    driver.get(base + "/")
    WebDriverWait(driver, 30, poll_frequency=0.2).until(
        lambda d: d.find_element(By.ID, "token_form").is_displayed(),
        message="the job list to ask for the token")
    driver.find_element(By.ID, "token").send_keys(TOKEN)
    driver.find_element(By.ID, "token_button").click()
    WebDriverWait(driver, 30, poll_frequency=0.2).until(
        lambda d: "no jobs yet" in d.find_element(By.ID, "jobs").text,
        message="the job list to load with the token")
    # A job long enough to be cancelled before it ends.
    job_id = submit_through_form(driver, "epochs", "200", "synthetic", '{"synthetic_size": 2048, "pilot_steps": 6}')
    WebDriverWait(driver, 60, poll_frequency=0.2).until(
        lambda d: shown_state(d) not in ("", None),
        message=f"job {job_id}'s page to show its state with the token")
    assert not driver.find_element(By.ID, "token_form").is_displayed(), "the job's page asked for the token again"
    driver.find_element(By.ID, "cancel").click()
    WebDriverWait(driver, args.timeout, poll_frequency=0.5).until(
        lambda d: shown_state(d) in ("succeeded", "failed", "cancelled"),
        message=f"job {job_id}'s page to show it ended after Cancel (it shows '{shown_state(driver)}', "
                f"the button said '{driver.find_element(By.ID, 'cancel_error').text}')")
    assert shown_state(driver) == "cancelled", f"job {job_id} ended {shown_state(driver)} after Cancel"
    assert driver.find_element(By.ID, "cancel_error").text == "", driver.find_element(By.ID, "cancel_error").text
    # A link to an API answer is fetched with the token and shown on the page.
    driver.find_element(By.CSS_SELECTOR, "a.api-link[href^='/v1/jobs/']").click()
    WebDriverWait(driver, 30, poll_frequency=0.2).until(
        lambda d: '"cancelled"' in d.find_element(By.ID, "raw").text,
        message="the JSON link to show the job's JSON, fetched with the token")
    errors = severe_logs(driver, allowed=("status of 401",))
    assert not errors, f"the browser logged errors: {errors}"
    print(f"ok: with a token, job {job_id} submitted through the form, followed and cancelled from its page in "
          f"{time.time() - started:.0f} s")


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
    ap.add_argument("--skip-token", action="store_true", help="only the server without a token")
    args = ap.parse_args()
    try:
        from selenium import webdriver
    except ImportError:
        print("skipped: python3-selenium is not installed")
        sys.exit(77)
    if not shutil.which("chromedriver") or not (shutil.which("chromium") or shutil.which("chromium-browser")):
        print("skipped: chromium or chromedriver is not installed")
        sys.exit(77)

    with tempfile.TemporaryDirectory() as tmp:
        options = webdriver.ChromeOptions()
        for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,2600"):
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        driver = webdriver.Chrome(options=options)
        try:
            with server(args.tula, tmp, "open") as base:
                open_server(driver, base, args)
                # Leave the page while its server still runs: its polling would log refused connections.
                driver.get("about:blank")
            if not args.skip_token:
                token_file = os.path.join(tmp, "token")
                with open(os.open(token_file, os.O_WRONLY | os.O_CREAT, 0o600), "w") as out:
                    out.write(TOKEN + "\n")
                with server(args.tula, tmp, "token", ["--token-file", token_file]) as base:
                    token_server(driver, base, args)
        finally:
            driver.quit()


if __name__ == "__main__":
    main()
