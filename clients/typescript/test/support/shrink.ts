// Shrinking a cart the two sides price differently: greedily drop lines, declared discounts,
// the coupon and the customer, and lower quantities, keeping each step that still shows a
// difference, until no step does. What is left is the case to read.

import type { CartLine } from "../../src/pricing/index.js";
import type { TestCart } from "./carts.js";

/** `differs` answers whether the two sides still disagree on a cart. */
export async function shrink(cart: TestCart, differs: (cart: TestCart) => Promise<boolean>): Promise<TestCart> {
  let smallest = cart;
  let progress = true;
  while (progress) {
    progress = false;
    for (const candidate of smaller(smallest)) {
      if (await differs(candidate)) {
        smallest = candidate;
        progress = true;
        break;
      }
    }
  }
  return smallest;
}

/** Every cart one step smaller than `cart`, the biggest steps first. */
function* smaller(cart: TestCart): Generator<TestCart> {
  for (let i = 0; i < cart.lines.length; i++) {
    const dropped = cart.lines[i] as CartLine;
    // Without the line, and without the discounts that name it.
    yield {
      ...cart,
      lines: cart.lines.filter((_, j) => j !== i),
      declaredDiscounts: cart.declaredDiscounts.filter((d) => !(d.scope === "line" && d.lineId === dropped.id)),
    };
  }
  for (let i = 0; i < cart.declaredDiscounts.length; i++) {
    yield { ...cart, declaredDiscounts: cart.declaredDiscounts.filter((_, j) => j !== i) };
  }
  if (cart.couponCode !== null) {
    yield { ...cart, couponCode: null };
  }
  if (cart.customerId !== null) {
    yield { ...cart, customerId: null };
  }
  for (let i = 0; i < cart.lines.length; i++) {
    const line = cart.lines[i] as CartLine;
    const lower = [1, Math.floor(line.quantity / 2), line.quantity - 1].filter(
      (q, k, all) => q >= 1 && q < line.quantity && all.indexOf(q) === k,
    );
    for (const quantity of lower) {
      yield { ...cart, lines: cart.lines.map((l, j) => (j === i ? { ...l, quantity } : l)) };
    }
  }
}
