// A return against a receipt: finding the original sale, choosing what comes back and how it is
// refunded, then the return sent (and its credit note).

import type { Till } from "../app.js";
import { h } from "../dom.js";
import { money, t } from "../i18n.js";
import { refundOf } from "../returns.js";
import type { RefundMethod } from "../returns.js";
import type { ReturnDone } from "../screen.js";
import { field } from "./common.js";

export function returnFindScreen(till: Till, message?: string): HTMLElement {
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

export function returnScreen(till: Till, method: RefundMethod, message?: string): HTMLElement {
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

export function returnDoneScreen(till: Till, done: ReturnDone): HTMLElement {
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
