// Money as integer cents, as till-core's `money.rs` has it: every amount within
// ±MAX_SAFE_INTEGER, every operation checked, percentages rounded half away from zero.
//
// A JavaScript number holds every integer of that range exactly. Where an intermediate result
// may leave it (a product of an amount and a rate, which Rust computes in i128), the exact value
// is computed with bigint instead.

/** 2^53 - 1: the largest amount the server accepts or answers. */
export const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/** An amount left the representable range: the server answers the sale with a 422. */
export class Overflow extends Error {
  constructor() {
    super("an amount exceeds the largest representable value");
    this.name = "Overflow";
  }
}

/** Checks that `value` is an integer amount within ±MAX_SAFE. */
export function cents(value: number): number {
  if (!Number.isInteger(value) || Math.abs(value) > MAX_SAFE) {
    throw new Overflow();
  }
  return value;
}

// A float result rounds monotonically: an exact result past MAX_SAFE can never round back
// into the range, so checking the rounded result is checking the exact one.

export function add(a: number, b: number): number {
  return cents(a + b);
}

export function sub(a: number, b: number): number {
  return cents(a - b);
}

/** `amount × factor`, checked (`Cents::checked_mul`); `factor` may be a bigint count of units. */
export function mul(amount: number, factor: number | bigint): number {
  if (typeof factor === "number") {
    const product = amount * factor;
    if (Math.abs(product) <= MAX_SAFE) {
      return product;
    }
    throw new Overflow();
  }
  return fromBig(BigInt(amount) * factor);
}

/** Sums amounts, checked at every step as `checked_sum` does. */
export function sum(amounts: Iterable<number>): number {
  let total = 0;
  for (const amount of amounts) {
    total = add(total, amount);
  }
  return total;
}

/** A bigint back to an amount, if it is one. */
export function fromBig(value: bigint): number {
  if (value > BigInt(MAX_SAFE) || value < -BigInt(MAX_SAFE)) {
    throw new Overflow();
  }
  return Number(value);
}

/** `rate` basis points of `amount`, rounded half away from zero (`Cents::percent`). */
export function percent(amount: number, bps: number): number {
  return mulDivRoundHalfAway(amount, bps, 10_000);
}

/**
 * `a × b / denominator` rounded half away from zero (`div_round_half_away` of an i128
 * product). The denominator is positive; the result must be an amount.
 */
export function mulDivRoundHalfAway(a: number, b: number, denominator: number): number {
  const product = a * b;
  if (Math.abs(product) <= MAX_SAFE) {
    // Exact in floats: `%` of integers is exact, and so is dividing out a remainder.
    const remainder = product % denominator;
    const quotient = (product - remainder) / denominator;
    return Math.abs(remainder) * 2 >= denominator ? quotient + Math.sign(product) : quotient;
  }
  return fromBig(divRoundHalfAway(BigInt(a) * BigInt(b), BigInt(denominator)));
}

/** Integer division rounding half away from zero; `denominator` > 0. */
export function divRoundHalfAway(numerator: bigint, denominator: bigint): bigint {
  const quotient = numerator / denominator; // truncates toward zero, as Rust's `/`
  const remainder = numerator % denominator; // takes the numerator's sign, as Rust's `%`
  const magnitude = remainder < 0n ? -remainder : remainder;
  if (magnitude * 2n >= denominator) {
    return quotient + (numerator < 0n ? -1n : 1n);
  }
  return quotient;
}

/** An amount as `Cents`'s Display writes it in messages: `-12.05`. */
export function display(amount: number): string {
  const sign = amount < 0 ? "-" : "";
  const abs = Math.abs(amount);
  const hundredths = abs % 100;
  const units = (abs - hundredths) / 100;
  return `${sign}${units}.${hundredths.toString().padStart(2, "0")}`;
}
