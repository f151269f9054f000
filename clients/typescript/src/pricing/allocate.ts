// Splitting an amount over lines (`pricing::allocate`): a ticket reduction over the lines it
// reduces, a bundle's saving over the units of its set.

import { MAX_SAFE, sum } from "./money.js";

/**
 * Splits `amount` over `weights` in proportion by the largest-remainder method: the shares sum
 * to `amount` exactly and none exceeds its weight. Equal remainders go in `tieOrder` (indexes of
 * `weights`, first served first). `amount` must not exceed the sum of the weights, all of which
 * are non-negative.
 */
export function allocate(amount: number, weights: readonly number[], tieOrder: readonly number[]): number[] {
  const total = sum(weights);
  if (total === 0 || amount === 0) {
    return weights.map(() => 0);
  }
  const shares: number[] = [];
  const remainders: { remainder: number; index: number }[] = [];
  weights.forEach((weight, index) => {
    const { quotient, remainder } = divide(amount, weight, total);
    shares.push(quotient);
    remainders.push({ remainder, index });
  });
  let left = amount - shares.reduce((a, b) => a + b, 0);
  // Largest remainder first; equal remainders in tie order.
  const rank = new Map(tieOrder.map((index, position) => [index, position]));
  remainders.sort((a, b) => b.remainder - a.remainder || (rank.get(a.index) ?? 0) - (rank.get(b.index) ?? 0));
  for (const { remainder, index } of remainders) {
    if (left === 0) {
      break;
    }
    if (remainder > 0) {
      shares[index] = (shares[index] ?? 0) + 1;
      left -= 1;
    }
  }
  return shares;
}

/**
 * `amount × weight` divided by `total`, truncated, with its remainder. The product may pass
 * 2^53 (Rust computes it in i128); quotient and remainder never do (share ≤ weight, remainder
 * < total).
 */
function divide(amount: number, weight: number, total: number): { quotient: number; remainder: number } {
  const product = amount * weight;
  if (product <= MAX_SAFE) {
    const remainder = product % total;
    return { quotient: (product - remainder) / total, remainder };
  }
  const exact = BigInt(amount) * BigInt(weight);
  const big = BigInt(total);
  return { quotient: Number(exact / big), remainder: Number(exact % big) };
}
