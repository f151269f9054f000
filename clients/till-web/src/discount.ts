// A discount the cashier declares: a percent off one line, a percent or an amount off the
// ticket, with its reason, as finalize's `declaredDiscounts` takes it. The Pricer prices it as
// the server will; a cashier whose role may not grant it alone asks a manager, whose PIN buys a
// single-use elevation token (`POST /v1/elevation-grants`) sent with the one finalize it approves.

import type { DeclaredDiscount } from "../../typescript/src/pricing/index.js";

export type DiscountReason = "manual_markdown" | "promotional" | "loyalty_reward" | "damaged_goods" | "manager_goodwill";
export const REASONS: readonly DiscountReason[] = ["manual_markdown", "damaged_goods", "manager_goodwill", "promotional", "loyalty_reward"];

export type DiscountKind = "line_percent" | "ticket_percent" | "ticket_amount";

/** The discount of the sale being rung, and the manager's approval when one was needed. */
export interface SaleDiscount {
  declared: DeclaredDiscount;
  /** What it takes off the total, as the Pricer priced it (the size a grant is asked for). */
  reductionCents: number;
  /** The elevation token the manager's PIN bought; null when none was needed. */
  elevationToken: string | null;
  approvedBy: string | null;
}

/** The declared discount's body: `value` is basis points for a percent, cents for an amount. */
export function declaredDiscount(kind: DiscountKind, value: number, reason: DiscountReason, lineId: string | null): DeclaredDiscount {
  switch (kind) {
    case "line_percent":
      return { id: "d1", scope: "line", basis: "percent", lineId: lineId ?? "", percentBps: value, reason };
    case "ticket_percent":
      return { id: "d1", scope: "ticket", basis: "percent", percentBps: value, reason };
    case "ticket_amount":
      return { id: "d1", scope: "ticket", basis: "amount", amountCents: value, reason };
  }
}

/** A percent typed by a person ("10", "12,5") as basis points; null when it is not one. */
export function parsePercent(text: string): number | null {
  const clean = text.trim().replace(",", ".");
  if (!/^\d{1,3}(\.\d{0,2})?$/.test(clean)) return null;
  const [units = "0", fraction = ""] = clean.split(".");
  const bps = Number(units) * 100 + Number((fraction + "00").slice(0, 2));
  return bps >= 1 && bps <= 10000 ? bps : null;
}

/** The roles that may grant a discount alone (they hold `price:override`). */
export function mayGrantAlone(role: string | undefined): boolean {
  return role === "manager" || role === "admin";
}
