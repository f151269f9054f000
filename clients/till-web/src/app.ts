// The till in the browser: pairing, the cashier's session, the sale, the cash tender, the
// queue of sales (the outbox) and the shift's reports. Screens are plain DOM, redrawn from the
// state below; prices come from the offline Pricer over the store's snapshot, so the till
// shows and sends exactly what the server books, online or not.
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
import type { Pricer, PriceQuote, PriceResult } from "../../typescript/src/pricing/index.js";
import { h, replace } from "./dom.js";
import type { Child } from "./dom.js";
import {
  nextTicketNumber,
  pairingFromFragment,
  readPairing,
  readSession,
  writePairing,
  writeSession,
} from "./device.js";
import type { Pairing, SessionKept } from "./device.js";
import { currentLang, dateTime, money, parseEuros, setLang, t } from "./i18n.js";
import { cardTender, cashTender, changeDue, remaining } from "./payment.js";
import type { Payment } from "./payment.js";
import { findCustomers, saleCustomer } from "./customer.js";
import { declaredDiscount, mayGrantAlone, parsePercent, REASONS } from "./discount.js";
import type { DiscountKind, DiscountReason, SaleDiscount } from "./discount.js";
import type { CustomerView, SaleCustomer } from "./customer.js";
import { refundOf, registerOfNumber, returnBody } from "./returns.js";
import type { RefundMethod, ReturnDraft } from "./returns.js";
import { saleBody } from "./sale.js";
import type { CartLine, Tender } from "./sale.js";
import type { Lang } from "./i18n.js";

type XReport = ResponseBody<"getXReport", 200>;
/** The tender being taken on the payment screen. */
type PayMode = "cash" | "card" | "loyalty" | "gift_card" | "credit_note";
/** Money put in or taken out of the drawer outside a sale. */
type MovementKind = "paid_in" | "paid_out" | "drop";
type ZReport = ResponseBody<"closeRegisterSession", 200>;


interface Finished {
  transactionId: string;
  number: string;
  quote: PriceQuote;
  tenders: Tender[];
  issuedAt: string;
  booked: boolean;
  /** What the last e-mail send of its receipt came to (the server's answer, or its refusal). */
  mail?: { text: string; bad: boolean };
}

/** A return sent: its refund and, for a credit note, the number and code the server gave it. */
interface ReturnDone {
  transactionId: string;
  number: string;
  originalNumber: string;
  refund: number;
  method: RefundMethod;
  booked: boolean;
  creditNote: { number: string; code: string | null } | null;
}

type Screen =
  | { name: "loading" }
  | { name: "pair"; message?: string }
  | { name: "sign-in"; message?: string; otherSession?: string }
  | { name: "sell" }
  | { name: "pay"; mode: PayMode; message?: string }
  | { name: "customer"; results?: CustomerView[]; message?: string }
  | { name: "discount"; kind: DiscountKind; message?: string }
  | { name: "approve"; pending: SaleDiscount; manager?: string; message?: string }
  | { name: "card"; paymentId: string; amountCents: number; message?: string }
  | { name: "done"; sale: Finished }
  | { name: "return-find"; message?: string }
  | { name: "return"; method: RefundMethod; message?: string }
  | { name: "return-done"; done: ReturnDone }
  | { name: "movement"; kind: MovementKind; message?: string }
  | { name: "x-report"; report?: XReport; message?: string }
  | { name: "close"; message?: string }
  | { name: "z-report"; report: ZReport };

const BASE = location.origin;
const SYNC_EVERY_MS = 15_000;
const MAX_QUANTITY = 9999;

class Till {
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
  /** The staff id typed at the last sign-in, kept when it is refused. */
  lastCashier = "";
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
        else this.renderStatus();
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
      } else if (this.screen.name === "customer" || this.screen.name === "discount" || this.screen.name === "approve") {
        this.go({ name: "sell" });
      } else if (this.screen.name === "return-find" || this.screen.name === "return" || this.screen.name === "movement") {
        this.returning = null;
        this.go({ name: "sell" });
      } else if (["x-report", "close"].includes(this.screen.name)) {
        this.go({ name: "sell" });
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

  /** Back to the cart: only while no tender was taken. */
  leavePayment(): void {
    if (this.payment !== null && this.payment.tenders.length > 0) return;
    this.payment = null;
    this.reprice();
    this.go({ name: "sell" });
  }

  /** Cash handed over: up to what is due; the sale is finalized once nothing is left. */
  async payCash(presented: number): Promise<void> {
    const payment = this.payment;
    if (payment === null || presented <= 0) return;
    payment.tenders.push(cashTender(remaining(payment), presented));
    if (remaining(payment) === 0) await this.finalize();
    else this.go({ name: "pay", mode: "cash" });
  }

  /** Records the card attempt before the terminal is asked: online only (DESIGN.md section 22). */
  async askCard(amountCents: number): Promise<void> {
    const payment = this.payment;
    const session = this.session;
    if (payment === null || session === null || this.cardBusy) return;
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

  /** What the terminal said, keyed by the cashier: an approval (maybe partial) or a refusal. */
  async cardOutcome(paymentId: string, amountCents: number, approval: { authorizedCents: number; code: string; last4: string } | null): Promise<void> {
    const payment = this.payment;
    if (payment === null || this.cardBusy) return;
    const body =
      approval === null
        ? { status: "declined" as const }
        : {
            status: approval.authorizedCents < amountCents ? ("partially_authorized" as const) : ("authorized" as const),
            authorizedCents: approval.authorizedCents,
            authorizationCode: approval.code,
            ...(approval.last4 === "" ? {} : { last4: approval.last4 }),
          };
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
    if (approval === null) {
      this.go({ name: "pay", mode: "card", message: t("cardDeclined") });
      return;
    }
    payment.tenders.push(cardTender(paymentId, approval.authorizedCents));
    if (remaining(payment) === 0) await this.finalize();
    else this.go({ name: "pay", mode: "cash", message: `${t("cardPartial")} ${money(approval.authorizedCents)}${queued ? ` · ${t("cardQueued")}` : ""}` });
  }

  /** Points, a gift card or a credit note: the balance read first, the tender capped at it. */
  async takeStoredValue(kind: "loyalty" | "gift_card" | "credit_note", wantedCents: number, code: string): Promise<void> {
    const payment = this.payment;
    if (payment === null || this.cardBusy || wantedCents <= 0) return;
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
      [done.number, `${t("returnOf")} ${done.originalNumber}`, `${t("refund")}: ${(done.refund / 100).toFixed(2)}`, "", t("provisional")].join("\n"),
    );
  }

  async printReceipt(sale: Finished): Promise<void> {
    await this.printTicket(sale.transactionId, sale.booked, () => provisionalSlip(sale, this.pairing, this.session));
  }

  /** The server's own ticket once booked (the original, then duplicates); else a provisional slip. */
  async printTicket(transactionId: string, booked: boolean, provisional: () => string): Promise<void> {
    const area = document.getElementById("print-area");
    if (area === null) return;
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
    const body = (() => {
      switch (screen.name) {
        case "loading":
          return h("main", { class: "center" }, h("p", {}, "…"));
        case "pair":
          return pairScreen(this, screen.message);
        case "sign-in":
          return signInScreen(this, screen.message, screen.otherSession);
        case "sell":
          return sellScreen(this);
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
        case "done":
          return doneScreen(this, screen.sale);
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

// --- Screens ---------------------------------------------------------------------------------------

function header(till: Till): HTMLElement {
  const lang = (code: Lang) =>
    h(
      "button",
      {
        type: "button",
        class: code === currentLang() ? "lang current" : "lang",
        "aria-pressed": code === currentLang() ? "true" : "false",
        onclick: () => {
          setLang(code);
          till.render();
        },
      },
      code.toUpperCase(),
    );
  const who = till.session ? `${till.session.cashierSubject} · ${till.session.registerId}` : till.pairing?.registerId ?? "";
  return h(
    "header",
    { class: "top" },
    h("span", { class: "brand" }, "till"),
    h("span", { class: "who" }, who),
    statusBar(till),
    h("nav", { class: "lang", "aria-label": "Language" }, lang("fr"), lang("en")),
  );
}

function statusBar(till: Till): HTMLElement {
  return h(
    "div",
    { id: "status", class: "status" },
    h("span", { class: till.online ? "badge ok" : "badge off", "data-online": String(till.online) }, till.online ? t("online") : t("offline")),
    h("span", { class: till.waiting > 0 ? "badge warn" : "badge", id: "waiting", "data-count": till.waiting }, `${till.waiting} ${t("waiting")}`),
    till.setAside.length > 0
      ? h(
          "button",
          {
            type: "button",
            class: "badge bad",
            id: "set-aside",
            "data-count": till.setAside.length,
            onclick: () => {
              till.showSetAside = !till.showSetAside;
              till.render();
            },
          },
          `${till.setAside.length} ${t("setAside")}`,
        )
      : null,
  );
}

function field(label: string, input: HTMLInputElement): HTMLElement {
  return h("label", { class: "field" }, h("span", {}, label), input);
}

function pairScreen(till: Till, message?: string): HTMLElement {
  const token = h("input", { name: "token", autocomplete: "off", required: true, "data-focus": true });
  const store = h("input", { name: "store", autocomplete: "off", required: true });
  const register = h("input", { name: "register", autocomplete: "off", required: true });
  return h(
    "main",
    { class: "narrow" },
    h("h1", {}, t("pairTitle")),
    h("p", {}, t("pairHelp")),
    message ? h("p", { class: "error", role: "alert" }, message) : null,
    h(
      "form",
      {
        class: "stack",
        onsubmit: (event: Event) => {
          event.preventDefault();
          void till.pairWith(token.value, store.value, register.value);
        },
      },
      field(t("deviceToken"), token),
      field(t("store"), store),
      field(t("register"), register),
      h("button", { type: "submit", class: "primary big" }, t("pair")),
    ),
  );
}

function signInScreen(till: Till, message?: string, otherSession?: string): HTMLElement {
  const known = till.lastCashier !== "";
  const cashier = h("input", { name: "cashier", id: "cashier", autocomplete: "username", list: "staff", required: true, value: till.lastCashier, "data-focus": !known });
  const pin = h("input", { name: "pin", id: "pin", type: "password", inputmode: "numeric", autocomplete: "off", required: true, "data-focus": known });
  const float = h("input", { name: "float", id: "float", inputmode: "decimal", value: "0", autocomplete: "off" });
  return h(
    "main",
    { class: "narrow" },
    h("h1", {}, t("signInTitle")),
    h("p", { class: "muted" }, `${t("store")} ${till.pairing?.storeId ?? ""} · ${t("register")} ${till.pairing?.registerId ?? ""}`),
    message ? h("p", { class: "error", role: "alert" }, message) : null,
    otherSession
      ? h("button", { type: "button", class: "danger", id: "close-other", onclick: () => void till.closeOther(otherSession) }, `${t("closeOther")} (${otherSession})`)
      : null,
    h(
      "form",
      {
        class: "stack",
        onsubmit: (event: Event) => {
          event.preventDefault();
          const cents = parseEuros(float.value === "" ? "0" : float.value);
          if (cents === null) {
            float.setCustomValidity(t("error"));
            float.reportValidity();
            return;
          }
          void till.signIn(cashier.value.trim(), pin.value, cents);
        },
      },
      field(t("cashier"), cashier),
      h("datalist", { id: "staff" }, ...till.staff.map((member) => h("option", { value: member.subject }, member.displayName))),
      field(t("pin"), pin),
      field(t("openingFloat"), float),
      h("button", { type: "submit", class: "primary big", id: "sign-in" }, t("signIn")),
    ),
    till.snapshotAt === null ? h("p", { class: "muted" }, t("syncing")) : null,
    h("p", {}, h("button", { type: "button", class: "link", onclick: () => void till.unpair() }, t("unpair"))),
  );
}

function sellScreen(till: Till): HTMLElement {
  const scan = h("input", {
    id: "scan",
    name: "scan",
    autocomplete: "off",
    enterkeyhint: "enter",
    placeholder: t("scanHint"),
    "aria-label": t("scan"),
    "data-focus": true,
  });
  scan.addEventListener("keydown", (event) => {
    if (event.key === "Enter") {
      event.preventDefault();
      const value = scan.value;
      scan.value = "";
      till.lookup(value);
    }
  });
  // The scanner types into this field whatever the cashier touched last.
  scan.addEventListener("blur", () => {
    setTimeout(() => {
      const active = document.activeElement;
      const typing = active instanceof HTMLInputElement && active !== scan;
      if (!typing && till.screen.name === "sell" && !till.showSetAside && document.body.contains(scan)) scan.focus();
    }, 0);
  });
  const results =
    till.results.length > 0
      ? h(
          "ul",
          { class: "results", id: "results" },
          ...till.results.map((article) =>
            h(
              "li",
              {},
              h(
                "button",
                { type: "button", class: "result", onclick: () => till.addArticle(article) },
                h("span", {}, article.catalog.name),
                h("span", { class: "amount" }, money(article.catalog.priceCents)),
              ),
            ),
          ),
        )
      : null;
  const quote = till.priced?.ok ? till.priced.quote : null;
  const rows = till.cart.map((line) => {
    const quoted = quote?.lines.find((q) => q.id === line.id);
    const qty = h("input", {
      class: "qty",
      inputmode: "numeric",
      value: String(line.quantity),
      "aria-label": `${t("qty")} ${line.name}`,
      "data-line": line.id,
    });
    qty.addEventListener("change", () => {
      const value = Number(qty.value);
      if (Number.isInteger(value) && value >= 0) till.setQuantity(line.id, value);
      else qty.value = String(line.quantity);
    });
    qty.addEventListener("keydown", (event) => {
      if (event.key === "Enter") {
        event.preventDefault();
        qty.blur();
        document.getElementById("scan")?.focus();
      }
    });
    return h(
      "tr",
      { "data-sku": line.skuId },
      h("td", { class: "name" }, line.name, quoted ? h("small", {}, `${money(quoted.unitPrice)} · ${t("vatRate")} ${quoted.vatRate} %`) : null),
      h(
        "td",
        { class: "qty-cell" },
        h("button", { type: "button", class: "step", "aria-label": "-1", onclick: () => till.setQuantity(line.id, line.quantity - 1) }, "−"),
        qty,
        h("button", { type: "button", class: "step", "aria-label": "+1", onclick: () => till.setQuantity(line.id, line.quantity + 1) }, "+"),
      ),
      h("td", { class: "amount" }, quoted ? money(quoted.netCents) : "…"),
      h("td", {}, h("button", { type: "button", class: "remove", "aria-label": `${t("remove")} ${line.name}`, onclick: () => till.removeLine(line.id) }, "✕")),
    );
  });
  const cart =
    till.cart.length === 0
      ? h("p", { class: "empty" }, till.articles.length === 0 ? t("snapshotMissing") : t("emptyCart"))
      : h(
          "table",
          { class: "cart", id: "cart" },
          h("thead", {}, h("tr", {}, h("th", {}, t("article")), h("th", {}, t("qty")), h("th", { class: "amount" }, t("amount")), h("th", {}, ""))),
          h("tbody", {}, ...rows),
        );
  return h(
    "main",
    { class: "sell" },
    h(
      "section",
      { class: "left" },
      h("div", { class: "scan" }, scan),
      till.notice ? h("p", { class: till.notice.bad ? "error" : "notice", role: "status" }, till.notice.text) : null,
      results,
      cart,
    ),
    h(
      "aside",
      { class: "right" },
      customerPanel(till),
      totalsPanel(till),
      h("button", { type: "button", class: "primary huge", id: "pay", disabled: !(till.priced?.ok ?? false), onclick: () => till.startPayment("cash") }, `${t("payCash")} (F2)`),
      till.cart.length > 0
        ? h("button", { type: "button", id: "discount", onclick: () => till.go({ name: "discount", kind: "line_percent" }) }, `${t("discountTitle")} (F7)`)
        : null,
      till.cart.length > 0
        ? h("button", { type: "button", class: "quiet", onclick: () => { till.cart = []; till.customer = null; till.discount = null; till.reprice(); till.render(); } }, t("cancelSale"))
        : null,
      h(
        "div",
        { class: "tools" },
        h("button", { type: "button", id: "return", disabled: till.cart.length > 0, onclick: () => till.go({ name: "return-find" }) }, `${t("returnTitle")} (F4)`),
        h("button", { type: "button", id: "cash-movement", onclick: () => till.go({ name: "movement", kind: "paid_in" }) }, t("movementTitle")),
        h("button", { type: "button", id: "x-report", onclick: () => void till.xReport() }, t("xReport")),
        h("button", { type: "button", id: "close", onclick: () => till.go({ name: "close" }) }, t("closeTill")),
      ),
      till.snapshotAt ? h("p", { class: "muted small" }, `${t("catalogAt")} ${dateTime(till.snapshotAt)}`) : null,
    ),
  );
}

function totalsPanel(till: Till): HTMLElement {
  const priced = till.priced;
  if (priced !== null && !priced.ok) {
    return h("div", { id: "totals", class: "totals" }, h("p", { class: "error" }, priced.refusal.message));
  }
  const quote = priced?.quote ?? null;
  const vat = quote?.vat ?? [];
  const discounts = quote ? quote.lines.reduce((sum, l) => sum + l.grossCents - l.netCents, 0) : 0;
  return h(
    "div",
    { id: "totals", class: "totals" },
    h("dl", {},
      h("dt", {}, t("subtotal")),
      h("dd", {}, money(quote ? quote.lines.reduce((sum, l) => sum + l.grossCents, 0) : 0)),
      discounts !== 0 ? h("dt", {}, t("discounts")) : null,
      discounts !== 0 ? h("dd", {}, money(-discounts)) : null,
      ...vat.flatMap((v) => [h("dt", { class: "vat" }, `${t("vat")} ${v.vatRate} %`), h("dd", { class: "vat" }, money(v.vatCents))]),
    ),
    till.discount
      ? h(
          "p",
          { class: "discount-line", id: "discount-applied", "data-approved-by": till.discount.approvedBy ?? "" },
          h("span", {}, `${t("discountTitle")} ${discountText(till.discount)}${till.discount.approvedBy ? ` · ${t("approvedBy")} ${till.discount.approvedBy}` : ""}`),
          h("button", { type: "button", class: "remove", "aria-label": `${t("remove")} ${t("discountTitle")}`, onclick: () => till.applyDiscount(null) }, "✕"),
        )
      : null,
    h("p", { class: "grand" }, h("span", {}, t("total")), h("strong", { id: "total", "data-cents": quote?.totals.total ?? 0 }, money(quote?.totals.total ?? 0))),
    h("p", { class: "muted small" }, `${quote?.totals.itemCount ?? 0} ${t("items")}`),
  );
}

function payScreen(till: Till, mode: PayMode, message?: string): HTMLElement {
  const payment = till.payment;
  if (payment === null) return h("main", { class: "narrow" }, h("p", {}, "…"));
  const due = remaining(payment);
  const taken = payment.tenders.length > 0;
  const tab = (which: PayMode, label: string, key?: string) =>
    h(
      "button",
      {
        type: "button",
        id: `method-${which}`,
        class: which === mode ? "tab current" : "tab",
        "aria-pressed": which === mode ? "true" : "false",
        onclick: () => till.go({ name: "pay", mode: which }),
      },
      key === undefined ? label : `${label} (${key})`,
    );
  const points = till.customer !== null && till.customer.loyaltyPoints > 0;
  const form =
    mode === "cash"
      ? cashForm(till, due)
      : mode === "card"
        ? cardForm(till, due)
        : storedValueForm(till, mode, due);
  return h(
    "main",
    { class: "narrow" },
    h("h1", {}, t("payTitle")),
    h("p", { class: "grand" }, h("span", {}, t("total")), h("strong", { id: "sale-total", "data-cents": payment.quote.totals.total }, money(payment.quote.totals.total))),
    taken ? tendersList(payment.tenders, "tenders-taken") : null,
    h("p", { class: "grand" }, h("span", {}, t("due")), h("strong", { id: "due", "data-cents": due }, money(due))),
    message ? h("p", { class: "error", role: "alert", id: "pay-message" }, message) : null,
    h(
      "div",
      { class: "tabs", role: "group" },
      tab("cash", t("method_cash"), "F2"),
      tab("card", t("method_card"), "F3"),
      tab("gift_card", t("method_gift_card")),
      tab("credit_note", t("method_credit_note")),
      points ? tab("loyalty", t("method_loyalty")) : null,
    ),
    form,
    taken
      ? h("button", { type: "button", class: "danger", id: "cancel-payment", onclick: () => void till.cancelPayment() }, t("cancelPayment"))
      : h("button", { type: "button", class: "quiet", onclick: () => till.leavePayment() }, `${t("back")} (Esc)`),
  );
}

function cashForm(till: Till, due: number): HTMLElement {
  const given = h("input", { id: "given", name: "given", inputmode: "decimal", autocomplete: "off", "data-focus": true });
  const change = h("strong", { id: "change" }, money(0));
  const confirm = h("button", { type: "submit", class: "primary huge", id: "confirm", disabled: true }, t("confirm"));
  const typed = () => (given.value.trim() === "" ? due : parseEuros(given.value));
  const update = () => {
    const cents = typed();
    const ok = cents !== null && cents > 0;
    // Less than is due: a part paid in cash, the rest by another tender.
    change.textContent = cents === null ? t("error") : cents >= due ? money(cents - due) : `${t("partCash")} ${money(due - cents)}`;
    change.className = ok ? "" : "error";
    confirm.disabled = !ok;
    confirm.textContent = ok && cents !== null && cents < due ? `${t("addCash")} ${money(cents)}` : t("confirm");
  };
  given.addEventListener("input", update);
  const quick = [due, ...[500, 1000, 2000, 5000, 10000].filter((note) => note > due).slice(0, 3)];
  setTimeout(update, 0);
  return h(
    "form",
    {
      class: "stack",
      id: "cash-form",
      onsubmit: (event: Event) => {
        event.preventDefault();
        const cents = typed();
        if (cents === null || cents <= 0) return;
        confirm.disabled = true;
        void till.payCash(cents);
      },
    },
    field(t("given"), given),
    h(
      "div",
      { class: "quick" },
      ...quick.map((cents) =>
        h("button", { type: "button", onclick: () => { given.value = (cents / 100).toFixed(2); update(); given.focus(); } }, money(cents)),
      ),
    ),
    h("p", { class: "grand" }, h("span", {}, t("change")), change),
    confirm,
  );
}

function cardForm(till: Till, due: number): HTMLElement {
  // A card is charged only once the server holds its attempt: none offline, cash stays.
  if (!till.online) return h("p", { class: "notice", id: "card-offline", role: "status" }, t("cardOffline"));
  const amount = h("input", { id: "card-amount", name: "card-amount", inputmode: "decimal", autocomplete: "off", value: (due / 100).toFixed(2), "data-focus": true });
  const send = h("button", { type: "submit", class: "primary huge", id: "card-send", disabled: till.cardBusy }, t("cardSend"));
  return h(
    "form",
    {
      class: "stack",
      id: "card-form",
      onsubmit: (event: Event) => {
        event.preventDefault();
        const cents = parseEuros(amount.value);
        if (cents === null || cents <= 0 || cents > due) {
          amount.setCustomValidity(t("cardAmountBad"));
          amount.reportValidity();
          return;
        }
        send.disabled = true;
        void till.askCard(cents);
      },
    },
    field(t("cardAmount"), amount),
    send,
  );
}

/** Points, a gift card or a credit note: their balances live on the server, so online only. */
function storedValueForm(till: Till, kind: "loyalty" | "gift_card" | "credit_note", due: number): HTMLElement {
  if (!till.online) return h("p", { class: "notice", id: "stored-value-offline", role: "status" }, t("storedValueOffline"));
  const customer = till.customer;
  const most = kind === "loyalty" && customer !== null ? Math.min(due, customer.loyaltyPoints) : due;
  const code = h("input", { id: "instrument-code", name: "instrument-code", autocomplete: "off", required: true, maxlength: 64, "data-focus": kind !== "loyalty" });
  const amount = h("input", { id: "instrument-amount", name: "instrument-amount", inputmode: "decimal", autocomplete: "off", value: (most / 100).toFixed(2), "data-focus": kind === "loyalty" });
  return h(
    "form",
    {
      class: "stack",
      id: "stored-value-form",
      onsubmit: (event: Event) => {
        event.preventDefault();
        const cents = parseEuros(amount.value);
        if (cents === null || cents <= 0 || cents > due) {
          amount.setCustomValidity(t("cardAmountBad"));
          amount.reportValidity();
          return;
        }
        void till.takeStoredValue(kind, cents, code.value.trim());
      },
    },
    kind === "loyalty" && customer !== null
      ? h("p", { id: "points", "data-points": customer.loyaltyPoints }, `${customer.displayName} · ${customer.loyaltyPoints} ${t("points")}`)
      : field(kind === "gift_card" ? t("giftCardCode") : t("creditNoteCode"), code),
    field(t("instrumentAmount"), amount),
    h("button", { type: "submit", class: "primary huge", id: "stored-value-take", disabled: till.cardBusy }, t("takeTender")),
  );
}

function discountText(discount: SaleDiscount): string {
  const d = discount.declared;
  return d.basis === "percent" ? `${(d.percentBps ?? 0) / 100} %` : money(d.amountCents ?? 0);
}

function discountScreen(till: Till, kind: DiscountKind, message?: string): HTMLElement {
  const value = h("input", { id: "discount-value", name: "discount-value", inputmode: "decimal", autocomplete: "off", required: true, "data-focus": true });
  const reason = h("select", { id: "discount-reason", name: "discount-reason" }, ...REASONS.map((r) => h("option", { value: r }, t(`reason_${r}`))));
  const line = h(
    "select",
    { id: "discount-line", name: "discount-line" },
    ...[...till.cart].reverse().map((l) => h("option", { value: l.id }, `${l.name} × ${l.quantity}`)),
  );
  const tab = (which: DiscountKind) =>
    h(
      "button",
      {
        type: "button",
        id: `discount-${which}`,
        class: which === kind ? "tab current" : "tab",
        "aria-pressed": which === kind ? "true" : "false",
        onclick: () => till.go({ name: "discount", kind: which }),
      },
      t(`discount_${which}`),
    );
  return h(
    "main",
    { class: "narrow" },
    h("h1", {}, t("discountTitle")),
    message ? h("p", { class: "error", role: "alert", id: "discount-message" }, message) : null,
    h("div", { class: "tabs", role: "group" }, tab("line_percent"), tab("ticket_percent"), tab("ticket_amount")),
    h(
      "form",
      {
        class: "stack",
        onsubmit: (event: Event) => {
          event.preventDefault();
          const amount = kind === "ticket_amount" ? parseEuros(value.value) : parsePercent(value.value);
          if (amount === null || amount <= 0) {
            value.setCustomValidity(t("amountBad"));
            value.reportValidity();
            return;
          }
          till.declareDiscount(kind, amount, reason.value as DiscountReason, kind === "line_percent" ? line.value : null);
        },
      },
      kind === "line_percent" ? selectField(t("discountLine"), line) : null,
      field(kind === "ticket_amount" ? t("discountAmount") : t("discountPercent"), value),
      selectField(t("discountReason"), reason),
      h("button", { type: "submit", class: "primary big", id: "discount-confirm" }, t("confirm")),
      h("button", { type: "button", class: "quiet", onclick: () => till.go({ name: "sell" }) }, `${t("back")} (Esc)`),
    ),
  );
}

function approveScreen(till: Till, pending: SaleDiscount, typed: string, message?: string): HTMLElement {
  const managers = till.staff.filter((member) => mayGrantAlone(member.role));
  const manager = h("input", { id: "manager", name: "manager", autocomplete: "off", list: "managers", required: true, value: typed, "data-focus": typed === "" });
  const pin = h("input", { id: "manager-pin", name: "manager-pin", type: "password", inputmode: "numeric", autocomplete: "off", required: true, "data-focus": typed !== "" });
  return h(
    "main",
    { class: "narrow" },
    h("h1", {}, t("approveTitle")),
    h("p", {}, t("approveHelp")),
    h("p", { class: "grand" }, h("span", {}, `${t("discountTitle")} ${discountText(pending)}`), h("strong", { id: "approve-amount", "data-cents": pending.reductionCents }, money(-pending.reductionCents))),
    message ? h("p", { class: "error", role: "alert", id: "approve-message" }, message) : null,
    h(
      "form",
      {
        class: "stack",
        onsubmit: (event: Event) => {
          event.preventDefault();
          void till.approveDiscount(pending, manager.value.trim(), pin.value);
        },
      },
      field(t("managerId"), manager),
      h("datalist", { id: "managers" }, ...managers.map((member) => h("option", { value: member.subject }, member.displayName))),
      field(t("managerPin"), pin),
      h("button", { type: "submit", class: "primary big", id: "approve-confirm" }, t("approve")),
      h("button", { type: "button", class: "quiet", onclick: () => till.go({ name: "sell" }) }, `${t("back")} (Esc)`),
    ),
  );
}

function selectField(label: string, select: HTMLSelectElement): HTMLElement {
  return h("label", { class: "field" }, h("span", {}, label), select);
}

function customerPanel(till: Till): HTMLElement {
  const customer = till.customer;
  if (customer === null) {
    return h("button", { type: "button", id: "customer", class: "big", onclick: () => till.go({ name: "customer" }) }, `${t("customer")} (F6)`);
  }
  return h(
    "div",
    { class: "customer-card", id: "customer-attached", "data-id": customer.customerId },
    h("span", {}, h("strong", {}, customer.displayName), h("small", {}, `${customer.loyaltyPoints} ${t("points")}`)),
    h("button", { type: "button", class: "remove", "aria-label": `${t("remove")} ${customer.displayName}`, onclick: () => till.attachCustomer(null) }, "✕"),
  );
}

function customerScreen(till: Till, results?: CustomerView[], message?: string): HTMLElement {
  const query = h("input", { id: "customer-query", name: "customer-query", autocomplete: "off", enterkeyhint: "search", "data-focus": true });
  return h(
    "main",
    { class: "narrow" },
    h("h1", {}, t("customer")),
    h("p", {}, t("customerHelp")),
    message ? h("p", { class: "error", role: "alert", id: "customer-message" }, message) : null,
    h(
      "form",
      {
        class: "stack",
        onsubmit: (event: Event) => {
          event.preventDefault();
          void till.searchCustomer(query.value);
        },
      },
      field(t("customerQuery"), query),
      h("button", { type: "submit", class: "primary big", id: "customer-find" }, t("find")),
    ),
    results && results.length > 0
      ? h(
          "ul",
          { class: "results", id: "customer-results" },
          ...results.map((view) =>
            h(
              "li",
              {},
              h(
                "button",
                { type: "button", class: "result", "data-id": view.customerId, onclick: () => till.attachCustomer(view) },
                h("span", {}, view.displayName ?? view.customerId, h("small", { class: "muted" }, ` · ${view.customerId}`)),
                h("span", { class: "amount" }, `${view.loyaltyPoints ?? 0} ${t("points")}`),
              ),
            ),
          ),
        )
      : null,
    h("button", { type: "button", class: "quiet", onclick: () => till.go({ name: "sell" }) }, `${t("back")} (Esc)`),
  );
}

function cardScreen(till: Till, paymentId: string, amountCents: number, message?: string): HTMLElement {
  const approved = h("input", { id: "card-authorized", name: "card-authorized", inputmode: "decimal", autocomplete: "off", value: (amountCents / 100).toFixed(2) });
  const code = h("input", { id: "card-code", name: "card-code", autocomplete: "off", required: true, maxlength: 32, "data-focus": true });
  const last4 = h("input", { id: "card-last4", name: "card-last4", inputmode: "numeric", autocomplete: "off", maxlength: 4, pattern: "[0-9]{4}" });
  const busy = till.cardBusy;
  return h(
    "main",
    { class: "narrow" },
    h("h1", {}, t("cardTitle")),
    h("p", { class: "grand" }, h("span", {}, t("cardAsk")), h("strong", { id: "card-asked", "data-cents": amountCents, "data-payment": paymentId }, money(amountCents))),
    h("p", {}, t("cardKeyHelp")),
    message ? h("p", { class: "error", role: "alert", id: "card-message" }, message) : null,
    h(
      "form",
      {
        class: "stack",
        onsubmit: (event: Event) => {
          event.preventDefault();
          const cents = parseEuros(approved.value);
          if (cents === null || cents <= 0 || cents > amountCents) {
            approved.setCustomValidity(t("cardAmountBad"));
            approved.reportValidity();
            return;
          }
          void till.cardOutcome(paymentId, amountCents, { authorizedCents: cents, code: code.value.trim(), last4: last4.value.trim() });
        },
      },
      field(t("cardCode"), code),
      field(t("cardAuthorized"), approved),
      field(t("cardLast4"), last4),
      h("button", { type: "submit", class: "primary huge", id: "card-approved", disabled: busy }, t("cardApproved")),
      h("button", { type: "button", class: "danger big", id: "card-declined", disabled: busy, onclick: () => void till.cardOutcome(paymentId, amountCents, null) }, t("cardDeclinedButton")),
    ),
  );
}

/** The tenders of a sale, one line each: what the screens and the done screen show. */
function tendersList(tenders: readonly Tender[], id: string): HTMLElement {
  return h(
    "ul",
    { class: "tenders", id },
    ...tenders.map((tender) =>
      h(
        "li",
        { "data-method": tender.method, "data-cents": tender.applied },
        h("span", {}, methodName(tender.method)),
        h("span", { class: "amount" }, money(tender.applied)),
      ),
    ),
  );
}

function methodName(method: string): string {
  switch (method) {
    case "cash":
      return t("method_cash");
    case "card":
      return t("method_card");
    case "credit_note":
      return t("method_credit_note");
    case "gift_card":
      return t("method_gift_card");
    case "loyalty":
      return t("method_loyalty");
    default:
      return method;
  }
}

function doneScreen(till: Till, sale: Finished): HTMLElement {
  const booked = sale.booked || till.booked.has(sale.transactionId);
  const refused = till.refused.get(sale.transactionId);
  const next = h("button", { type: "button", class: "primary huge", id: "new-sale", "data-focus": true, onclick: () => till.go({ name: "sell" }) }, t("newSale"));
  return h(
    "main",
    { class: "narrow" },
    refused ? h("p", { class: "error", role: "alert", id: "sale-refused" }, `${t("saleRefused")}: ${refused}`) : null,
    h("h1", { id: "sale-state", "data-booked": String(booked), "data-transaction": sale.transactionId, "data-total": sale.quote.totals.total }, booked ? t("saleDone") : t("saleQueued")),
    h("p", { class: "grand" }, h("span", {}, t("total")), h("strong", {}, money(sale.quote.totals.total))),
    tendersList(sale.tenders, "sale-tenders"),
    h("p", { class: "grand change" }, h("span", {}, t("change")), h("strong", { id: "change-due", "data-cents": changeDue(sale.tenders) }, money(changeDue(sale.tenders)))),
    h("p", { class: "muted" }, `${sale.number} · ${sale.transactionId}`),
    next,
    h("button", { type: "button", id: "print", onclick: () => void till.printReceipt(sale) }, t("printReceipt")),
    mailForm(till, sale, booked),
  );
}

function returnFindScreen(till: Till, message?: string): HTMLElement {
  const number = h("input", { id: "receipt-number", name: "receipt-number", autocomplete: "off", enterkeyhint: "search", "data-focus": true });
  return h(
    "main",
    { class: "narrow" },
    h("h1", {}, t("returnTitle")),
    h("p", {}, t("returnHelp")),
    message ? h("p", { class: "error", role: "alert", id: "return-message" }, message) : null,
    h(
      "form",
      {
        class: "stack",
        onsubmit: (event: Event) => {
          event.preventDefault();
          void till.findReceipt(number.value);
        },
      },
      field(t("receiptNumber"), number),
      h("button", { type: "submit", class: "primary big", id: "receipt-find" }, t("find")),
      h("button", { type: "button", class: "quiet", onclick: () => till.go({ name: "sell" }) }, `${t("back")} (Esc)`),
    ),
  );
}

function returnScreen(till: Till, method: RefundMethod, message?: string): HTMLElement {
  const draft = till.returning;
  if (draft === null) return h("main", { class: "narrow" }, h("p", {}, "…"));
  const refund = refundOf(draft);
  let focused = false;
  const rows = draft.lines.map((line) => {
    const left = line.quantity - line.returned;
    const qty = h("input", {
      class: "qty",
      inputmode: "numeric",
      value: String(line.take),
      disabled: left === 0,
      "aria-label": `${t("qty")} ${line.label}`,
      "data-line": line.lineId,
      "data-focus": left > 0 && !focused,
    });
    if (left > 0) focused = true;
    qty.addEventListener("change", () => {
      const value = Number(qty.value);
      if (Number.isInteger(value) && value >= 0) till.setReturnQuantity(line.lineId, value);
      else qty.value = String(line.take);
    });
    return h(
      "tr",
      { "data-sku": line.skuId, "data-line": line.lineId },
      h("td", { class: "name" }, line.label, h("small", {}, `${t("sold")} ${line.quantity} · ${t("returnable")} ${left}`)),
      h(
        "td",
        { class: "qty-cell" },
        h("button", { type: "button", class: "step", "aria-label": "-1", disabled: line.take === 0, onclick: () => till.setReturnQuantity(line.lineId, line.take - 1) }, "−"),
        qty,
        h("button", { type: "button", class: "step", "aria-label": "+1", disabled: line.take >= left, onclick: () => till.setReturnQuantity(line.lineId, line.take + 1) }, "+"),
      ),
    );
  });
  const tab = (which: RefundMethod, label: string) =>
    h(
      "button",
      {
        type: "button",
        id: `refund-${which}`,
        class: which === method ? "tab current" : "tab",
        "aria-pressed": which === method ? "true" : "false",
        onclick: () => till.go({ name: "return", method: which }),
      },
      label,
    );
  return h(
    "main",
    { class: "narrow" },
    h("h1", {}, `${t("returnTitle")} · ${draft.originalNumber}`),
    message ? h("p", { class: "error", role: "alert" }, message) : null,
    h("table", { class: "cart", id: "return-lines" }, h("tbody", {}, ...rows)),
    h("p", { class: "grand" }, h("span", {}, t("refund")), h("strong", { id: "refund", "data-cents": refund }, money(refund))),
    h("div", { class: "tabs", role: "group", "aria-label": t("refundBy") }, tab("cash", t("method_cash")), tab("credit_note", t("method_credit_note"))),
    h("button", { type: "button", class: "primary huge", id: "return-confirm", disabled: !draft.lines.some((l) => l.take > 0), onclick: () => void till.confirmReturn(method) }, `${t("refundConfirm")} ${money(refund)}`),
    h("button", { type: "button", class: "quiet", onclick: () => { till.returning = null; till.go({ name: "sell" }); } }, `${t("back")} (Esc)`),
  );
}

function returnDoneScreen(till: Till, done: ReturnDone): HTMLElement {
  const booked = done.booked || till.booked.has(done.transactionId);
  const refused = till.refused.get(done.transactionId);
  return h(
    "main",
    { class: "narrow" },
    refused ? h("p", { class: "error", role: "alert", id: "return-refused" }, `${t("returnRefused")}: ${refused}`) : null,
    h("h1", { id: "return-state", "data-booked": String(booked), "data-transaction": done.transactionId }, booked ? t("returnDone") : t("returnQueued")),
    h("p", { class: "grand change" }, h("span", {}, done.method === "cash" ? t("refundCash") : t("method_credit_note")), h("strong", { id: "refund-done", "data-cents": done.refund }, money(done.refund))),
    done.creditNote
      ? h(
          "p",
          { class: "grand", id: "credit-note", "data-number": done.creditNote.number, "data-code": done.creditNote.code ?? "" },
          h("span", {}, `${t("creditNote")} ${done.creditNote.number}`),
          h("strong", {}, done.creditNote.code ?? ""),
        )
      : null,
    h("p", { class: "muted" }, `${done.number} · ${t("returnOf")} ${done.originalNumber}`),
    h("button", { type: "button", class: "primary huge", id: "new-sale", "data-focus": true, onclick: () => till.go({ name: "sell" }) }, t("newSale")),
    h("button", { type: "button", id: "print", onclick: () => void till.printReturn(done) }, t("printReceipt")),
  );
}

function movementScreen(till: Till, kind: MovementKind, message?: string): HTMLElement {
  const amount = h("input", { id: "movement-amount", name: "movement-amount", inputmode: "decimal", autocomplete: "off", required: true, "data-focus": true });
  const reason = h("input", { id: "movement-reason", name: "movement-reason", autocomplete: "off", maxlength: 200 });
  const tab = (which: MovementKind) =>
    h(
      "button",
      {
        type: "button",
        id: `movement-${which}`,
        class: which === kind ? "tab current" : "tab",
        "aria-pressed": which === kind ? "true" : "false",
        onclick: () => till.go({ name: "movement", kind: which }),
      },
      t(`movement_${which}`),
    );
  return h(
    "main",
    { class: "narrow" },
    h("h1", {}, t("movementTitle")),
    message ? h("p", { class: "error", role: "alert" }, message) : null,
    h("div", { class: "tabs", role: "group" }, tab("paid_in"), tab("paid_out"), tab("drop")),
    h(
      "form",
      {
        class: "stack",
        onsubmit: (event: Event) => {
          event.preventDefault();
          const cents = parseEuros(amount.value);
          if (cents === null || cents <= 0) {
            amount.setCustomValidity(t("amountBad"));
            amount.reportValidity();
            return;
          }
          void till.recordMovement(kind, cents, reason.value.trim());
        },
      },
      field(t("movementAmount"), amount),
      field(t("movementReason"), reason),
      h("button", { type: "submit", class: "primary big", id: "movement-confirm" }, t("confirm")),
      h("button", { type: "button", class: "quiet", onclick: () => till.go({ name: "sell" }) }, `${t("back")} (Esc)`),
    ),
  );
}

function mailForm(till: Till, sale: Finished, booked: boolean): HTMLElement {
  // The server renders and sends the receipt: a sale it has not booked yet cannot be mailed.
  if (!booked) return h("p", { class: "muted small", id: "mail-later" }, t("mailLater"));
  const email = h("input", { id: "receipt-email", name: "receipt-email", type: "email", autocomplete: "off", inputmode: "email", maxlength: 254 });
  return h(
    "form",
    {
      class: "stack mail",
      onsubmit: (event: Event) => {
        event.preventDefault();
        void till.sendReceipt(sale, email.value.trim());
      },
    },
    field(t("mailAddress"), email),
    h("button", { type: "submit", id: "send-receipt" }, t("mailSend")),
    sale.mail ? h("p", { class: sale.mail.bad ? "error" : "notice", role: "status", id: sale.mail.bad ? "mail-refused" : "mail-sent" }, sale.mail.text) : null,
  );
}

function reportScreen(till: Till, kind: "x" | "z", report?: XReport | ZReport, message?: string): HTMLElement {
  const rows: Child[] = [];
  if (report) {
    const add = (label: string, value: string, id: string) => rows.push(h("dt", {}, label), h("dd", { id }, value));
    add(t("session"), report.sessionId, "report-session");
    add(t("salesCount"), String(report.salesCount), "report-count");
    add(t("totalSales"), money(report.totalCents), "report-total");
    add(t("openingFloat").replace(" (€)", ""), money(report.openingFloatCents), "report-float");
    add(t("expectedCash"), money(report.expectedCashCents), "report-expected");
    for (const tender of report.tenders) {
      const line = tender as { method: string; appliedCents: number; countedCents?: number | null; differenceCents?: number | null };
      const name = methodName(line.method);
      rows.push(h("dt", {}, `${t("tenders")} · ${name}`), h("dd", { "data-method": line.method }, money(line.appliedCents)));
      if (typeof line.countedCents === "number") add(t("countedCash"), money(line.countedCents), `counted-${line.method}`);
      if (typeof line.differenceCents === "number") add(t("difference"), money(line.differenceCents), `difference-${line.method}`);
    }
    // Money moved in and out of the drawer outside sales, as the server counted it.
    const moved = report.movements;
    if (moved !== undefined) {
      rows.push(h("dt", {}, t("movement_paid_in")), h("dd", { id: "report-paid-in", "data-cents": moved.paidInCents }, money(moved.paidInCents)));
      rows.push(h("dt", {}, t("movement_paid_out")), h("dd", { id: "report-paid-out", "data-cents": moved.paidOutCents }, money(moved.paidOutCents)));
      rows.push(h("dt", {}, t("movement_drop")), h("dd", { id: "report-drop", "data-cents": moved.dropCents }, money(moved.dropCents)));
    }
    // Cards as the server's ledger has them: what sales captured, and what is still to give back.
    const cards = report.cardPayments ?? [];
    if (cards.length > 0) {
      const captured = cards.reduce((sum, line) => sum + line.capturedCents, 0);
      rows.push(h("dt", {}, t("cardCaptured")), h("dd", { id: "report-card-captured", "data-cents": captured }, money(captured)));
      const orphans = cards.reduce((sum, line) => sum + line.orphanCount, 0);
      if (orphans > 0) add(t("cardOrphans"), String(orphans), "report-card-orphans");
    }
    for (const share of report.vat) {
      const v = share as { vatRate: number | string; vatCents?: number };
      if (typeof v.vatCents === "number") rows.push(h("dt", {}, `${t("vat")} ${v.vatRate} %`), h("dd", {}, money(v.vatCents)));
    }
    if (report.lateSales) add(t("lateSales"), `${report.lateSales.salesCount} · ${money(report.lateSales.totalCents)}`, "report-late");
  }
  return h(
    "main",
    { class: "narrow report" },
    h("h1", { id: `${kind}-report` }, kind === "x" ? t("xReport") : t("zReport")),
    message ? h("p", { class: "error" }, message) : null,
    report ? h("dl", { class: "figures" }, ...rows) : message ? null : h("p", {}, "…"),
    h("button", { type: "button", id: "print-report", onclick: () => printScreen() }, t("print")),
    kind === "x"
      ? h("button", { type: "button", class: "primary big", "data-focus": true, onclick: () => till.go({ name: "sell" }) }, `${t("back")} (Esc)`)
      : h("button", { type: "button", class: "primary big", id: "new-session", "data-focus": true, onclick: () => till.go({ name: "sign-in" }) }, t("signOut")),
  );
}

function closeScreen(till: Till, message?: string): HTMLElement {
  const counted = h("input", { id: "counted", name: "counted", inputmode: "decimal", autocomplete: "off", required: true, "data-focus": true });
  return h(
    "main",
    { class: "narrow" },
    h("h1", {}, t("closeTitle")),
    message ? h("p", { class: "error", role: "alert" }, message) : null,
    till.waiting > 0 ? h("p", { class: "notice" }, `${till.waiting} ${t("waiting")}`) : null,
    h(
      "form",
      {
        class: "stack",
        onsubmit: (event: Event) => {
          event.preventDefault();
          const cents = parseEuros(counted.value);
          if (cents === null) {
            counted.setCustomValidity(t("error"));
            counted.reportValidity();
            return;
          }
          void till.closeTill(cents);
        },
      },
      field(t("counted"), counted),
      h("button", { type: "submit", class: "danger big", id: "close-confirm" }, t("closeConfirm")),
      h("button", { type: "button", class: "quiet", onclick: () => till.go({ name: "sell" }) }, `${t("back")} (Esc)`),
    ),
  );
}

function setAsidePanel(till: Till): HTMLElement {
  return h(
    "section",
    { class: "panel", id: "set-aside-panel", role: "dialog", "aria-modal": "true" },
    h("h2", {}, t("setAsideTitle")),
    h("p", {}, t("setAsideHelp")),
    h(
      "ul",
      { class: "set-aside" },
      ...till.setAside.map((entry) =>
        h(
          "li",
          {},
          h("strong", {}, `${entry.answer.status} ${entry.answer.code}`),
          h("p", {}, entry.answer.envelope?.error.message ?? entry.answer.body.slice(0, 300)),
          h("p", { class: "muted small" }, `${entry.kind} ${entry.id} · ${dateTime(entry.queuedAt)}`),
          h(
            "div",
            { class: "row" },
            h("button", { type: "button", onclick: () => void till.outbox?.retrySetAside(entry.seq).then(() => till.refreshQueue()).then(() => till.render()) }, t("retry")),
            h("button", { type: "button", class: "danger", onclick: () => void till.outbox?.dismiss(entry.seq).then(() => till.refreshQueue()).then(() => till.render()) }, t("dismiss")),
          ),
        ),
      ),
    ),
    h("button", { type: "button", class: "primary", onclick: () => { till.showSetAside = false; till.render(); } }, `${t("back")} (Esc)`),
  );
}

// --- Helpers ---------------------------------------------------------------------------------------

function provisionalSlip(sale: Finished, pairing: Pairing | null, session: SessionKept | null): string {
  const width = 42;
  const pad = (left: string, right: string) => left.slice(0, width - right.length - 1).padEnd(width - right.length) + right;
  const euros = (cents: number) => (cents / 100).toFixed(2);
  const lines = [
    pairing ? `${pairing.storeId} · ${pairing.registerId}` : "",
    session ? session.cashierSubject : "",
    sale.number,
    dateTime(sale.issuedAt),
    "-".repeat(width),
    ...sale.quote.lines.map((l) => pad(`${l.quantity} x ${euros(l.unitPrice)}`, euros(l.netCents))),
    "-".repeat(width),
    pad(t("total"), euros(sale.quote.totals.total)),
    ...sale.tenders.map((tender) => pad(methodName(tender.method), euros(tender.presented))),
    pad(t("change"), euros(changeDue(sale.tenders))),
    "",
    t("provisional"),
  ];
  return lines.join("\n");
}

/** Prints the screen as it is (a report), rather than the receipt area. */
function printScreen(): void {
  document.body.classList.add("print-report");
  window.print();
  document.body.classList.remove("print-report");
}

function fold(text: string): string {
  return text.normalize("NFD").replace(/[\u0300-\u036f]/g, "").toLowerCase();
}

function describe(error: unknown): string {
  if (error instanceof TillError) return error.envelope?.error.message ?? error.message;
  if (error instanceof TillUnreachable) return t("unreachable");
  return error instanceof Error ? error.message : String(error);
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
