"""The console in a real headless Chromium, against a fresh `till serve --demo` (run by
scripts/console-browser-test, once per engine).

Signs in through the form with the token the demo prints, opens every page, checks what each
shows against the API's answers for the same token, clicks verify and deactivate, signs out,
and saves a screenshot of every page. Prints one line per check, then `ENGINE: N passed,
N failed`; exits 1 when a check failed.
"""

import argparse
import json
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from datetime import date, datetime, time as clock, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

from playwright.sync_api import sync_playwright

# The flags the issue names, with a new empty profile per run.
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# A tablet held in landscape.
VIEWPORT = {"width": 1180, "height": 820}
PARIS = ZoneInfo("Europe/Paris")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """`till serve --demo` on a free port; the token it prints."""

    def __init__(self, till, database_url, data_dir, log):
        port = free_port()
        self.base = f"http://127.0.0.1:{port}"
        self.log = log
        env = {
            "TILL_DATABASE_URL": database_url,
            "TILL_DATA_DIR": str(data_dir),
            "TILL_LISTEN": f"127.0.0.1:{port}",
            "PATH": "/usr/bin:/bin",
        }
        self.process = subprocess.Popen([till, "serve", "--demo"], env=env, stdout=log.open("w"), stderr=subprocess.STDOUT)
        deadline = time.time() + 120
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise SystemExit(f"the server stopped:\n{log.read_text()}")
            printed = log.read_text()
            token = re.search(r"^export TILL_TOKEN=(\S+)$", printed, re.M)
            console = re.search(r"^# console: (\S+)$", printed, re.M)
            if token and console:
                self.token = token.group(1)
                self.console = console.group(1)
                return
            time.sleep(0.2)
        raise SystemExit(f"the server did not print its token:\n{log.read_text()}")

    def api(self, path):
        request = urllib.request.Request(self.base + path, headers={"Authorization": f"Bearer {self.token}"})
        with urllib.request.urlopen(request, timeout=30) as answer:
            return json.loads(answer.read())

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=30)


def utc(instant):
    return instant.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def paris_day(day):
    """The period of a Paris calendar day, as the report reads it."""
    start = datetime.combine(day, clock(0), PARIS)
    end = datetime.combine(day + timedelta(days=1), clock(0), PARIS)
    return f"from={utc(start)}&to={utc(end)}"


def value(page, selector, attribute="data-value"):
    return page.get_attribute(selector, attribute)


class Run:
    def __init__(self, engine, server, page, shots):
        self.engine, self.server, self.page, self.shots = engine, server, page, shots
        self.passed, self.failed = 0, 0

    def check(self, name, test):
        try:
            test()
        except Exception as error:  # one failed check must not hide the others
            self.failed += 1
            self.shot(f"FAILED-{name}")
            print(f"  FAIL {name}: {error}", flush=True)
        else:
            self.passed += 1
            print(f"  ok   {name}", flush=True)

    def shot(self, name):
        self.page.screenshot(path=str(self.shots / f"{self.engine}-{name}.png"), full_page=True)


def expect(condition, message):
    if not condition:
        raise AssertionError(message)


def run(args):
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    shots = Path(args.screenshots)
    server = Server(args.till, args.database_url, work / "data", work / "server.log")
    policy_errors = []
    try:
        with sync_playwright() as playwright, tempfile.TemporaryDirectory() as profile:
            context = playwright.chromium.launch_persistent_context(
                profile,
                executable_path=args.chromium,
                headless=True,
                args=CHROMIUM_FLAGS,
                viewport=VIEWPORT,
            )
            page = context.new_page()
            # A content security policy violation shows as a console error. Answers with an
            # error status (the refused sign-in, the browser's own /favicon.ico) show as
            # "Failed to load resource": the checks read statuses themselves.
            page.on(
                "console",
                lambda message: message.type == "error"
                and not message.text.startswith("Failed to load resource")
                and policy_errors.append(message.text),
            )
            outcome = Run(args.engine, server, page, shots)
            checks(outcome, page, server, policy_errors)
            context.close()
    finally:
        server.stop()
    print(f"{args.engine}: {outcome.passed} passed, {outcome.failed} failed", flush=True)
    if "panicked" in (work / "server.log").read_text():
        print("  FAIL the server logged a panic", flush=True)
        return 1
    return 1 if outcome.failed else 0


def checks(run, page, server, policy_errors):
    def sign_in():
        page.goto(server.console)
        expect(page.url.endswith("/console/sign-in"), f"not sent to sign in: {page.url}")
        run.shot("sign-in")
        page.fill("#token", "not-a-token")
        page.click("form.sign-in button")
        expect("not valid" in page.inner_text("main"), "a bad token is not refused plainly")
        page.fill("#token", server.token)
        page.click("form.sign-in button")
        page.wait_for_url(server.console)
        cookies = page.context.cookies()
        cookie = next(c for c in cookies if c["name"] == "till_console")
        expect(cookie["httpOnly"] and cookie["sameSite"] == "Strict", f"cookie {cookie}")
        expect(server.token not in page.url, "the token is in the address")

    def today():
        page.goto(server.console)
        day = date.fromisoformat(page.input_value("#date"))
        report = server.api(f"/v1/reports/sales?groupBy=hour&{paris_day(day)}")
        vat = server.api(f"/v1/reports/sales?groupBy=vat&{paris_day(day)}")
        totals = report["totals"]
        expect(totals["salesCount"] >= 12, f"the demo sold today: {totals}")
        expect(value(page, "#sales-count") == str(totals["salesCount"]), "sales count")
        expect(value(page, "#revenue") == str(totals["totalCents"]), "revenue")
        expect(value(page, "#vat-total") == str(vat["totals"]["vatCents"]), "VAT")
        average = round(totals["totalCents"] / totals["salesCount"])
        expect(abs(int(value(page, "#average-basket")) - average) <= 1, "average basket")
        bars = page.query_selector_all("svg.chart rect.bar")
        expect(len(bars) == 24, f"{len(bars)} bars")
        drawn = {int(bar.get_attribute("data-hour")): int(bar.get_attribute("data-sales")) for bar in bars}
        for row in report["rows"]:
            hour = int(row["key"][11:13])
            expect(drawn[hour] == row["salesCount"], f"hour {hour}: {drawn[hour]} drawn, {row['salesCount']} sold")
        expect(sum(drawn.values()) == totals["salesCount"], "the bars add up to the sales")
        expect(page.locator("svg.chart rect.bar").first.bounding_box()["width"] > 0, "the chart is drawn")
        run.shot("today")

    def registers():
        page.click("nav >> text=Registers")
        page.wait_for_url("**/console/registers")
        expect(page.is_visible("#register-till-1 p.open"), "till-1 has its open session")
        sold = server.api("/v1/sales?registerId=till-2&limit=100")["items"]
        z_sales = page.inner_text("#register-till-2 table.z-reports tbody tr td:nth-child(3)")
        expect(z_sales == str(len(sold)), f"till-2's Z report counts {z_sales}, {len(sold)} sold")
        page.click("#register-till-2 form.verify button")
        page.wait_for_selector("#verdict")
        verdict = server.api("/v1/fiscal/registers/till-2/verify")
        expect(value(page, "#verdict", "data-ok") == "true" and verdict["ok"], "till-2's journal holds")
        expect(value(page, "#verdict", "data-entries") == str(verdict["entries"]), "entries")
        for chain, entries in verdict["chains"].items():
            shown = page.inner_text(f"#verdict tr[data-chain='{chain}'] td.n")
            expect(shown == str(entries), f"{chain}: {shown} shown, {entries} verified")
        run.shot("registers")

    def sales():
        page.click("nav >> text=Sales")
        page.wait_for_url("**/console/sales")
        listed = server.api("/v1/sales?limit=50")["items"]
        rows = page.query_selector_all("#sales tbody tr[data-transaction]")
        expect(len(rows) == len(listed), f"{len(rows)} rows, {len(listed)} sales")
        for row, sale in zip(rows, listed):
            expect(row.get_attribute("data-transaction") == sale["transactionId"], "order")
            expect(row.get_attribute("data-total") == str(sale["totalCents"]), "total")
        run.shot("sales")
        rows[0].query_selector("a").click()
        page.wait_for_selector("#receipt")
        sale = server.api(f"/v1/sales/{urllib.parse.quote(listed[0]['transactionId'])}")
        expect(value(page, "#total") == str(sale["transaction"]["totals"]["total"]), "the sale's total")
        expect("TOTAL TTC" in page.inner_text("#receipt"), "the receipt is shown")
        run.shot("sale")

    def promotions():
        page.click("nav >> text=Promotions")
        page.wait_for_url("**/console/promotions")
        row = "tr[data-promotion='baguettes-3-pour-2']"
        expect(value(page, row, "data-active") == "true", "the demo's promotion is active")
        page.click(f"{row} button")
        page.wait_for_url("**/console/promotions")
        expect(value(page, row, "data-active") == "false", "deactivated on the page")
        rule = server.api("/v1/promotions/baguettes-3-pour-2/rule")
        expect(rule["active"] is False, "deactivated in the API")
        run.shot("promotions")

    def stored_value():
        page.click("nav >> text=Gift cards")
        page.fill("#code", "CADEAU23456789AB")
        page.click("form.picker button")
        page.wait_for_selector("#instrument")
        card = server.api("/v1/gift-cards/CADEAU23456789AB")
        expect(value(page, "#instrument", "data-balance") == str(card["balanceCents"]), "balance")
        expect(value(page, "#instrument", "data-state") == card["state"], "state")
        rows = page.query_selector_all("#activities tbody tr")
        expect(len(rows) == len(card["activities"]), "ledger")
        run.shot("stored-value")

    def stock():
        page.click("nav >> text=Stock")
        page.fill("#q", "cafe a emp")
        page.click("form.picker button")
        page.wait_for_selector("#found a")
        page.click("#found a")
        page.wait_for_selector("#article")
        sku = value(page, "#article", "data-sku")
        levels = page.query_selector_all("#levels tr.level")
        expect(len(levels) == 2, f"{len(levels)} stores")
        for level in levels:
            store = level.get_attribute("data-store")
            stock = server.api(f"/v1/stores/{store}/stock/{sku}")
            expect(level.get_attribute("data-on-hand") == str(stock["onHand"]), f"{store} on hand")
        # The movements of the first store holding it, then of another one picked.
        for pick in [None, "lyon-presqu-ile"]:
            if pick:
                page.click(f"#levels tr[data-store='{pick}'] a")
                page.wait_for_selector(f"#movements[data-store='{pick}']")
            store = value(page, "#movements", "data-store")
            ledger = server.api(f"/v1/stores/{store}/stock/{sku}/movements?limit=500")["items"]
            shown = [int(row.get_attribute("data-movement")) for row in page.query_selector_all("#movements tr[data-movement]")]
            newest = [movement["id"] for movement in reversed(ledger)][:10]
            expect(shown == newest, f"{store}: {shown} shown, latest {newest}")
            expect(pick or (store == "paris-marais" and shown), "the store holding it first")
            if not pick:
                run.shot("stock")

    def sign_out():
        page.click("form.sign-out button")
        page.wait_for_url("**/console/sign-in")
        page.goto(server.console)
        expect(page.url.endswith("/console/sign-in"), "signed out")

    def no_policy_violation():
        expect(not policy_errors, f"errors in the browser's console: {policy_errors}")

    for name, test in [
        ("sign-in", sign_in),
        ("today", today),
        ("registers", registers),
        ("sales", sales),
        ("promotions", promotions),
        ("stored-value", stored_value),
        ("stock", stock),
        ("sign-out", sign_out),
        ("no-policy-violation", no_policy_violation),
    ]:
        run.check(name, test)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--till", required=True)
    parser.add_argument("--chromium", required=True)
    parser.add_argument("--engine", required=True)
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--screenshots", required=True)
    sys.exit(run(parser.parse_args()))


if __name__ == "__main__":
    main()
