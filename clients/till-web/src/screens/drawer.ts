// The drawer outside sales: cash paid in, paid out or dropped, and the shift's X and Z reports
// (printed as shown).

import type { Till } from "../app.js";
import { h } from "../dom.js";
import type { Child } from "../dom.js";
import { money, parseEuros, t } from "../i18n.js";
import type { MovementKind, XReport, ZReport } from "../screen.js";
import { field, methodName, refuse } from "./common.js";

export function movementScreen(till: Till, kind: MovementKind, message?: string): HTMLElement {
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
            refuse(amount, t("amountBad"));
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

export function reportScreen(till: Till, kind: "x" | "z", report?: XReport | ZReport, message?: string): HTMLElement {
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

/** Prints the screen as it is (a report), rather than the receipt area. */
function printScreen(): void {
  document.body.classList.add("print-report");
  window.print();
  document.body.classList.remove("print-report");
}
