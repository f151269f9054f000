// The pricing steps (`till_core::pricing::price`), in the server's order, every step in integer
// cents, nothing ever below zero:
//
// 1. gross = unit price × quantity (their sum is the subtotal);
// 2. automatic promotions, reductions of lines found by the promotion engine;
// 3. declared line percents, each on the line's running amount;
// 4. ticket percents (basket promotions, declared, coupon) on the running total, then ticket
//    amounts (declared, coupon) capped at it; each allocated to the lines in proportion to their
//    running amounts (largest remainder, ties by line id), so VAT per rate stays exact;
// 5. total = sum of line nets.

import { allocate } from "./allocate.js";
import { add, mul, percent, sub, sum } from "./money.js";
import type { BasketPercent, LineReduction } from "./promotions.js";
import { compareText } from "./text.js";
import { vatTotals, type VatRate, type VatTotal } from "./vat.js";

/** A line at the price the server stands behind. */
export interface LineToPrice {
  lineId: string;
  unitPrice: number;
  quantity: number;
  vatRate: VatRate;
}

/** A declared discount, as read from the request. */
export type Declared =
  | { id: string; kind: "line_percent"; lineId: string; percentBps: number }
  | { id: string; kind: "ticket_percent"; percentBps: number }
  | { id: string; kind: "ticket_amount"; amountCents: number };

/** A presented coupon, already found usable at the sale's instant. */
export interface CouponToApply {
  code: string;
  reward: { percentBps: number } | { amountCents: number };
  /** The running total must reach this for the coupon to apply. */
  minBasket: number;
}

export interface PricingInput {
  lines: readonly LineToPrice[];
  promotions: readonly LineReduction[];
  basketPromotions: readonly BasketPercent[];
  declared: readonly Declared[];
  coupon: CouponToApply | null;
}

export interface PricedLine {
  gross: number;
  promotion: number;
  declared: number;
  /** This line's share of ticket reductions. */
  ticket: number;
  net: number;
}

export type Source = "promotion" | "declared" | "coupon";

/** One reduction as applied, with what it took off. */
export interface Applied {
  source: Source;
  /** The promotion id, declared discount id or coupon code. */
  id: string;
  amount: number;
}

export interface CouponEffect {
  code: string;
  /** The running total the coupon applied to. */
  basket: number;
  discount: number;
}

export interface Priced {
  lines: PricedLine[];
  subtotal: number;
  total: number;
  applied: Applied[];
  /** By rate, highest first. */
  vat: VatTotal[];
  coupon: CouponEffect | null;
}

/** The coupon's minimum is above the basket it meets. */
export class CouponBelowMinimum extends Error {
  constructor(
    readonly code: string,
    readonly minimum: number,
    readonly basket: number,
  ) {
    super(`coupon ${code} is below its minimum basket`);
    this.name = "CouponBelowMinimum";
  }
}

/** Prices a cart. Pure. Throws Overflow or CouponBelowMinimum. */
export function price(input: PricingInput): Priced {
  // Step 1.
  const priced: PricedLine[] = input.lines.map((line) => {
    const gross = mul(line.unitPrice, line.quantity);
    return { gross, promotion: 0, declared: 0, ticket: 0, net: gross };
  });
  const lineAt = (index: number): PricedLine => priced[index] as PricedLine;
  const subtotal = sum(priced.map((line) => line.gross));
  const applied: Applied[] = [];

  // Step 2: promotions, never below zero.
  for (const reduction of input.promotions) {
    const line = priced[reduction.line];
    if (line === undefined) {
      continue;
    }
    const amount = Math.max(Math.min(reduction.amount, line.net), 0);
    line.promotion = add(line.promotion, amount);
    line.net = sub(line.net, amount);
    applied.push({ source: "promotion", id: reduction.promotionId, amount });
  }

  // Step 3: declared line percents, each on the line's running amount. The request was
  // checked: every discount names a line of the cart.
  const index = new Map(input.lines.map((line, i) => [line.lineId, i]));
  for (const discount of input.declared) {
    if (discount.kind === "line_percent") {
      const line = lineAt(index.get(discount.lineId) ?? -1);
      const amount = percent(line.net, discount.percentBps);
      line.declared = add(line.declared, amount);
      line.net = sub(line.net, amount);
      applied.push({ source: "declared", id: discount.id, amount });
    }
  }

  // Step 4: ticket percents, then ticket amounts, on the running total; each may need the
  // running total to reach a minimum.
  const order = input.lines.map((_, i) => i).sort((a, b) => compareText(lineIdOf(input, a), lineIdOf(input, b)));
  const ticket = ticketReductions(input);
  let coupon: CouponEffect | null = null;
  for (const reduction of ticket) {
    const running = sum(priced.map((line) => line.net));
    if (running < reduction.minimum) {
      if (reduction.source === "coupon") {
        throw new CouponBelowMinimum(reduction.id, reduction.minimum, running);
      }
      // A basket promotion short of its minimum simply does not apply.
      continue;
    }
    const amount =
      "percentBps" in reduction.take ? percent(running, reduction.take.percentBps) : Math.min(reduction.take.amountCents, running);
    const shares = allocate(
      amount,
      priced.map((line) => line.net),
      order,
    );
    priced.forEach((line, i) => {
      const share = shares[i] ?? 0;
      line.ticket = add(line.ticket, share);
      line.net = sub(line.net, share);
    });
    if (reduction.source === "coupon") {
      coupon = { code: reduction.id, basket: running, discount: amount };
    }
    applied.push({ source: reduction.source, id: reduction.id, amount });
  }

  // Step 5.
  const total = sum(priced.map((line) => line.net));
  const vat = vatTotals(input.lines.map((line, i) => ({ rate: line.vatRate, amount: lineAt(i).net })));
  return { lines: priced, subtotal, total, applied, vat, coupon };
}

function lineIdOf(input: PricingInput, index: number): string {
  return input.lines[index]?.lineId ?? "";
}

interface TicketReduction {
  source: Source;
  id: string;
  take: { percentBps: number } | { amountCents: number };
  minimum: number;
}

/** Step 4's reductions in order: every percent (basket promotions, declared, coupon), then every amount. */
function ticketReductions(input: PricingInput): TicketReduction[] {
  const percents: TicketReduction[] = input.basketPromotions.map((p) => ({
    source: "promotion",
    id: p.promotionId,
    take: { percentBps: p.percentBps },
    minimum: p.minSubtotal,
  }));
  const amounts: TicketReduction[] = [];
  for (const discount of input.declared) {
    if (discount.kind === "ticket_percent") {
      percents.push({ source: "declared", id: discount.id, take: { percentBps: discount.percentBps }, minimum: 0 });
    } else if (discount.kind === "ticket_amount") {
      amounts.push({ source: "declared", id: discount.id, take: { amountCents: discount.amountCents }, minimum: 0 });
    }
  }
  if (input.coupon !== null) {
    const { code, reward, minBasket } = input.coupon;
    const reduction: TicketReduction = { source: "coupon", id: code, take: reward, minimum: minBasket };
    ("percentBps" in reward ? percents : amounts).push(reduction);
  }
  return [...percents, ...amounts];
}
