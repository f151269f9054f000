// The till's session from end to end: pairing the device, the cashier's sign-in with the opening
// float, and closing the till with the cash counted.

import type { Till } from "../app.js";
import { h } from "../dom.js";
import { parseEuros, t } from "../i18n.js";
import { field, refuse } from "./common.js";

export function pairScreen(till: Till, message?: string): HTMLElement {
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

export function signInScreen(till: Till, message?: string, otherSession?: string): HTMLElement {
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
            refuse(float, t("amountFormat"));
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

export function closeScreen(till: Till, message?: string): HTMLElement {
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
            refuse(counted, t("amountFormat"));
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
