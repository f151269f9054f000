// Ringing a sale: the scan field and its results, the cart, the totals as the Pricer has them,
// and the customer attached to the sale (the panel and the search).

import type { Till } from "../app.js";
import type { PriceQuote } from "../../../typescript/src/pricing/index.js";
import type { CustomerView } from "../customer.js";
import type { CartLine } from "../sale.js";
import { h } from "../dom.js";
import { currentLang, dateTime, money, t } from "../i18n.js";
import { field } from "./common.js";
import { discountText } from "./discount.js";

/**
 * The sale screen, kept between draws: a scan changes the cart's rows in place (a new row, or a
 * quantity and amounts) and redraws the totals beside them, so the time to show a scanned line
 * does not grow with the lines above it, and the scan field keeps the focus it has.
 */
export class SellView {
  readonly element: HTMLElement;
  /** The language it was drawn in: another one draws it anew. */
  readonly lang = currentLang();
  private readonly scan: HTMLInputElement;
  private readonly left: HTMLElement;
  private aside: HTMLElement;
  private notice: HTMLElement | null = null;
  private noticeShown: Till["notice"] | undefined = undefined;
  private results: HTMLElement | null = null;
  private resultsShown: Till["results"] | undefined = undefined;
  private cart: HTMLElement;
  private readonly rows = new Map<CartLine, CartRow>();

  constructor(till: Till) {
    this.scan = scanField(till);
    this.left = h("section", { class: "left" }, h("div", { class: "scan" }, this.scan));
    this.cart = h("p", { class: "empty" });
    this.left.append(this.cart);
    this.aside = h("aside", { class: "right" });
    this.element = h("main", { class: "sell" }, this.left, this.aside);
    this.update(till);
  }

  /** Brings the screen to the till's state, touching only what changed on the left. */
  update(till: Till): void {
    if (till.notice !== this.noticeShown) {
      this.noticeShown = till.notice;
      const next = till.notice ? h("p", { class: till.notice.bad ? "error" : "notice", role: "status" }, till.notice.text) : null;
      this.notice = swap(this.left, this.scan.parentElement, this.notice, next);
    }
    if (till.results !== this.resultsShown) {
      this.resultsShown = till.results;
      this.results = swap(this.left, this.notice ?? this.scan.parentElement, this.results, resultList(till));
    }
    this.updateCart(till);
    const aside = asidePanel(till);
    this.aside.replaceWith(aside);
    this.aside = aside;
  }

  /** Whether the cashier is typing in the screen's scan field. */
  hasFocus(): boolean {
    return document.activeElement === this.scan;
  }

  focus(): void {
    this.scan.focus();
  }

  private updateCart(till: Till): void {
    if (till.cart.length === 0) {
      this.rows.clear();
      const empty = h("p", { class: "empty" }, till.articles.length === 0 ? t("snapshotMissing") : t("emptyCart"));
      this.cart.replaceWith(empty);
      this.cart = empty;
      return;
    }
    let body = this.cart.querySelector("tbody");
    if (body === null) {
      body = h("tbody");
      const table = h(
        "table",
        { class: "cart", id: "cart" },
        h("thead", {}, h("tr", {}, h("th", {}, t("article")), h("th", {}, t("qty")), h("th", { class: "amount" }, t("amount")), h("th", {}, ""))),
        body,
      );
      this.cart.replaceWith(table);
      this.cart = table;
    }
    const quote = till.priced?.ok ? till.priced.quote : null;
    const quoted = new Map(quote?.lines.map((q) => [q.id, q]) ?? []);
    const kept = new Set(till.cart);
    for (const [line, row] of this.rows) {
      if (!kept.has(line)) {
        row.tr.remove();
        this.rows.delete(line);
      }
    }
    let at: Element | null = body.firstElementChild;
    for (const line of till.cart) {
      let row = this.rows.get(line);
      if (row === undefined) {
        row = cartRow(till, line);
        this.rows.set(line, row);
      }
      row.show(line, quoted.get(line.id));
      if (row.tr !== at) body.insertBefore(row.tr, at);
      at = row.tr.nextElementSibling;
    }
  }
}

function scanField(till: Till): HTMLInputElement {
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
  return scan;
}

/** Puts `next` where `old` was (or after `after` when there was none); answers what is shown. */
function swap(parent: HTMLElement, after: Element | null, old: HTMLElement | null, next: HTMLElement | null): HTMLElement | null {
  if (old !== null && next !== null) old.replaceWith(next);
  else if (old !== null) old.remove();
  else if (next !== null) parent.insertBefore(next, after?.nextSibling ?? null);
  return next;
}

function resultList(till: Till): HTMLElement | null {
  if (till.results.length === 0) return null;
  return h(
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
  );
}

/** A line's row, and the parts of it a new quantity or a new price changes. */
interface CartRow {
  tr: HTMLTableRowElement;
  show(line: CartLine, quoted: PricedQuoteLine | undefined): void;
}

type PricedQuoteLine = PriceQuote["lines"][number];

function cartRow(till: Till, line: CartLine): CartRow {
  const qty = h("input", {
    class: "qty",
    inputmode: "numeric",
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
  const note = h("small");
  const name = h("td", { class: "name" }, line.name);
  const amount = h("td", { class: "amount" });
  const tr = h(
    "tr",
    { "data-sku": line.skuId },
    name,
    h(
      "td",
      { class: "qty-cell" },
      h("button", { type: "button", class: "step", "aria-label": "-1", onclick: () => till.setQuantity(line.id, line.quantity - 1) }, "−"),
      qty,
      h("button", { type: "button", class: "step", "aria-label": "+1", onclick: () => till.setQuantity(line.id, line.quantity + 1) }, "+"),
    ),
    amount,
    h("td", {}, h("button", { type: "button", class: "remove", "aria-label": `${t("remove")} ${line.name}`, onclick: () => till.removeLine(line.id) }, "✕")),
  );
  let shown = { quantity: "", note: "", amount: "" };
  return {
    tr,
    show(current, quoted) {
      const next = {
        quantity: String(current.quantity),
        note: quoted ? `${money(quoted.unitPrice)} · ${t("vatRate")} ${quoted.vatRate} %` : "",
        amount: quoted ? money(quoted.netCents) : "…",
      };
      if (next.quantity !== shown.quantity) {
        // The attribute too: it is what the page says the quantity is.
        qty.setAttribute("value", next.quantity);
        if (document.activeElement !== qty) qty.value = next.quantity;
      }
      if (next.note !== shown.note) {
        note.textContent = next.note;
        if (next.note === "") note.remove();
        else if (note.parentElement === null) name.append(note);
      }
      if (next.amount !== shown.amount) amount.textContent = next.amount;
      shown = next;
    },
  };
}

function asidePanel(till: Till): HTMLElement {
  return h(
    "aside",
    { class: "right" },
    till.leftOpen.length > 0 && till.cart.length === 0
      ? h("button", { type: "button", class: "danger wide", id: "left-open", "data-count": till.leftOpen.length, onclick: () => till.go({ name: "left-open" }) }, `${t("leftOpenButton")} (${till.leftOpen.length})`)
      : null,
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
      till.lastSale !== null
        ? h(
            "button",
            {
              type: "button",
              id: "reprint-last",
              class: "wide",
              "data-transaction": till.lastSale.transactionId,
              disabled: till.cart.length > 0,
              onclick: () => {
                const sale = till.lastSale;
                if (sale !== null) till.askReprint(sale, null);
              },
            },
            t("reprintLast"),
            h("small", {}, till.lastSale.number),
          )
        : null,
    ),
    till.snapshotAt ? h("p", { class: "muted small" }, `${t("catalogAt")} ${dateTime(till.snapshotAt)}`) : null,
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

export function customerScreen(till: Till, results?: CustomerView[], message?: string): HTMLElement {
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
