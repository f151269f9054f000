"""The console in a real headless Chromium, against a fresh `till serve --demo` (run by
scripts/console-browser-test, once per engine).

In each language (a browser context whose locale asks for it), signs in through the form with
the token the demo prints, opens every page, checks what each shows against the API's answers
for the same token (figures, and amounts as the language writes them), clicks verify, and
deactivate then its confirmation, finds a customer made for the purpose by a phone number in a
French form, sends their profile form with a bad address then a good one, erases them through
the confirmation, and signs out. Every page is read at a phone's, a tablet's
and a landscape tablet's size: it fails when the document is wider than the window, naming
the page, language, viewport and the element that sticks out furthest; a screenshot of each is
saved. Prints one line per check, then `ENGINE: N passed, N failed`; exits 1 when a check
failed.
"""

import argparse
import json
import re
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from datetime import date, datetime, time as clock, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

from playwright.sync_api import sync_playwright

# The flags the issue names; each run's browser starts with a new empty profile.
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
# A phone, a tablet held upright, a tablet held in landscape: every page is read at each, and
# none may be wider than the screen.
VIEWPORTS = [
    ("phone", {"width": 390, "height": 844}),
    ("tablet", {"width": 768, "height": 1024}),
    ("landscape", {"width": 1180, "height": 820}),
]
LANDSCAPE = VIEWPORTS[-1][1]
# Each language with the browser's locale that asks for it (its Accept-Language).
LANGUAGES = [("fr", "fr-FR"), ("en", "en-GB")]
PARIS = ZoneInfo("Europe/Paris")
NBSP, NNBSP = "\u00a0", "\u202f"

# What the pages say, where a check reads their words.
WORDS = {
    "fr": {"bad-token": "n’est pas valide", "method-card": "Carte bancaire"},
    "en": {"bad-token": "not valid", "method-card": "Card"},
}

# The element that sticks out furthest to the right, when the document is wider than the
# window.
OVERFLOW = """() => {
  const width = window.innerWidth;
  const scrollWidth = document.documentElement.scrollWidth;
  if (scrollWidth <= width) return null;
  let widest = null;
  for (const element of document.querySelectorAll("body *")) {
    const right = element.getBoundingClientRect().right;
    if (right > width + 0.5 && (!widest || right > widest.right)) {
      widest = {
        right: Math.round(right),
        element: element.tagName.toLowerCase() + (element.id ? "#" + element.id : "")
          + (element.getAttribute("class") ? "." + element.getAttribute("class").trim().split(/\\s+/).join(".") : ""),
        text: (element.textContent || "").trim().replace(/\\s+/g, " ").slice(0, 60),
      };
    }
  }
  return {scrollWidth, width, widest};
}"""


def money(cents, language):
    """An amount in euros as the console writes it."""
    sign = "-" if cents < 0 else ""
    units, hundredths = divmod(abs(cents), 100)
    if language == "fr":
        return f"{sign}{units:,}".replace(",", NNBSP) + f",{hundredths:02}{NBSP}€"
    return f"{sign}€{units:,}.{hundredths:02}"


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

    def post(self, path, body):
        request = urllib.request.Request(
            self.base + path,
            data=json.dumps(body).encode(),
            method="POST",
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            return json.loads(answer.read())

    def put(self, path, body):
        request = urllib.request.Request(
            self.base + path,
            data=json.dumps(body).encode(),
            method="PUT",
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"},
        )
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
    def __init__(self, engine, server, shots):
        self.engine, self.server, self.shots = engine, server, shots
        self.passed, self.failed = 0, 0
        self.page, self.language = None, None

    def check(self, name, test):
        name = f"{self.language} {name}"
        try:
            test()
        except Exception as error:  # one failed check must not hide the others
            self.failed += 1
            self.shot(f"FAILED-{name.replace(' ', '-')}")
            print(f"  FAIL {name}: {error}", flush=True)
        else:
            self.passed += 1
            print(f"  ok   {name}", flush=True)

    def shot(self, name):
        self.page.screenshot(path=str(self.shots / f"{self.engine}-{name}.png"), full_page=True)

    def layout(self, name):
        """The page as it is, at every viewport: no wider than the window, and a screenshot of
        each; then back to the landscape tablet the checks read at."""
        page = self.page
        for viewport_name, viewport in VIEWPORTS:
            page.set_viewport_size(viewport)

            def fits():
                lang = page.get_attribute("html", "lang")
                expect(lang == self.language, f"the page is in {lang}")
                overflow = page.evaluate(OVERFLOW)
                expect(
                    overflow is None,
                    f"{viewport['width']}x{viewport['height']}: the document is "
                    f"{overflow and overflow['scrollWidth']} px wide; widest: {overflow and overflow['widest']}",
                )

            self.check(f"{name} at {viewport_name} fits", fits)
            self.shot(f"{self.language}-{name}-{viewport_name}")
        page.set_viewport_size(LANDSCAPE)


def expect(condition, message):
    if not condition:
        raise AssertionError(message)


def run(args):
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    shots = Path(args.screenshots)
    server = Server(args.till, args.database_url, work / "data", work / "server.log")
    outcome = Run(args.engine, server, shots)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=args.chromium, headless=True, args=CHROMIUM_FLAGS)
            for first, (language, locale) in enumerate(LANGUAGES):
                # A context of its own per language: its own cookies, its own sign-in, and the
                # browser's Accept-Language from its locale.
                context = browser.new_context(locale=locale, viewport=LANDSCAPE)
                page = context.new_page()
                policy_errors = []
                # A content security policy violation shows as a console error. Answers with an
                # error status (the refused sign-in, the 404 page) show as "Failed to load
                # resource": the checks read statuses themselves.
                page.on(
                    "console",
                    lambda message, errors=policy_errors: message.type == "error"
                    and not message.text.startswith("Failed to load resource")
                    and errors.append(message.text),
                )
                outcome.page, outcome.language = page, language
                checks(outcome, page, server, policy_errors, language, first == 0, first == len(LANGUAGES) - 1)
                context.close()
            browser.close()
    finally:
        server.stop()
    print(f"{args.engine}: {outcome.passed} passed, {outcome.failed} failed", flush=True)
    if "panicked" in (work / "server.log").read_text():
        print("  FAIL the server logged a panic", flush=True)
        return 1
    return 1 if outcome.failed else 0


def checks(run, page, server, policy_errors, language, first, last):
    words = WORDS[language]
    other = next(code for code, _ in LANGUAGES if code != language)

    def nav(href):
        page.click(f"nav.pages a[href='{href}']")
        page.wait_for_url(f"**{href}")

    def sign_in():
        page.goto(server.console)
        expect(page.url.endswith("/console/sign-in"), f"not sent to sign in: {page.url}")
        expect(page.get_attribute("html", "lang") == language, "the browser's language is chosen")
        run.layout("sign-in")
        page.fill("#token", "not-a-token")
        page.click("form.sign-in button")
        expect(words["bad-token"] in page.inner_text("main"), "a bad token is not refused plainly")
        page.fill("#token", server.token)
        page.click("form.sign-in button")
        page.wait_for_url(server.console)
        cookies = page.context.cookies()
        cookie = next(c for c in cookies if c["name"] == "till_console")
        expect(cookie["httpOnly"] and cookie["sameSite"] == "Strict", f"cookie {cookie}")
        expect(server.token not in page.url, "the token is in the address")

    def switch():
        # The switch in the frame changes the language of the same page, and back.
        page.click(f"nav.lang a[hreflang='{other}']")
        page.wait_for_url(server.console)
        expect(page.get_attribute("html", "lang") == other, f"switched to {other}")
        page.click(f"nav.lang a[hreflang='{language}']")
        page.wait_for_url(server.console)
        expect(page.get_attribute("html", "lang") == language, f"back to {language}")

    def today():
        page.goto(server.console)
        day = date.fromisoformat(page.input_value("#date"))
        report = server.api(f"/v1/reports/sales?groupBy=hour&{paris_day(day)}")
        vat = server.api(f"/v1/reports/sales?groupBy=vat&{paris_day(day)}")
        tenders = server.api(f"/v1/reports/sales?groupBy=tender&{paris_day(day)}")
        totals = report["totals"]
        expect(totals["salesCount"] >= 12, f"the demo sold today: {totals}")
        expect(value(page, "#sales-count") == str(totals["salesCount"]), "sales count")
        expect(value(page, "#revenue") == str(totals["totalCents"]), "revenue")
        shown = page.text_content("#revenue")
        expect(shown == money(totals["totalCents"], language), f"revenue written {shown!r}")
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
        for row in tenders["rows"]:
            cell = page.text_content(f"#tenders tr[data-method='{row['key']}'] td:nth-child(3)")
            expect(cell == money(row["totalCents"], language), f"{row['key']}: {cell!r}")
        if any(row["key"] == "card" for row in tenders["rows"]):
            method = page.text_content("#tenders tr[data-method='card'] td:first-child")
            expect(method == words["method-card"], f"card is named {method!r}")
        run.layout("today")

    def registers():
        nav("/console/registers")
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
        run.layout("registers")

    def sales():
        nav("/console/sales")
        listed = server.api("/v1/sales?limit=50")["items"]
        rows = page.query_selector_all("#sales tbody tr[data-transaction]")
        expect(len(rows) == len(listed), f"{len(rows)} rows, {len(listed)} sales")
        for row, sale in zip(rows, listed):
            expect(row.get_attribute("data-transaction") == sale["transactionId"], "order")
            expect(row.get_attribute("data-total") == str(sale["totalCents"]), "total")
            total = row.query_selector("td:last-child").text_content()
            expect(total == money(sale["totalCents"], language), f"total written {total!r}")
        run.layout("sales")
        rows[0].query_selector("a").click()
        page.wait_for_selector("#receipt")
        sale = server.api(f"/v1/sales/{urllib.parse.quote(listed[0]['transactionId'])}")
        expect(value(page, "#total") == str(sale["transaction"]["totals"]["total"]), "the sale's total")
        expect("TOTAL TTC" in page.inner_text("#receipt"), "the receipt is shown")
        run.layout("sale")

    def promotions():
        # The demo's promotion the first time, one made for the purpose after.
        rule_id = "baguettes-3-pour-2"
        if not first:
            rule_id = f"console-{language}"
            server.post("/v1/promotions", {"id": rule_id, "name": f"Soldes {language}",
                "validFrom": "2026-01-07T07:00:00Z", "validUntil": "2099-02-03T22:59:00Z", "priority": 0,
                "exclusive": False, "active": True, "type": "percent_off", "percentBps": 1000})
        nav("/console/promotions")
        row = f"tr[data-promotion='{rule_id}']"
        expect(value(page, row, "data-active") == "true", "the promotion is active")
        # The button only asks; the confirmation's button deactivates.
        page.click(f"{row} button")
        page.wait_for_selector("#confirm")
        expect(server.api(f"/v1/promotions/{rule_id}/rule")["active"] is True, "asking changed nothing")
        run.layout("promotion-confirm")
        page.click("#confirm button.danger")
        page.wait_for_url("**/console/promotions")
        expect(value(page, row, "data-active") == "false", "deactivated on the page")
        rule = server.api(f"/v1/promotions/{rule_id}/rule")
        expect(rule["active"] is False, "deactivated in the API")
        run.layout("promotions")

    def stored_value():
        nav("/console/stored-value")
        page.fill("#code", "CADEAU23456789AB")
        page.click("form.picker button")
        page.wait_for_selector("#instrument")
        card = server.api("/v1/gift-cards/CADEAU23456789AB")
        expect(value(page, "#instrument", "data-balance") == str(card["balanceCents"]), "balance")
        expect(page.text_content("#balance") == money(card["balanceCents"], language), "balance written")
        expect(value(page, "#instrument", "data-state") == card["state"], "state")
        rows = page.query_selector_all("#activities tbody tr")
        expect(len(rows) == len(card["activities"]), "ledger")
        run.layout("stored-value")

    def stock():
        nav("/console/stock")
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
                run.layout("stock")

    def customers():
        # A customer made for the purpose in each language, found by a phone number in a
        # French form, edited (a bad address first), asked about, then erased.
        customer_id = f"console-{language}"
        phone = "06 12 34 56 0" + ("1" if first else "2")
        server.put(f"/v1/customers/{customer_id}", {"displayName": f"Camille Console {language}",
            "email": f"camille.{language}@example.fr", "phone": phone, "groups": ["habitués"],
            "consent": {"marketingEmail": True, "marketingSms": False, "eReceipt": True}})
        nav("/console/customers")
        page.fill("#q", phone)
        page.click("form.picker button")
        page.wait_for_selector(f"#customers tr[data-customer='{customer_id}']")
        rows = page.query_selector_all("#customers tbody tr[data-customer]")
        expect(len(rows) == 1, f"{len(rows)} customers found by {phone}")
        run.layout("customers")
        rows[0].query_selector("a").click()
        page.wait_for_selector("#profile")
        held = server.api(f"/v1/customers/{customer_id}")
        expect(value(page, "#profile", "data-points") == str(held["loyaltyPoints"]), "points")
        expect(page.text_content("#phone") == held["phone"], "phone")
        history = page.query_selector_all("#consent-history tr[data-flag]")
        expect(len(history) == 2, f"{len(history)} consent changes shown")
        run.layout("customer")
        page.fill("#edit-email", "camille@localhost")
        page.click("form.profile > button")
        page.wait_for_selector(".field-problem[data-field='email']")
        expect(server.api(f"/v1/customers/{customer_id}")["email"] == held["email"], "a bad address changed nothing")
        run.layout("customer-refused")
        page.fill("#edit-email", f"camille.{language}@exemple.fr")
        page.check("input[name='marketingSms']")
        with page.expect_navigation():
            page.click("form.profile > button")
        page.wait_for_selector("#profile")
        saved = server.api(f"/v1/customers/{customer_id}")
        expect(saved["email"] == f"camille.{language}@exemple.fr" and saved["consent"]["marketingSms"], f"saved: {saved}")
        export = server.api(f"/v1/customers/{customer_id}/export")
        expect(export["consentHistory"][-1]["source"] == "console", "the console is the source")
        page.click("#erase")
        page.wait_for_selector("#confirm")
        expect(server.api(f"/v1/customers/{customer_id}")["erasedAt"] is None, "asking erased nothing")
        run.layout("customer-erase-confirm")
        page.click("#confirm button.danger")
        page.wait_for_selector("#erased")
        expect(server.api(f"/v1/customers/{customer_id}")["erasedAt"] is not None, "erased")
        expect("Camille" not in page.inner_text("main"), "a personal value is still shown")
        expect(page.query_selector("form.profile") is None, "an erased customer has no form")
        run.layout("customer-erased")

    def no_page():
        answer = page.goto(f"{server.base}/console/no-such-page")
        expect(answer.status == 404, f"{answer.status}")
        run.layout("not-found")

    def sign_out():
        # Signing out keeps the demo's token out of the console for good: the last language
        # signs out.
        if not last:
            return
        page.goto(server.console)
        page.click("form.sign-out button")
        page.wait_for_url("**/console/sign-in")
        page.goto(server.console)
        expect(page.url.endswith("/console/sign-in"), "signed out")

    def no_policy_violation():
        expect(not policy_errors, f"errors in the browser's console: {policy_errors}")

    for name, test in [
        ("sign-in", sign_in),
        ("switch", switch),
        ("today", today),
        ("registers", registers),
        ("sales", sales),
        ("promotions", promotions),
        ("stored-value", stored_value),
        ("stock", stock),
        ("customers", customers),
        ("not-found", no_page),
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
