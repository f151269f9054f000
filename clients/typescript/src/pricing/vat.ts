// VAT rates in hundredths of a percent (2000 is 20 %, 550 is 5.5 %), the integer form the server
// computes with; the wire carries them as decimal percentages.

import { add, mulDivRoundHalfAway } from "./money.js";

/** A rate in hundredths of a percent, 0 to 10000. */
export type VatRate = number;

/**
 * The rate a percentage such as 5.5 names (`VatRate::from_percent`), or null when it is out of
 * 0-100 or more precise than a hundredth of a percent.
 */
export function vatRateOfPercent(percent: number): VatRate | null {
  if (!Number.isFinite(percent) || percent < 0 || percent > 100) {
    return null;
  }
  const scaled = percent * 100;
  const hundredths = Math.round(scaled);
  if (Math.abs(scaled - hundredths) > 1e-6) {
    return null;
  }
  return hundredths;
}

/** The percentage as the answers write it: 20, 5.5, 2.1 (`VatRate::as_json_number`). */
export function vatRatePercent(rate: VatRate): number {
  return rate / 100;
}

/** The VAT contained in an amount that includes it: `total × r / (100 % + r)`, half away from zero. */
export function vatIncluded(total: number, rate: VatRate): number {
  return mulDivRoundHalfAway(total, rate, 10_000 + rate);
}

export interface VatTotal {
  rate: VatRate;
  /** Total including VAT of the lines at this rate. */
  total: number;
  /** The VAT it contains. */
  vat: number;
}

/** Amounts summed per rate, highest rate first, each with the VAT it contains (`vat_totals`). */
export function vatTotals(amounts: Iterable<{ rate: VatRate; amount: number }>): VatTotal[] {
  const byRate = new Map<VatRate, number>();
  for (const { rate, amount } of amounts) {
    byRate.set(rate, add(byRate.get(rate) ?? 0, amount));
  }
  return [...byRate]
    .sort(([a], [b]) => b - a)
    .map(([rate, total]) => ({ rate, total, vat: vatIncluded(total, rate) }));
}
