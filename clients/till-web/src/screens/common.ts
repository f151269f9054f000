// What every screen shares: the header with the status bar (and the list of what the server set
// aside, which its badge opens), labelled fields, a sale's tenders and the words for a method
// and an error.

import { TillError, TillUnreachable } from "../../../typescript/src/client.js";
import type { Till } from "../app.js";
import { h } from "../dom.js";
import { currentLang, dateTime, money, setLang, t } from "../i18n.js";
import type { Lang } from "../i18n.js";
import type { Tender } from "../sale.js";

export function header(till: Till): HTMLElement {
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

export function statusBar(till: Till): HTMLElement {
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

export function setAsidePanel(till: Till): HTMLElement {
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

/** Marks a field refused with the reason shown, until the cashier next types in it: a reason
 * left set would block every later submit of its form. */
export function refuse(input: HTMLInputElement, reason: string): void {
  input.setCustomValidity(reason);
  input.reportValidity();
  input.addEventListener("input", () => input.setCustomValidity(""), { once: true });
}

export function field(label: string, input: HTMLInputElement): HTMLElement {
  return h("label", { class: "field" }, h("span", {}, label), input);
}

export function selectField(label: string, select: HTMLSelectElement): HTMLElement {
  return h("label", { class: "field" }, h("span", {}, label), select);
}

/** The tenders of a sale, one line each: what the screens and the done screen show. */
export function tendersList(tenders: readonly Tender[], id: string): HTMLElement {
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

export function methodName(method: string): string {
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

export function describe(error: unknown): string {
  if (error instanceof TillError) return error.envelope?.error.message ?? error.message;
  if (error instanceof TillUnreachable) return t("unreachable");
  return error instanceof Error ? error.message : String(error);
}
