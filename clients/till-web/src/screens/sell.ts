// Ringing a sale: the scan field and its results, the cart, the totals as the Pricer has them,
// and the customer attached to the sale (the panel and the search).

import type { Till } from "../app.js";
import type { CustomerView } from "../customer.js";
import { h } from "../dom.js";
import { dateTime, money, t } from "../i18n.js";
import { field } from "./common.js";
import { discountText } from "./discount.js";

export function sellScreen(till: Till): HTMLElement {
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
