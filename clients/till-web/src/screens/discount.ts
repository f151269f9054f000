// A declared discount: on a line or on the ticket, its reason, and a manager's approval at the
// till when the cashier may not grant it alone.

import type { Till } from "../app.js";
import { mayGrantAlone, parsePercent, REASONS } from "../discount.js";
import type { DiscountKind, DiscountReason, SaleDiscount } from "../discount.js";
import { h } from "../dom.js";
import { money, parseEuros, t } from "../i18n.js";
import { field, refuse, selectField } from "./common.js";

export function discountText(discount: SaleDiscount): string {
  const d = discount.declared;
  return d.basis === "percent" ? `${(d.percentBps ?? 0) / 100} %` : money(d.amountCents ?? 0);
}

export function discountScreen(till: Till, kind: DiscountKind, message?: string): HTMLElement {
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
            refuse(value, t("amountBad"));
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

export function approveScreen(till: Till, pending: SaleDiscount, typed: string, message?: string): HTMLElement {
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
