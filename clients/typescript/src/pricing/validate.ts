// The checks the server's request parser makes that a typed cart can still fail (`request.rs`,
// `discounts.rs`): each problem with the dot path and the words the server's 400 gives, in the
// order it finds them. Types already rule out the rest (a missing field, a string for a number).

import { InstantError, parseInstant, type Instant } from "./instant.js";
import { MAX_SAFE } from "./money.js";
import type { Declared } from "./price.js";
import { textProblem } from "./text.js";
import type { CartLine, DeclaredDiscount, FieldError, OfflineCart } from "./types.js";
import { vatRateOfPercent } from "./vat.js";

/** Most lines one sale may carry. */
export const MAX_LINES = 1000;

export interface CheckedCart {
  declared: Declared[];
  issuedAt: Instant;
}

/** The cart's declared discounts and instant as read, or every problem found. */
export function checkCart(cart: OfflineCart): CheckedCart | FieldError[] {
  const problems: FieldError[] = [];
  const fail = (field: string, message: string): void => {
    problems.push({ field, message });
  };

  if (cart.lines.length > MAX_LINES) {
    fail("cart.lines", `must hold at most ${MAX_LINES} lines`);
  } else {
    const seen = new Set<string>();
    cart.lines.forEach((line, n) => {
      // A second line with the same id would make line discounts ambiguous.
      if (seen.has(line.id)) {
        fail(`cart.lines.${n}.id`, "is already the id of another line");
      }
      seen.add(line.id);
      checkLine(line, `cart.lines.${n}`, fail);
    });
  }

  const lineIds = new Set(cart.lines.map((line) => line.id));
  const declared: Declared[] = [];
  (cart.declaredDiscounts ?? []).forEach((discount, n) => {
    const read = checkDiscount(discount, `declaredDiscounts.${n}`, lineIds, fail);
    if (read !== null) {
      declared.push(read);
    }
  });

  if (cart.couponCode != null) {
    const problem = textProblem(cart.couponCode);
    if (problem !== null) {
      fail("couponCode", problem);
    }
  }

  let issuedAt: Instant = 0n;
  try {
    issuedAt = parseInstant(cart.issuedAt, true);
  } catch (error) {
    if (!(error instanceof InstantError)) {
      throw error;
    }
    fail("issuedAt", error.problem);
  }
  return problems.length > 0 ? problems : { declared, issuedAt };
}

type Fail = (field: string, message: string) => void;

function integerRange(min: number, max: number): string {
  return `must be an integer from ${min} to ${max}`;
}

function isIntegerIn(value: number, min: number, max: number): boolean {
  return Number.isInteger(value) && value >= min && value <= max;
}

function checkLine(line: CartLine, path: string, fail: Fail): void {
  const idProblem = textProblem(line.id);
  if (idProblem !== null) {
    fail(`${path}.id`, idProblem);
  }
  if (line.skuId !== null && !/^[0-9a-f]{64}$/.test(line.skuId)) {
    fail(`${path}.skuId`, "must be 64 lowercase hexadecimal characters");
  }
  if (!isIntegerIn(line.quantity, 1, MAX_SAFE)) {
    fail(`${path}.quantity`, integerRange(1, MAX_SAFE));
  }
  // A catalog line's price and rate are advisory (a till sends what it shows); a custom
  // line's are its price.
  if (line.custom === true) {
    if (line.unitPrice === undefined) {
      fail(`${path}.unitPrice`, "is required");
    } else if (!isIntegerIn(line.unitPrice, 0, MAX_SAFE)) {
      fail(`${path}.unitPrice`, integerRange(0, MAX_SAFE));
    }
    if (line.vatRate === undefined) {
      fail(`${path}.vatRate`, "is required");
    } else if (!isVatRate(line.vatRate)) {
      fail(`${path}.vatRate`, "must be a percentage from 0 to 100 with at most two decimals");
    }
  }
}

/** A rate the server reads back to the same number (`routes::catalog::vat_rate`). */
function isVatRate(percent: number): boolean {
  const rate = vatRateOfPercent(percent);
  return rate !== null && rate / 100 === percent;
}

function checkDiscount(
  discount: DeclaredDiscount,
  path: string,
  lineIds: ReadonlySet<string>,
  fail: Fail,
): Declared | null {
  const idProblem = textProblem(discount.id);
  if (idProblem !== null) {
    fail(`${path}.id`, idProblem);
  }
  const percentOk = (value: number): boolean => {
    if (isIntegerIn(value, 1, 10_000)) {
      return true;
    }
    fail(`${path}.percentBps`, integerRange(1, 10_000));
    return false;
  };
  let read: Declared | null = null;
  if (discount.scope === "line") {
    let lineOk = true;
    const lineProblem = textProblem(discount.lineId);
    if (lineProblem !== null) {
      fail(`${path}.lineId`, lineProblem);
      lineOk = false;
    } else if (!lineIds.has(discount.lineId)) {
      fail(`${path}.lineId`, "does not match the id of any cart line");
      lineOk = false;
    }
    if (percentOk(discount.percentBps) && lineOk) {
      read = { id: discount.id, kind: "line_percent", lineId: discount.lineId, percentBps: discount.percentBps };
    }
  } else if (discount.basis === "percent") {
    if (percentOk(discount.percentBps)) {
      read = { id: discount.id, kind: "ticket_percent", percentBps: discount.percentBps };
    }
  } else if (isIntegerIn(discount.amountCents, 1, MAX_SAFE)) {
    read = { id: discount.id, kind: "ticket_amount", amountCents: discount.amountCents };
  } else {
    fail(`${path}.amountCents`, integerRange(1, MAX_SAFE));
  }
  // Any problem refuses the whole request, so a discount with a bad id may still be read here.
  return read;
}
