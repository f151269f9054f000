// Paying a sale, tender by tender: cash, a card through its attempt (the amount asked, then the
// terminal's answer keyed), points, a gift card or a credit note; then the finished sale, its
// receipt by e-mail and the provisional slip printed before the server has booked it.

import type { Till } from "../app.js";
import type { LastSale, Pairing, SessionKept } from "../device.js";
import { type Child, h } from "../dom.js";
import { amountText, dateTime, money, parseEuros, t } from "../i18n.js";
import { changeDue, remaining } from "../payment.js";
import type { Finished, PayMode } from "../screen.js";
import { field, methodName, refuse, tendersList } from "./common.js";

export function payScreen(till: Till, mode: PayMode, message?: string): HTMLElement {
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
  // What is to pay and what was taken, above whichever form the screen shows.
  const summary: Child[] = [
    h("p", { class: "grand" }, h("span", {}, t("total")), h("strong", { id: "sale-total", "data-cents": payment.quote.totals.total }, money(payment.quote.totals.total))),
    taken ? tendersList(payment.tenders, "tenders-taken") : null,
    h("p", { class: "grand" }, h("span", {}, t("due")), h("strong", { id: "due", "data-cents": due }, money(due))),
    message ? h("p", { class: "error", role: "alert", id: "pay-message" }, message) : null,
  ];
  const points = till.customer !== null && till.customer.loyaltyPoints > 0;
  const open = payment.openCard ?? null;
  if (open) {
    // A card answer lost: nothing else is taken until the cashier keys what the terminal said.
    return h(
      "main",
      { class: "narrow" },
      h("h1", {}, t("payTitle")),
      ...summary,
      h(
        "section",
        { class: "stack", id: "card-open", "data-payment": open.paymentId, "data-cents": open.amountCents, role: "status" },
        h("p", { class: "grand" }, h("span", {}, t("cardOpen")), h("strong", {}, money(open.amountCents))),
        h("p", {}, t("cardOpenHelp")),
        h(
          "button",
          { type: "button", class: "primary huge", id: "card-settle", "data-focus": true, onclick: () => till.go({ name: "card", paymentId: open.paymentId, amountCents: open.amountCents }) },
          t("cardSettle"),
        ),
      ),
    );
  }
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
    ...summary,
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
  // Enter on what is no amount (the button waits, so the form would not go): say so on the field.
  given.addEventListener("keydown", (event) => {
    const cents = typed();
    if (event.key === "Enter" && (cents === null || cents <= 0)) {
      event.preventDefault();
      refuse(given, t("amountBad"));
    }
  });
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
        h("button", { type: "button", onclick: () => { given.value = amountText(cents); update(); given.focus(); } }, money(cents)),
      ),
    ),
    h("p", { class: "grand" }, h("span", {}, t("change")), change),
    confirm,
  );
}

/** The amount typed, in cents, when it is more than nothing and at most `most`; else the field
 * says what it takes and the answer is null. */
function amountUpTo(input: HTMLInputElement, most: number): number | null {
  const cents = parseEuros(input.value);
  if (cents === null || cents <= 0 || cents > most) {
    refuse(input, t("cardAmountBad"));
    return null;
  }
  return cents;
}

function cardForm(till: Till, due: number): HTMLElement {
  // A card is charged only once the server holds its attempt: none offline, cash stays.
  if (!till.online) return h("p", { class: "notice", id: "card-offline", role: "status" }, t("cardOffline"));
  const amount = h("input", { id: "card-amount", name: "card-amount", inputmode: "decimal", autocomplete: "off", value: amountText(due), "data-focus": true });
  const send = h("button", { type: "submit", class: "primary huge", id: "card-send", disabled: till.cardBusy }, t("cardSend"));
  return h(
    "form",
    {
      class: "stack",
      id: "card-form",
      onsubmit: (event: Event) => {
        event.preventDefault();
        const cents = amountUpTo(amount, due);
        if (cents === null) return;
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
  const amount = h("input", { id: "instrument-amount", name: "instrument-amount", inputmode: "decimal", autocomplete: "off", value: amountText(most), "data-focus": kind === "loyalty" });
  return h(
    "form",
    {
      class: "stack",
      id: "stored-value-form",
      onsubmit: (event: Event) => {
        event.preventDefault();
        const cents = amountUpTo(amount, due);
        if (cents === null) return;
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

export function cardScreen(till: Till, paymentId: string, amountCents: number, message?: string): HTMLElement {
  const wasLost = till.payment?.openCard?.paymentId === paymentId;
  const approved = h("input", { id: "card-authorized", name: "card-authorized", inputmode: "decimal", autocomplete: "off", value: amountText(amountCents) });
  const code = h("input", { id: "card-code", name: "card-code", autocomplete: "off", required: true, maxlength: 32, "data-focus": true });
  const last4 = h("input", { id: "card-last4", name: "card-last4", inputmode: "numeric", autocomplete: "off", maxlength: 4, pattern: "[0-9]{4}" });
  const busy = till.cardBusy;
  return h(
    "main",
    { class: "narrow" },
    h("h1", {}, t("cardTitle")),
    h("p", { class: "grand" }, h("span", {}, t("cardAsk")), h("strong", { id: "card-asked", "data-cents": amountCents, "data-payment": paymentId }, money(amountCents))),
    h("p", {}, t("cardKeyHelp")),
    wasLost ? h("p", { class: "notice", role: "status", id: "card-was-unknown" }, t("cardWasUnknown")) : null,
    message ? h("p", { class: "error", role: "alert", id: "card-message" }, message) : null,
    h(
      "form",
      {
        class: "stack",
        onsubmit: (event: Event) => {
          event.preventDefault();
          const cents = amountUpTo(approved, amountCents);
          if (cents === null) return;
          void till.cardOutcome(paymentId, amountCents, { status: "approved", authorizedCents: cents, code: code.value.trim(), last4: last4.value.trim() });
        },
      },
      field(t("cardCode"), code),
      field(t("cardAuthorized"), approved),
      field(t("cardLast4"), last4),
      h("button", { type: "submit", class: "primary huge", id: "card-approved", disabled: busy }, t("cardApproved")),
      h("button", { type: "button", class: "danger big", id: "card-declined", disabled: busy, onclick: () => void till.cardOutcome(paymentId, amountCents, { status: "declined" }) }, t("cardDeclinedButton")),
      h(
        "div",
        { class: "tools" },
        h("button", { type: "button", class: "big", id: "card-cancelled", disabled: busy, onclick: () => void till.cardOutcome(paymentId, amountCents, { status: "cancelled" }) }, t("cardCancelledButton")),
        h("button", { type: "button", class: "big", id: "card-unknown", disabled: busy, onclick: () => void till.cardOutcome(paymentId, amountCents, { status: "unknown" }) }, t("cardUnknownButton")),
      ),
      wasLost ? h("button", { type: "button", class: "quiet", onclick: () => till.go({ name: "pay", mode: "card" }) }, `${t("cardLater")} (Esc)`) : null,
    ),
  );
}

/**
 * The card attempts no payment here holds any more, each to settle from the terminal's journal:
 * an answer lost is recorded as not charged, or as charged and given back; an approval no sale
 * took, as given back.
 */
export function leftOpenScreen(till: Till, message?: string): HTMLElement {
  const busy = till.cardBusy;
  return h(
    "main",
    { class: "narrow" },
    h("h1", {}, t("leftOpenTitle")),
    h("p", {}, t("leftOpenHelp")),
    message ? h("p", { class: "notice", role: "status", id: "left-open-message" }, message) : null,
    h(
      "ul",
      { class: "set-aside", id: "left-open-list" },
      ...till.leftOpen.map((card) =>
        h(
          "li",
          { "data-payment": card.paymentId, "data-cents": card.approvedCents ?? card.amountCents },
          h(
            "p",
            { class: "grand" },
            h("span", {}, card.approvedCents === null ? t("leftOpenUnknown") : t("leftOpenApproved")),
            h("strong", {}, money(card.approvedCents ?? card.amountCents)),
          ),
          h(
            "div",
            { class: "tools" },
            card.approvedCents === null
              ? h("button", { type: "button", class: "big not-charged", disabled: busy, onclick: () => void till.settleLeftOpen(card, "not_charged") }, t("leftOpenNotCharged"))
              : null,
            h(
              "button",
              { type: "button", class: card.approvedCents === null ? "danger big given-back" : "danger big wide given-back", disabled: busy, onclick: () => void till.settleLeftOpen(card, "given_back") },
              t("leftOpenGiveBack"),
            ),
          ),
        ),
      ),
    ),
    h("button", { type: "button", class: "quiet", id: "left-open-later", disabled: busy, onclick: () => till.go({ name: "sell" }) }, `${t("cardLater")} (Esc)`),
  );
}

export function doneScreen(till: Till, sale: Finished): HTMLElement {
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
    // The original prints once; after it, a reprint is confirmed and comes out as a DUPLICATA.
    sale.printed
      ? h("button", { type: "button", id: "reprint", onclick: () => till.askReprint(lastSaleOf(sale), sale) }, t("reprintDone"))
      : h("button", { type: "button", id: "print", onclick: () => void till.printReceipt(sale) }, t("printReceipt")),
    sale.reprinted ? h("p", { class: "notice", role: "status", id: "reprinted" }, sale.reprinted) : null,
    mailForm(till, sale, booked),
  );
}

function lastSaleOf(sale: Finished): LastSale {
  return { transactionId: sale.transactionId, number: sale.number, totalCents: sale.quote.totals.total };
}

/** A reprint to confirm: the server seals each one in the register's duplicate chain. */
export function reprintScreen(till: Till, sale: LastSale, from: Finished | null, printId: string, message?: string): HTMLElement {
  const back = () => till.go(from === null ? { name: "sell" } : { name: "done", sale: from });
  const confirm = h("button", { type: "button", class: "primary huge", id: "reprint-confirm", "data-focus": true, disabled: till.reprinting }, t("reprintConfirm"));
  confirm.addEventListener("click", () => {
    confirm.disabled = true;
    void till.reprint(sale, from, printId);
  });
  return h(
    "main",
    { class: "narrow" },
    h("h1", { id: "reprint-title", "data-transaction": sale.transactionId }, t("reprintTitle")),
    h("p", { class: "grand" }, h("span", {}, sale.number), h("strong", { id: "reprint-total", "data-cents": sale.totalCents }, money(sale.totalCents))),
    h("p", {}, t("reprintHelp")),
    message
      ? h("p", { class: "error", role: "alert", id: "reprint-message" }, message)
      : till.online
        ? null
        : h("p", { class: "notice", role: "status", id: "reprint-offline" }, t("reprintOffline")),
    confirm,
    h("button", { type: "button", class: "quiet", onclick: back }, `${t("back")} (Esc)`),
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

export function provisionalSlip(sale: Finished, pairing: Pairing | null, session: SessionKept | null): string {
  const width = 42;
  const pad = (left: string, right: string) => left.slice(0, width - right.length - 1).padEnd(width - right.length) + right;
  const euros = amountText;
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
