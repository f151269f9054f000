// The till in the browser: pairing, the cashier's session, the sale, the cash tender, the
// queue of sales (the outbox) and the shift's reports. Screens (`src/screens/`) are plain DOM,
// redrawn from the state below; prices come from the offline Pricer over the store's snapshot,
// so the till shows and sends exactly what the server books, online or not.
//
// A payment is tender by tender (`src/payment.ts`): cash, and cards through a payment attempt
// the server records before the terminal is asked; the sale body is built in one place
// (`saleBody`).

import { TillClient, TillError, TillUnreachable } from "../../typescript/src/client.js";
import type { ResponseBody } from "../../typescript/src/client.js";
import { IndexedDbStorage, OfflineStore } from "../../typescript/src/offline/index.js";
import type { ArticleRecord, OfflineStorage, StaffMember } from "../../typescript/src/offline/index.js";
import { Outbox } from "../../typescript/src/outbox/index.js";
import type { SetAsideEntry } from "../../typescript/src/outbox/index.js";
import type { Pricer, PriceResult } from "../../typescript/src/pricing/index.js";
import { h, replace } from "./dom.js";
import {
  nextTicketNumber,
  pairingFromFragment,
  readLastSale,
  readPairing,
  readSession,
  writeLastSale,
  writePairing,
  writeSession,
} from "./device.js";
import type { LastSale, Pairing, SessionKept } from "./device.js";
import { amountText, currentLang, money, setLang, t } from "./i18n.js";
import { cardTender, cashTender, remaining } from "./payment.js";
import type { CardAnswer, LeftOpenCard, Payment } from "./payment.js";
import { findCustomers, saleCustomer } from "./customer.js";
import { declaredDiscount, mayGrantAlone } from "./discount.js";
import type { DiscountKind, DiscountReason, SaleDiscount } from "./discount.js";
import type { CustomerView, SaleCustomer } from "./customer.js";
import { refundOf, registerOfNumber, returnBody } from "./returns.js";
import type { RefundMethod, ReturnDraft } from "./returns.js";
import { saleBody } from "./sale.js";
import type { CartLine } from "./sale.js";
import type { Finished, MovementKind, ReturnDone, Screen, XReport } from "./screen.js";
import { describe, header, methodName, setAsidePanel, statusBar } from "./screens/common.js";
import { approveScreen, discountScreen } from "./screens/discount.js";
import { movementScreen, reportScreen } from "./screens/drawer.js";
import { cardScreen, doneScreen, leftOpenScreen, payScreen, provisionalSlip, reprintScreen } from "./screens/pay.js";
import { returnDoneScreen, returnFindScreen, returnScreen } from "./screens/returns.js";
import { SellView, customerScreen } from "./screens/sell.js";
import { closeScreen, pairScreen, signInScreen } from "./screens/session.js";

const BASE = location.origin;
const SYNC_EVERY_MS = 15_000;
const MAX_QUANTITY = 9999;

export class Till {
  storage!: OfflineStorage;
  pairing: Pairing | null = null;
  session: SessionKept | null = null;
  store: OfflineStore | null = null;
  outbox: Outbox | null = null;
  articles: ArticleRecord[] = [];
  byBarcode = new Map<string, ArticleRecord>();
  staff: StaffMember[] = [];
  snapshotAt: string | null = null;
  online = navigator.onLine;
  waiting = 0;
  setAside: SetAsideEntry[] = [];
  showSetAside = false;
  cart: CartLine[] = [];
  lineSeq = 0;
  results: ArticleRecord[] = [];
  notice: { text: string; bad: boolean } | null = null;
  priced: PriceResult | null = null;
  /** The sale being paid, tender by tender; null while selling. */
  payment: Payment | null = null;
  /** A card call is on its way: its buttons wait. */
  cardBusy = false;
  /** The declared discount of the sale being rung, approved when it had to be. */
  discount: SaleDiscount | null = null;
  /** The customer attached to the sale being rung. */
  customer: SaleCustomer | null = null;
  /** Sales and returns the server refused on arrival, with its reason (set aside by the outbox). */
  refused = new Map<string, string>();
  pricer: Pricer | null = null;
  screen: Screen = { name: "loading" };
  booked = new Set<string>();
  /** The server's answers to the returns the outbox sent (a credit note's code is in it, once). */
  answers = new Map<string, string>();
  /** The return being prepared against a receipt. */
  returning: ReturnDraft | null = null;
  /** The last sale finished here (kept across reloads): what the sale screen reprints. */
  lastSale: LastSale | null = null;
  /** A reprint is on its way to the server: its button waits. */
  reprinting = false;
  /** The staff id typed at the last sign-in, kept when it is refused. */
  lastCashier = "";
  /** This session's card attempts left open by payments the till no longer holds. */
  leftOpen: LeftOpenCard[] = [];
  private leftOpenAt = 0;
  /** The sale screen as last drawn, updated in place while it stays on the page. */
  private sellView: SellView | null = null;
  private syncTimer: number | null = null;
  private syncing: Promise<void> | null = null;

  root = document.getElementById("app") ?? document.body;

  async boot(): Promise<void> {
    this.storage = await IndexedDbStorage.open("till");
    const fromFragment = pairingFromFragment(location.hash, new Date());
    if (location.hash.includes("pair=")) {
      // The token leaves the address bar (and the history) at once.
      history.replaceState(null, "", location.pathname + location.search);
    }
    if (fromFragment !== null) {
      const before = await readPairing(this.storage);
      if (before !== null && (before.storeId !== fromFragment.storeId || before.registerId !== fromFragment.registerId)) {
        await writeSession(this.storage, null);
      }
      await writePairing(this.storage, fromFragment);
    }
    this.pairing = await readPairing(this.storage);
    this.session = await readSession(this.storage);
    this.lastSale = await readLastSale(this.storage);
    this.lastCashier = this.session?.cashierSubject ?? "";
    addEventListener("online", () => void this.syncNow());
    addEventListener("offline", () => {
      this.online = false;
      this.renderStatus();
    });
    document.addEventListener("keydown", (event) => this.onKey(event));
    // A pairing address opened on a page already showing the till changes only the fragment:
    // start again from it.
    addEventListener("hashchange", () => {
      if (location.hash.includes("pair=")) location.reload();
    });
    if (this.pairing === null) {
      this.go({ name: "pair" });
      return;
    }
    await this.startPaired();
  }

  private deviceClient(): TillClient {
    return new TillClient({ baseUrl: BASE, token: this.pairing?.token ?? "", timeoutMs: 10_000 });
  }

  private sessionClient(): TillClient {
    return new TillClient({ baseUrl: BASE, token: this.session?.token ?? "", timeoutMs: 10_000 });
  }

  private async startPaired(): Promise<void> {
    const pairing = this.pairing;
    if (pairing === null) return;
    this.store = new OfflineStore({ client: this.deviceClient(), storage: this.storage, storeId: pairing.storeId });
    await this.outbox?.stop();
    this.outbox = new Outbox({
      client: new TillClient({ baseUrl: BASE, timeoutMs: 10_000 }),
      storage: this.storage,
      register: pairing.registerId,
      token: () => this.session?.token,
      backoff: { initialMs: 500, maxMs: 5_000 },
      onEvent: (event) => {
        if (event.type === "acknowledged") {
          this.booked.add(event.entry.id);
          if (event.entry.kind === "return") this.answers.set(event.entry.id, event.body);
          this.online = true;
        }
        if (event.type === "retrying") this.online = false;
        if (event.type === "set_aside") {
          this.refused.set(event.entry.id, `${event.entry.answer.status} · ${event.entry.answer.envelope?.error.message ?? event.entry.answer.body.slice(0, 300)}`);
          if (this.screen.name === "done" || this.screen.name === "return-done") this.render();
        }
        if (event.type === "unauthorized") {
          // The session's token ran out: a new session (the cashier's PIN) sends the rest.
          this.session = null;
          void writeSession(this.storage, null);
          this.go({ name: "sign-in", message: t("sessionEnded") });
        }
        void this.refreshQueue();
      },
    });
    await this.loadArticles();
    await this.refreshQueue();
    this.outbox.start();
    if (this.session !== null && Date.parse(this.session.expiresAt) <= Date.now()) {
      this.session = null;
      await writeSession(this.storage, null);
    }
    this.go(this.session === null ? { name: "sign-in" } : { name: "sell" });
    void this.syncNow();
    if (this.syncTimer === null) this.syncTimer = window.setInterval(() => void this.syncNow(), SYNC_EVERY_MS);
  }

  /** The snapshot once, then the feed: keeps the articles, prices and rules current. */
  syncNow(): Promise<void> {
    if (this.syncing !== null) return this.syncing;
    const store = this.store;
    if (store === null) return Promise.resolve();
    this.syncing = (async () => {
      let changed = false;
      try {
        const report = await store.sync();
        this.online = true;
        changed = report.events > 0 || report.snapshots > 0 || this.articles.length === 0;
        if (changed) await this.loadArticles();
        if (this.session !== null) await this.checkSession();
        await this.findLeftOpen();
      } catch (error) {
        this.online = !(error instanceof TillUnreachable);
        if (error instanceof TillError && error.status === 401) {
          this.notice = { text: `${t("error")}: ${error.envelope?.error.message ?? error.message}`, bad: true };
        }
      } finally {
        this.syncing = null;
        this.reprice();
        // Redraw only a screen that shows the store's data, and never under the cashier's fingers.
        const typing = document.activeElement instanceof HTMLInputElement && document.activeElement.id !== "scan";
        if (changed && !typing && (this.screen.name === "sell" || this.screen.name === "sign-in")) this.render();
        // The sale screen is updated in place, under a header it leaves alone.
        this.renderStatus();
      }
    })();
    return this.syncing;
  }

  /** A session closed elsewhere (the back office) ends here too. */
  private async checkSession(): Promise<void> {
    const session = this.session;
    if (session === null) return;
    try {
      const view = await this.sessionClient().json<{ status: string }>(
        "GET",
        `/v1/register-sessions/${encodeURIComponent(session.sessionId)}`,
      );
      if (view.status !== "open" && this.session?.sessionId === session.sessionId && this.cart.length === 0) {
        this.session = null;
        await writeSession(this.storage, null);
        if (this.screen.name === "sell") this.go({ name: "sign-in" });
      }
    } catch {
      // offline, or the token expired: the outbox and the next sign-in deal with it
    }
  }

  private async loadArticles(): Promise<void> {
    const store = this.store;
    if (store === null) return;
    const state = await store.state();
    if (state === null) return;
    this.snapshotAt = state.takenAt;
    this.articles = (await store.articles()).sort((a, b) => a.catalog.name.localeCompare(b.catalog.name));
    this.byBarcode = new Map();
    for (const article of this.articles) {
      for (const code of article.catalog.barcodes) this.byBarcode.set(code, article);
    }
    this.staff = await store.staff();
    this.pricer = await store.pricer();
  }

  async refreshQueue(): Promise<void> {
    const outbox = this.outbox;
    if (outbox === null) return;
    this.waiting = (await outbox.waiting()).length;
    this.setAside = await outbox.setAside();
    // The list closes once nothing is left on it.
    if (this.setAside.length === 0) this.showSetAside = false;
    this.renderStatus();
  }

  go(screen: Screen): void {
    this.screen = screen;
    this.render();
    if (screen.name === "sell") void this.findLeftOpen();
  }

  /**
   * Looks for the session's card attempts that no payment here holds: an answer never keyed, or
   * an approval no sale took (the page reloaded mid-payment). Only while nothing could still
   * name one (no payment under way, nothing waiting in the outbox), and at most every
   * [`SYNC_EVERY_MS`] unless `now`.
   */
  async findLeftOpen(now = false): Promise<void> {
    const session = this.session;
    const outbox = this.outbox;
    if (session === null || outbox === null || this.payment !== null || !this.online) return;
    if (!now && Date.now() - this.leftOpenAt < SYNC_EVERY_MS) return;
    this.leftOpenAt = Date.now();
    if ((await outbox.waiting()).length > 0) return;
    const found: LeftOpenCard[] = [];
    try {
      for (const state of ["unknown", "authorized", "partially_authorized"] as const) {
        const page = await this.sessionClient().json<ResponseBody<"listPayments", 200>>(
          "GET",
          `/v1/payments?sessionId=${encodeURIComponent(session.sessionId)}&state=${state}&limit=100`,
        );
        for (const attempt of page.items) {
          if (attempt.kind !== "payment") continue;
          const approved = state === "unknown" ? null : (attempt.outcome?.authorizedCents ?? attempt.amountCents);
          found.push({ paymentId: attempt.paymentId, amountCents: attempt.amountCents, approvedCents: approved });
        }
      }
    } catch (error) {
      if (error instanceof TillUnreachable) this.online = false;
      return;
    }
    // A payment opened meanwhile holds its own attempts.
    if (this.payment !== null || this.session?.sessionId !== session.sessionId) return;
    const before = this.leftOpen.map((card) => card.paymentId).join();
    this.leftOpen = found;
    if (found.map((card) => card.paymentId).join() !== before && (this.screen.name === "sell" || this.screen.name === "left-open")) this.render();
  }

  /**
   * Settles an attempt left open: `not_charged` (the terminal's journal shows no charge) records
   * it declined; `given_back` records an unknown answer as the approval it was, then the void of
   * the money the cashier gave back at the terminal.
   */
  async settleLeftOpen(card: LeftOpenCard, how: "not_charged" | "given_back"): Promise<void> {
    if (this.cardBusy) return;
    this.cardBusy = true;
    this.render();
    const client = this.sessionClient();
    try {
      if (card.approvedCents === null) {
        const outcome =
          how === "not_charged"
            ? { status: "declined" as const }
            : { status: "authorized" as const, authorizedCents: card.amountCents };
        await client.recordPaymentOutcome(card.paymentId, outcome);
      }
      if (how === "given_back") await client.voidPayment(card.paymentId);
      this.leftOpen = this.leftOpen.filter((other) => other.paymentId !== card.paymentId);
      this.cardBusy = false;
      const said = how === "given_back" ? t("leftOpenVoided") : t("leftOpenDeclined");
      this.go(this.leftOpen.length > 0 ? { name: "left-open", message: said } : { name: "sell" });
      await this.findLeftOpen(true);
    } catch (error) {
      this.cardBusy = false;
      if (error instanceof TillUnreachable) this.online = false;
      this.go({ name: "left-open", message: error instanceof TillUnreachable ? t("cardOffline") : describe(error) });
      // What the server holds now, whatever it refused.
      await this.findLeftOpen(true);
    }
  }

  // --- Keys ------------------------------------------------------------------------------------

  private onKey(event: KeyboardEvent): void {
    if (event.key === "Escape") {
      if (this.showSetAside) {
        this.showSetAside = false;
        this.render();
      } else if (this.screen.name === "pay") {
        // Tenders taken stay until the cashier cancels them (a card approval must be voided).
        if (this.payment !== null && this.payment.tenders.length === 0) this.leavePayment();
      } else if (this.screen.name === "card" && this.payment?.openCard?.paymentId === this.screen.paymentId && !this.cardBusy) {
        // An attempt whose answer was lost: back to the payment, where it stays open.
        this.go({ name: "pay", mode: "card" });
      } else if (this.screen.name === "customer" || this.screen.name === "discount" || this.screen.name === "approve") {
        this.go({ name: "sell" });
      } else if (this.screen.name === "return-find" || this.screen.name === "return" || this.screen.name === "movement") {
        this.returning = null;
        this.go({ name: "sell" });
      } else if (["x-report", "close"].includes(this.screen.name) || (this.screen.name === "left-open" && !this.cardBusy)) {
        this.go({ name: "sell" });
      } else if (this.screen.name === "reprint" && !this.reprinting) {
        this.go(this.screen.from === null ? { name: "sell" } : { name: "done", sale: this.screen.from });
      }
      return;
    }
    if (event.key === "F7" && this.screen.name === "sell" && this.cart.length > 0) {
      event.preventDefault();
      this.go({ name: "discount", kind: "line_percent" });
      return;
    }
    if (event.key === "F6" && this.screen.name === "sell") {
      event.preventDefault();
      this.go({ name: "customer" });
      return;
    }
    if (event.key === "F4" && this.screen.name === "sell" && this.cart.length === 0) {
      event.preventDefault();
      this.go({ name: "return-find" });
      return;
    }
    if ((event.key === "F2" || event.key === "F3") && ["sell", "pay"].includes(this.screen.name)) {
      event.preventDefault();
      const mode = event.key === "F2" ? "cash" : "card";
      if (this.screen.name === "sell" && this.cart.length > 0) this.startPayment(mode);
      else if (this.screen.name === "pay") this.go({ name: "pay", mode });
    }
  }

  // --- The cart ----------------------------------------------------------------------------------

  addArticle(article: ArticleRecord, quantity = 1): void {
    const last = this.cart[this.cart.length - 1];
    if (last !== undefined && last.skuId === article.skuId) {
      last.quantity = Math.min(MAX_QUANTITY, last.quantity + quantity);
    } else {
      this.lineSeq += 1;
      this.cart.push({ id: `l${this.lineSeq}`, skuId: article.skuId, name: article.catalog.name, quantity });
    }
    this.results = [];
    this.notice = null;
    this.reprice();
    this.render();
  }

  setQuantity(lineId: string, quantity: number): void {
    const line = this.cart.find((l) => l.id === lineId);
    if (line === undefined || !Number.isInteger(quantity)) return;
    if (quantity <= 0) {
      this.removeLine(lineId);
      return;
    }
    line.quantity = Math.min(MAX_QUANTITY, quantity);
    this.reprice();
    this.render();
  }

  removeLine(lineId: string): void {
    this.cart = this.cart.filter((l) => l.id !== lineId);
    // A discount on that line goes with it.
    const declared = this.discount?.declared;
    if (declared !== undefined && declared.scope === "line" && declared.lineId === lineId) this.discount = null;
    this.reprice();
    this.render();
  }

  /** Prices the cart now, from the store's snapshot, as the server will price it. */
  reprice(issuedAt = new Date().toISOString()): void {
    this.priced = this.cart.length === 0 ? null : this.priceWith(issuedAt);
  }

  /** The cart priced at `issuedAt` by the Pricer over what the store holds; null without a snapshot. */
  priceWith(issuedAt: string): PriceResult | null {
    if (this.pricer === null || this.cart.length === 0) return null;
    return this.pricer.price({
      lines: this.cart.map((line) => ({ id: line.id, skuId: line.skuId, quantity: line.quantity })),
      issuedAt,
      // The customer's groups price as the server will (a promotion for a group).
      customerGroups: this.customer?.groups ?? null,
      declaredDiscounts: this.discount === null ? [] : [this.discount.declared],
    });
  }

  /** What the scan field's Enter means: a barcode, else a search by name. */
  lookup(text: string): void {
    const query = text.trim();
    if (query === "") return;
    const multiplied = /^(\d{1,4})\*(.+)$/.exec(query);
    const quantity = multiplied ? Number(multiplied[1]) : 1;
    const term = multiplied?.[2]?.trim() ?? query;
    if (/^\d{6,14}$/.test(term)) {
      const article = this.byBarcode.get(term) ?? this.byBarcode.get(term.padStart(13, "0"));
      if (article !== undefined) {
        this.addArticle(article, Math.max(1, quantity));
        return;
      }
      this.results = [];
      this.notice = { text: `${t("unknownBarcode")}: ${term}`, bad: true };
      this.render();
      return;
    }
    const wanted = fold(term);
    this.results = this.articles.filter((a) => fold(a.catalog.name).includes(wanted)).slice(0, 12);
    this.notice = this.results.length === 0 ? { text: `${t("noMatch")}: ${term}`, bad: true } : null;
    if (this.results.length === 1 && this.results[0] !== undefined) {
      this.addArticle(this.results[0], Math.max(1, quantity));
      return;
    }
    this.render();
  }

  // --- Paying ------------------------------------------------------------------------------------

  /** Opens the payment: the cart priced once, now; every tender pays that total. */
  startPayment(mode: "cash" | "card" = "cash"): void {
    if (this.payment === null) {
      const issuedAt = new Date().toISOString();
      const priced = this.priceWith(issuedAt);
      if (priced === null) return;
      if (!priced.ok) {
        this.notice = { text: priced.refusal.message, bad: true };
        this.go({ name: "sell" });
        return;
      }
      this.payment = { transactionId: crypto.randomUUID(), issuedAt, quote: priced.quote, tenders: [] };
    }
    this.go({ name: "pay", mode });
  }

  /** Back to the cart: only while no tender was taken and no card answer is awaited. */
  leavePayment(): void {
    if (this.payment !== null && (this.payment.tenders.length > 0 || this.payment.openCard)) return;
    this.payment = null;
    this.reprice();
    this.go({ name: "sell" });
  }

  /** Cash handed over: up to what is due; the sale is finalized once nothing is left. */
  async payCash(presented: number): Promise<void> {
    const payment = this.payment;
    if (payment === null || presented <= 0 || payment.openCard) return;
    payment.tenders.push(cashTender(remaining(payment), presented));
    if (remaining(payment) === 0) await this.finalize();
    else this.go({ name: "pay", mode: "cash" });
  }

  /** Records the card attempt before the terminal is asked: online only (DESIGN.md section 22). */
  async askCard(amountCents: number): Promise<void> {
    const payment = this.payment;
    const session = this.session;
    if (payment === null || session === null || this.cardBusy || payment.openCard) return;
    if (amountCents <= 0 || amountCents > remaining(payment)) return;
    const paymentId = crypto.randomUUID();
    this.cardBusy = true;
    try {
      await this.sessionClient().requestPayment({ paymentId, sessionId: session.sessionId, amountCents, method: "card" });
      this.cardBusy = false;
      this.go({ name: "card", paymentId, amountCents });
    } catch (error) {
      this.cardBusy = false;
      if (error instanceof TillUnreachable) this.online = false;
      this.go({ name: "pay", mode: "card", message: error instanceof TillUnreachable ? t("cardOffline") : describe(error) });
    }
  }

  /**
   * What the terminal said, keyed by the cashier: an approval (maybe partial), a refusal, a
   * cancel at the terminal, or its answer lost (`unknown`: the attempt stays open until a later
   * outcome settles it; no tender before an approval).
   */
  async cardOutcome(paymentId: string, amountCents: number, answer: CardAnswer): Promise<void> {
    const payment = this.payment;
    if (payment === null || this.cardBusy) return;
    const body =
      answer.status === "approved"
        ? {
            status: answer.authorizedCents < amountCents ? ("partially_authorized" as const) : ("authorized" as const),
            authorizedCents: answer.authorizedCents,
            authorizationCode: answer.code,
            ...(answer.last4 === "" ? {} : { last4: answer.last4 }),
          }
        : { status: answer.status };
    this.cardBusy = true;
    let queued = false;
    try {
      await this.sessionClient().recordPaymentOutcome(paymentId, body);
    } catch (error) {
      if (!(error instanceof TillUnreachable)) {
        // The server refused what was keyed (a field, a conflict): say why, key it again.
        this.cardBusy = false;
        this.go({ name: "card", paymentId, amountCents, message: describe(error) });
        return;
      }
      // The terminal has answered; its answer goes through the outbox, before the sale.
      this.online = false;
      await this.outbox?.enqueuePaymentOutcome(paymentId, body, { sessionId: this.session?.sessionId ?? "" });
      queued = true;
    }
    this.cardBusy = false;
    const sent = queued ? ` · ${t("cardQueued")}` : "";
    if (answer.status === "unknown") {
      // Kept open: the cashier keys the real answer once the terminal's journal says it.
      payment.openCard = { paymentId, amountCents };
      this.go({ name: "pay", mode: "card", message: `${t("cardUnknown")}${sent}` });
      return;
    }
    if (payment.openCard?.paymentId === paymentId) payment.openCard = null;
    if (answer.status !== "approved") {
      // Declined, or cancelled at the terminal: nothing taken, the sale still all due.
      this.go({ name: "pay", mode: "card", message: `${answer.status === "cancelled" ? t("cardCancelled") : t("cardDeclined")}${sent}` });
      return;
    }
    payment.tenders.push(cardTender(paymentId, answer.authorizedCents));
    if (remaining(payment) === 0) await this.finalize();
    else this.go({ name: "pay", mode: "cash", message: `${t("cardPartial")} ${money(answer.authorizedCents)}${sent}` });
  }

  /** Points, a gift card or a credit note: the balance read first, the tender capped at it. */
  async takeStoredValue(kind: "loyalty" | "gift_card" | "credit_note", wantedCents: number, code: string): Promise<void> {
    const payment = this.payment;
    if (payment === null || this.cardBusy || wantedCents <= 0 || payment.openCard) return;
    this.cardBusy = true;
    try {
      let balance: number;
      if (kind === "loyalty") {
        const customer = this.customer;
        if (customer === null) return;
        const view = await this.deviceClient().json<{ points: number }>("GET", `/v1/customers/${encodeURIComponent(customer.customerId)}/loyalty`);
        customer.loyaltyPoints = view.points;
        // A point is worth a cent unless the server says otherwise (its 422 names the value).
        balance = view.points;
      } else {
        const path = kind === "gift_card" ? "gift-cards" : "credit-notes";
        const view = await this.sessionClient().json<{ balanceCents: number; state: string }>("GET", `/v1/${path}/${encodeURIComponent(code)}`);
        if (view.state !== "active") {
          this.go({ name: "pay", mode: kind, message: `${t("instrumentState")}: ${view.state}` });
          return;
        }
        balance = view.balanceCents;
      }
      const applied = Math.min(wantedCents, balance, remaining(payment));
      if (applied <= 0) {
        this.go({ name: "pay", mode: kind, message: t("noBalance") });
        return;
      }
      payment.tenders.push({ method: kind, applied, presented: applied, change: 0, ...(kind === "loyalty" ? {} : { reference: code }) });
      this.cardBusy = false;
      if (remaining(payment) === 0) await this.finalize();
      else this.go({ name: "pay", mode: "cash", message: `${methodName(kind)} ${money(applied)} · ${t("restDue")}` });
    } catch (error) {
      if (error instanceof TillUnreachable) this.online = false;
      this.go({ name: "pay", mode: kind, message: error instanceof TillUnreachable ? t("storedValueOffline") : describe(error) });
    } finally {
      this.cardBusy = false;
    }
  }

  // --- Declared discounts ------------------------------------------------------------------------

  /** The discount priced as the server will; a cashier who may not grant it asks a manager. */
  declareDiscount(kind: DiscountKind, value: number, reason: DiscountReason, lineId: string | null): void {
    const declared = declaredDiscount(kind, value, reason, lineId);
    const issuedAt = new Date().toISOString();
    const without = this.priceWith(issuedAt);
    const kept = this.discount;
    this.discount = { declared, reductionCents: 0, elevationToken: null, approvedBy: null };
    const withIt = this.priceWith(issuedAt);
    this.discount = kept;
    if (withIt === null || without === null || !without.ok) return;
    if (!withIt.ok) {
      this.go({ name: "discount", kind, message: withIt.refusal.message });
      return;
    }
    const pending: SaleDiscount = { declared, reductionCents: without.quote.totals.total - withIt.quote.totals.total, elevationToken: null, approvedBy: null };
    const role = this.staff.find((member) => member.subject === this.session?.cashierSubject)?.role;
    if (mayGrantAlone(role)) this.applyDiscount(pending);
    else this.go({ name: "approve", pending });
  }

  applyDiscount(discount: SaleDiscount | null): void {
    this.discount = discount;
    this.reprice();
    this.go({ name: "sell" });
  }

  /** The manager types their PIN at the till: a single-use grant for this discount's size. */
  async approveDiscount(pending: SaleDiscount, manager: string, pin: string): Promise<void> {
    const declared = pending.declared;
    try {
      const grant = await this.sessionClient().json<{ token: string }>("POST", "/v1/elevation-grants", {
        body: {
          managerSubject: manager,
          pin,
          operation: declared.scope === "line" ? "discount.line" : "discount.ticket",
          amountCents: pending.reductionCents,
          ...(declared.basis === "percent" ? { percentBps: declared.percentBps } : {}),
        },
      });
      this.applyDiscount({ ...pending, elevationToken: grant.token, approvedBy: manager });
    } catch (error) {
      if (error instanceof TillError && error.envelope?.error.code === "NO_ELEVATION_REQUIRED") {
        // The cashier may grant this one alone.
        this.applyDiscount(pending);
        return;
      }
      if (error instanceof TillUnreachable) this.online = false;
      // The manager typed stays; the PIN is typed again.
      this.go({ name: "approve", pending, manager, message: error instanceof TillUnreachable ? t("approvalOffline") : describe(error) });
    }
  }

  // --- The customer --------------------------------------------------------------------------------

  async searchCustomer(text: string): Promise<void> {
    try {
      const results = await findCustomers(this.deviceClient(), text);
      this.go({ name: "customer", results, ...(results.length === 0 ? { message: `${t("noCustomer")}: ${text.trim()}` } : {}) });
    } catch (error) {
      if (error instanceof TillUnreachable) this.online = false;
      this.go({ name: "customer", message: error instanceof TillUnreachable ? t("customerOffline") : describe(error) });
    }
  }

  attachCustomer(view: CustomerView | null): void {
    this.customer = view === null ? null : saleCustomer(view);
    this.reprice();
    this.go({ name: "sell" });
  }

  /** Gives back what was taken: cash to the customer, a card approval voided at the terminal. */
  async cancelPayment(): Promise<void> {
    const payment = this.payment;
    if (payment === null) return;
    if (payment.openCard) {
      // The card may have been charged: its real answer first (an approval is then voided).
      this.go({ name: "pay", mode: "card", message: t("cardOpenFirst") });
      return;
    }
    for (const tender of payment.tenders.filter((taken) => taken.method === "card" && taken.reference !== undefined)) {
      try {
        await this.sessionClient().voidPayment(tender.reference ?? "");
      } catch (error) {
        this.go({ name: "pay", mode: "card", message: describe(error) });
        return;
      }
      payment.tenders = payment.tenders.filter((taken) => taken !== tender);
    }
    payment.tenders = [];
    this.leavePayment();
  }

  /** The tenders cover the total: the sale goes to the outbox, then to the server. */
  private async finalize(): Promise<void> {
    const session = this.session;
    const pairing = this.pairing;
    const outbox = this.outbox;
    const payment = this.payment;
    if (session === null || pairing === null || outbox === null || payment === null) return;
    const { transactionId, issuedAt, quote, tenders } = payment;
    const number = await nextTicketNumber(this.storage, pairing.registerId);
    const discount = this.discount;
    const body = saleBody({
      transactionId,
      number,
      session,
      issuedAt,
      cart: this.cart,
      quote,
      tenders,
      customerId: this.customer?.customerId ?? null,
      declaredDiscounts: discount === null ? [] : [discount.declared],
    });
    // The manager's token goes with the one finalize it approves (kept with the entry).
    await outbox.enqueueSale(body, discount?.elevationToken ? { elevationToken: discount.elevationToken } : {});
    const sale: Finished = { transactionId, number, quote, tenders, issuedAt, booked: false };
    this.lastSale = { transactionId, number, totalCents: quote.totals.total };
    await writeLastSale(this.storage, this.lastSale);
    this.payment = null;
    this.customer = null;
    this.discount = null;
    this.cart = [];
    this.lineSeq = 0;
    this.priced = null;
    this.results = [];
    this.go({ name: "done", sale });
    await this.refreshQueue();
    // Online, the answer comes within moments: say so once it has.
    for (let i = 0; i < 20 && !this.booked.has(transactionId) && !this.refused.has(transactionId); i++) await sleep(150);
    if (this.booked.has(transactionId) && this.screen.name === "done" && this.screen.sale.transactionId === transactionId) {
      sale.booked = true;
      this.render();
    }
  }

  // --- Cash movements --------------------------------------------------------------------------

  /** Paid in, paid out, a drop: queued through the outbox like a sale, sent at once online. */
  async recordMovement(kind: MovementKind, amountCents: number, reason: string): Promise<void> {
    const session = this.session;
    const outbox = this.outbox;
    if (session === null || outbox === null || amountCents <= 0) return;
    const movementId = crypto.randomUUID();
    await outbox.enqueueCashMovement(session.sessionId, { movementId, kind, amountCents, reason: reason === "" ? null : reason });
    this.notice = { text: `${t(`movement_${kind}`)} ${money(amountCents)} · ${t("movementQueued")}`, bad: false };
    this.go({ name: "sell" });
    await this.refreshQueue();
    for (let i = 0; i < 20 && !this.booked.has(movementId); i++) await sleep(150);
    if (this.booked.has(movementId)) {
      this.notice = { text: `${t(`movement_${kind}`)} ${money(amountCents)} · ${t("movementDone")}`, bad: false };
      if (this.screen.name === "sell") this.render();
    }
  }

  // --- Returns -----------------------------------------------------------------------------------

  /** The receipt's ticket number (or the sale's transaction id): the original sale, online. */
  async findReceipt(text: string): Promise<void> {
    const wanted = text.trim();
    if (wanted === "") return;
    const client = this.sessionClient();
    try {
      const transactionId = await this.saleByNumber(client, wanted);
      if (transactionId === null) {
        this.go({ name: "return-find", message: `${t("receiptUnknown")}: ${wanted}` });
        return;
      }
      const seg = encodeURIComponent(transactionId);
      const [explained, returns] = await Promise.all([
        client.json<ResponseBody<"getSaleLines", 200>>("GET", `/v1/sales/${seg}/lines`),
        client.json<ResponseBody<"getSaleReturns", 200>>("GET", `/v1/sales/${seg}/returns`),
      ]);
      if (returns.type !== "sale") {
        this.go({ name: "return-find", message: t("notASale") });
        return;
      }
      this.returning = {
        transactionId: crypto.randomUUID(),
        originalTransactionId: transactionId,
        originalNumber: wanted,
        lines: explained.lines.map((line) => {
          const state = returns.lines.find((r) => r.lineId === line.id);
          return {
            lineId: line.id,
            skuId: line.skuId ?? "",
            label: line.label ?? this.articles.find((a) => a.skuId === line.skuId)?.catalog.name ?? line.id,
            quantity: line.quantity,
            returned: state?.returned ?? line.quantity,
            netCents: line.netCents,
            take: 0,
          };
        }),
      };
      this.go({ name: "return", method: "cash" });
    } catch (error) {
      if (error instanceof TillUnreachable) this.online = false;
      this.go({ name: "return-find", message: error instanceof TillUnreachable ? t("returnOffline") : describe(error) });
    }
  }

  /** A ticket number names its register: that register's sales are read until it is found. */
  private async saleByNumber(client: TillClient, wanted: string): Promise<string | null> {
    const registerId = registerOfNumber(wanted);
    if (registerId === null) {
      // Not a ticket number: a transaction id, typed or scanned.
      try {
        await client.getSale(wanted);
        return wanted;
      } catch (error) {
        if (error instanceof TillError && (error.status === 404 || error.status === 400)) return null;
        throw error;
      }
    }
    let cursor: string | undefined;
    // The API has no search by ticket number: the register's sales, a page at a time.
    for (let page = 0; page < 40; page++) {
      const found = await client.searchSales({ registerId, type: "sale", limit: 500, ...(cursor === undefined ? {} : { cursor }) });
      const hit = found.items.find((item) => item.number === wanted);
      if (hit !== undefined) return hit.transactionId;
      if (!found.nextCursor) return null;
      cursor = found.nextCursor;
    }
    return null;
  }

  setReturnQuantity(lineId: string, take: number): void {
    const line = this.returning?.lines.find((l) => l.lineId === lineId);
    if (line === undefined || !Number.isInteger(take)) return;
    line.take = Math.max(0, Math.min(line.quantity - line.returned, take));
    this.go({ name: "return", method: this.screen.name === "return" ? this.screen.method : "cash" });
  }

  /** The return goes through the outbox (it is idempotent by its own transaction id). */
  async confirmReturn(method: RefundMethod): Promise<void> {
    const draft = this.returning;
    const session = this.session;
    const pairing = this.pairing;
    const outbox = this.outbox;
    if (draft === null || session === null || pairing === null || outbox === null) return;
    if (!draft.lines.some((line) => line.take > 0)) return;
    const number = await nextTicketNumber(this.storage, pairing.registerId);
    const body = returnBody({ draft, number, session, method });
    await outbox.enqueueReturn(body);
    this.returning = null;
    const done: ReturnDone = {
      transactionId: body.transactionId,
      number,
      originalNumber: draft.originalNumber,
      refund: refundOf(draft),
      method,
      booked: false,
      creditNote: null,
    };
    this.go({ name: "return-done", done });
    await this.refreshQueue();
    for (let i = 0; i < 40 && !this.booked.has(done.transactionId) && !this.refused.has(done.transactionId); i++) await sleep(150);
    const answer = this.answers.get(done.transactionId);
    if (answer !== undefined) {
      done.booked = true;
      const event = JSON.parse(answer) as { creditNoteNumber?: string; creditNoteCode?: string };
      if (method === "credit_note" && event.creditNoteNumber !== undefined) {
        done.creditNote = { number: event.creditNoteNumber, code: event.creditNoteCode ?? null };
      }
      if (this.screen.name === "return-done" && this.screen.done.transactionId === done.transactionId) this.render();
    }
  }

  /** The receipt by e-mail: to the address typed, else to the sale's customer if they consented. */
  async sendReceipt(sale: Finished, email: string): Promise<void> {
    try {
      const sent = await this.sessionClient().json<{ state: string; to?: string | null; recipient: string }>(
        "POST",
        `/v1/sales/${encodeURIComponent(sale.transactionId)}/receipt/send`,
        { body: { sendId: crypto.randomUUID(), ...(email === "" ? {} : { email }) } },
      );
      sale.mail = { text: `${t("mailQueued")} ${sent.to ?? t("mailToCustomer")} (${sent.state})`, bad: false };
    } catch (error) {
      sale.mail = { text: `${t("mailRefused")}: ${describe(error)}`, bad: true };
    }
    if (this.screen.name === "done" && this.screen.sale === sale) this.render();
  }

  async printReturn(done: ReturnDone): Promise<void> {
    await this.printTicket(done.transactionId, done.booked, () =>
      [done.number, `${t("returnOf")} ${done.originalNumber}`, `${t("refund")}: ${amountText(done.refund)}`, "", t("provisional")].join("\n"),
    );
  }

  async printReceipt(sale: Finished): Promise<void> {
    if (await this.printTicket(sale.transactionId, sale.booked, () => provisionalSlip(sale, this.pairing, this.session))) {
      // The original is out: another print of it is a reprint, confirmed and sealed as a duplicate.
      sale.printed = true;
      if (this.screen.name === "done" && this.screen.sale === sale) this.render();
    }
  }

  /** Asks to reprint a sale's receipt: the confirmation first, with the print's own id. */
  askReprint(sale: LastSale, from: Finished | null): void {
    this.go({ name: "reprint", sale, from, printId: crypto.randomUUID() });
  }

  /**
   * A reprint of a sale's receipt: a new print on the server (a print id of its own), which it
   * numbers and seals as a DUPLICATA once the original was printed, and whose text is printed.
   * Nothing is printed without the server's answer: offline, or before the sale is booked, the
   * screen says why.
   */
  async reprint(sale: LastSale, from: Finished | null, printId: string): Promise<void> {
    const area = document.getElementById("print-area");
    if (area === null || this.reprinting) return;
    // Asked again, the same print id: a print whose answer was lost is answered again, not made twice.
    const refused = (message: string) => {
      if (this.screen.name === "reprint" && this.screen.sale === sale) this.go({ name: "reprint", sale, from, printId, message });
    };
    if (!navigator.onLine) {
      this.online = false;
      refused(t("reprintOffline"));
      return;
    }
    this.reprinting = true;
    let answer: { status: number; text: string };
    try {
      answer = await this.sessionClient().raw("POST", `/v1/sales/${encodeURIComponent(sale.transactionId)}/prints`, {
        query: { format: "text", columns: "42" },
        body: { printId },
      });
    } catch (error) {
      if (error instanceof TillUnreachable) this.online = false;
      refused(error instanceof TillUnreachable ? t("reprintOffline") : describe(error));
      return;
    } finally {
      this.reprinting = false;
    }
    this.online = true;
    if (answer.status === 404) {
      refused(t("reprintNotBooked"));
      return;
    }
    if (answer.status < 200 || answer.status > 299) {
      refused(`${answer.status} · ${errorMessage(answer.text)}`);
      return;
    }
    replace(area, h("pre", {}, answer.text));
    window.print();
    const duplicate = /DUPLICATA n° (\d+)/.exec(answer.text)?.[1];
    const said = duplicate === undefined ? t("originalPrinted") : `${t("duplicatePrinted")} ${duplicate}`;
    if (from !== null) {
      from.printed = true;
      from.reprinted = said;
      this.go({ name: "done", sale: from });
    } else {
      this.notice = { text: `${sale.number} · ${said}`, bad: false };
      this.go({ name: "sell" });
    }
  }

  /** The server's own ticket once booked (the original, then duplicates); else a provisional
   * slip. Answers whether the server's ticket was printed. */
  async printTicket(transactionId: string, booked: boolean, provisional: () => string): Promise<boolean> {
    const area = document.getElementById("print-area");
    if (area === null) return false;
    let text: string | null = null;
    if (booked || this.booked.has(transactionId)) {
      try {
        const answer = await this.sessionClient().raw(
          "POST",
          `/v1/sales/${encodeURIComponent(transactionId)}/prints`,
          { query: { format: "text", columns: "42" }, body: { printId: `${transactionId}-print` } },
        );
        if (answer.status >= 200 && answer.status < 300) text = answer.text;
      } catch {
        text = null;
      }
    }
    replace(area, h("pre", {}, text ?? provisional()));
    window.print();
    return text !== null;
  }

  // --- The session ---------------------------------------------------------------------------------

  async signIn(cashier: string, pin: string, floatCents: number): Promise<void> {
    const pairing = this.pairing;
    if (pairing === null) return;
    this.lastCashier = cashier;
    try {
      const opened = await this.deviceClient().openSession({
        storeId: pairing.storeId,
        registerId: pairing.registerId,
        cashierSubject: cashier,
        pin,
        openingFloatCents: floatCents,
      });
      this.session = {
        sessionId: opened.sessionId,
        token: opened.token,
        storeId: opened.storeId,
        registerId: opened.registerId,
        cashierSubject: opened.cashierSubject,
        expiresAt: opened.expiresAt,
      };
      await writeSession(this.storage, this.session);
      this.notice = null;
      await this.outbox?.resume();
      this.go({ name: "sell" });
      void this.syncNow();
    } catch (error) {
      if (error instanceof TillError && error.status === 409) {
        const other = await this.openSessionOfRegister();
        this.go({ name: "sign-in", message: t("alreadyOpen"), ...(other === null ? {} : { otherSession: other }) });
      } else if (error instanceof TillError && error.status === 401) {
        // A wrong PIN and a device token refused are both 401: ask with the device token alone.
        this.go({ name: "sign-in", message: (await this.deviceRefused()) ? t("deviceRefused") : t("wrongPin") });
      } else if (error instanceof TillUnreachable) {
        this.go({ name: "sign-in", message: t("offlineNoSession") });
      } else {
        this.go({ name: "sign-in", message: describe(error) });
      }
    }
  }

  /** Whether the server refuses the device token itself (expired, revoked, another secret). */
  private async deviceRefused(): Promise<boolean> {
    const pairing = this.pairing;
    if (pairing === null) return false;
    try {
      await this.deviceClient().json("GET", "/v1/register-sessions", {
        query: { storeId: pairing.storeId, registerId: pairing.registerId, limit: 1 },
      });
      return false;
    } catch (error) {
      return error instanceof TillError && error.status === 401;
    }
  }

  private async openSessionOfRegister(): Promise<string | null> {
    const pairing = this.pairing;
    if (pairing === null) return null;
    try {
      const page = await this.deviceClient().json<{ items: { sessionId: string }[] }>("GET", "/v1/register-sessions", {
        query: { storeId: pairing.storeId, registerId: pairing.registerId, open: true, limit: 1 },
      });
      return page.items[0]?.sessionId ?? null;
    } catch {
      return null;
    }
  }

  async closeOther(sessionId: string): Promise<void> {
    try {
      await this.deviceClient().closeSession(sessionId, {});
      this.go({ name: "sign-in" });
    } catch (error) {
      this.go({ name: "sign-in", message: describe(error) });
    }
  }

  async xReport(): Promise<void> {
    const session = this.session;
    if (session === null) return;
    this.go({ name: "x-report" });
    try {
      const report = await this.sessionClient().json<XReport>(
        "GET",
        `/v1/register-sessions/${encodeURIComponent(session.sessionId)}/x-report`,
      );
      if (this.screen.name === "x-report") this.go({ name: "x-report", report });
    } catch (error) {
      if (this.screen.name === "x-report") this.go({ name: "x-report", message: describe(error) });
    }
  }

  async closeTill(countedCents: number): Promise<void> {
    const session = this.session;
    if (session === null) return;
    const outbox = this.outbox;
    if (outbox !== null) {
      await outbox.drain({ timeoutMs: 5_000 });
      await this.refreshQueue();
      if (this.waiting > 0) {
        this.go({ name: "close", message: t("closeWaiting") });
        return;
      }
    }
    try {
      const report = await this.deviceClient().closeSession(session.sessionId, {
        counted: [{ method: "cash", countedCents }],
      });
      this.session = null;
      await writeSession(this.storage, null);
      this.go({ name: "z-report", report });
    } catch (error) {
      this.go({ name: "close", message: describe(error) });
    }
  }

  async unpair(): Promise<void> {
    await this.outbox?.stop();
    this.outbox = null;
    this.store = null;
    this.pairing = null;
    this.session = null;
    await writeSession(this.storage, null);
    await writePairing(this.storage, null);
    this.go({ name: "pair" });
  }

  async pairWith(token: string, storeId: string, registerId: string): Promise<void> {
    const pairing: Pairing = { token: token.trim(), storeId: storeId.trim(), registerId: registerId.trim(), pairedAt: new Date().toISOString() };
    if (pairing.token === "" || pairing.storeId === "" || pairing.registerId === "") return;
    await writePairing(this.storage, pairing);
    this.pairing = pairing;
    await this.startPaired();
  }

  // --- Drawing -----------------------------------------------------------------------------------

  render(): void {
    document.title = `${t("title")} · till`;
    const screen = this.screen;
    const view = this.sellView;
    if (screen.name === "sell" && view !== null && view.element.isConnected && view.lang === currentLang() && !this.showSetAside) {
      view.update(this);
      // The cashier may be typing a quantity; otherwise the scanner types into the scan field.
      const active = document.activeElement;
      if (!view.hasFocus() && !(active instanceof HTMLInputElement && view.element.contains(active))) view.focus();
      return;
    }
    this.sellView = null;
    const body = (() => {
      switch (screen.name) {
        case "loading":
          return h("main", { class: "center" }, h("p", {}, "…"));
        case "pair":
          return pairScreen(this, screen.message);
        case "sign-in":
          return signInScreen(this, screen.message, screen.otherSession);
        case "sell": {
          const drawn = new SellView(this);
          // Kept only when drawn alone: the list of what was set aside is drawn over it.
          this.sellView = this.showSetAside ? null : drawn;
          return drawn.element;
        }
        case "pay":
          return payScreen(this, screen.mode, screen.message);
        case "customer":
          return customerScreen(this, screen.results, screen.message);
        case "discount":
          return discountScreen(this, screen.kind, screen.message);
        case "approve":
          return approveScreen(this, screen.pending, screen.manager ?? "", screen.message);
        case "card":
          return cardScreen(this, screen.paymentId, screen.amountCents, screen.message);
        case "left-open":
          return leftOpenScreen(this, screen.message);
        case "done":
          return doneScreen(this, screen.sale);
        case "reprint":
          return reprintScreen(this, screen.sale, screen.from, screen.printId, screen.message);
        case "return-find":
          return returnFindScreen(this, screen.message);
        case "return":
          return returnScreen(this, screen.method, screen.message);
        case "return-done":
          return returnDoneScreen(this, screen.done);
        case "movement":
          return movementScreen(this, screen.kind, screen.message);
        case "x-report":
          return reportScreen(this, "x", screen.report, screen.message);
        case "close":
          return closeScreen(this, screen.message);
        case "z-report":
          return reportScreen(this, "z", screen.report);
      }
    })();
    replace(this.root, header(this), body, this.showSetAside ? setAsidePanel(this) : null);
    const focus = this.root.querySelector<HTMLElement>("[data-focus]");
    focus?.focus();
  }

  renderStatus(): void {
    const status = document.getElementById("status");
    if (status !== null) status.replaceWith(statusBar(this));
  }
}

// --- Helpers ---------------------------------------------------------------------------------------

function fold(text: string): string {
  return text.normalize("NFD").replace(/[\u0300-\u036f]/g, "").toLowerCase();
}

/** The reason in an error envelope's text, else its first characters. */
function errorMessage(text: string): string {
  try {
    const envelope = JSON.parse(text) as { error?: { message?: string } };
    return envelope.error?.message ?? text.slice(0, 300);
  } catch {
    return text.slice(0, 300);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export function start(): void {
  setLang(currentLang());
  const till = new Till();
  till.boot().catch((error: unknown) => {
    replace(till.root, h("main", { class: "narrow" }, h("p", { class: "error" }, describe(error))));
  });
  if ("serviceWorker" in navigator) {
    navigator.serviceWorker.register("/till/sw.js", { scope: "/till" }).catch(() => undefined);
  }
}
