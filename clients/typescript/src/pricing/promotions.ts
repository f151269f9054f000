// The promotion engine (`till_core::promotions::apply_promotions`): which rules apply to a cart
// and what each takes off.
//
// It works on units counted per line, never expanded one by one; a unit serves at most one
// promotion. Rules go by priority (highest first); within a priority the one worth most to the
// customer on what is left goes first. An exclusive rule applies only alone: first, or not at
// all. Ties are broken by rule id, line id or article id, never by cart order. Counts of units
// are bigints: Rust sums them in i128, past what a number holds exactly.

import { allocate } from "./allocate.js";
import { Overflow, add, mul, percent, sub, sum } from "./money.js";
import type { Mechanics, Products, Rule } from "./rules.js";
import { compareText } from "./text.js";

/** A cart line as the engine sees it; a custom line has no article and takes no promotion. */
export interface PromoLine {
  lineId: string;
  sku: string | null;
  unitPrice: number;
  quantity: number;
}

/** A promotion's reduction of one line (step 2 of pricing). */
export interface LineReduction {
  line: number;
  amount: number;
  promotionId: string;
}

/** A basket-wide percentage (step 4), applied when the running total reaches its minimum. */
export interface BasketPercent {
  promotionId: string;
  percentBps: number;
  minSubtotal: number;
}

export interface PromotionOutcome {
  reductions: LineReduction[];
  basket: BasketPercent[];
}

/** Decides which of `rules` apply to `lines` and what they take off; throws Overflow. */
export function applyPromotions(rules: readonly Rule[], lines: readonly PromoLine[]): PromotionOutcome {
  const cart = new Cart(lines);
  const outcome: PromotionOutcome = { reductions: [], basket: [] };
  const pending = [...rules].sort((a, b) => b.priority - a.priority || compareText(a.id, b.id));
  let appliedAny = false;
  while (pending.length > 0) {
    const top = pending[0]?.priority;
    // The best rule of the highest priority left, on the units still free.
    let best: { index: number; plan: Plan } | null = null;
    for (let index = 0; index < pending.length && pending[index]?.priority === top; index++) {
      const plan = cart.plan(pending[index] as Rule, outcome);
      if (plan !== null && (best === null || plan.value > best.plan.value)) {
        best = { index, plan };
      }
    }
    if (best === null) {
      // Nothing of this priority applies any more.
      removeWhere(pending, (rule) => rule.priority === top);
      continue;
    }
    const [rule] = pending.splice(best.index, 1) as [Rule];
    if (rule.exclusive && appliedAny) {
      continue;
    }
    cart.commit(rule, best.plan, outcome);
    appliedAny = true;
    if (rule.exclusive) {
      break;
    }
  }
  return outcome;
}

function removeWhere<T>(items: T[], test: (item: T) => boolean): void {
  const kept = items.filter((item) => !test(item));
  items.splice(0, items.length, ...kept);
}

/** What applying one rule would do, against the units still free. */
interface Plan {
  value: number;
  /** Units taken per line index. */
  consumed: [number, bigint][];
  reductions: [number, number][];
  basket: BasketPercent | null;
}

/** Units of a line, as (line index, units). */
type Held = [number, bigint];

class Cart {
  /** Units not yet serving a promotion, per line. */
  private readonly free: bigint[];
  /** Line indexes by line id: the order every allocation follows. */
  private readonly byId: number[];

  constructor(private readonly lines: readonly PromoLine[]) {
    this.free = lines.map((line) => (line.sku !== null ? BigInt(line.quantity) : 0n));
    this.byId = lines.map((_, i) => i).sort((a, b) => compareText(this.line(a).lineId, this.line(b).lineId));
  }

  private line(index: number): PromoLine {
    return this.lines[index] as PromoLine;
  }

  private freeUnits(index: number): bigint {
    return this.free[index] ?? 0n;
  }

  /** Free units of the lines selling an article `wanted` picks, in line-id order. */
  private holding(wanted: (sku: string) => boolean): Held[] {
    return this.byId
      .filter((i) => {
        const sku = this.line(i).sku;
        return this.freeUnits(i) > 0n && sku !== null && wanted(sku);
      })
      .map((i) => [i, this.freeUnits(i)]);
  }

  private sells(index: number, products: Products): boolean {
    const sku = this.line(index).sku;
    return sku !== null && products.set.has(sku);
  }

  plan(rule: Rule, outcome: PromotionOutcome): Plan | null {
    const plan = this.planOf(rule, rule.mechanics, outcome);
    return plan !== null && plan.value > 0 ? plan : null;
  }

  private planOf(rule: Rule, mechanics: Mechanics, outcome: PromotionOutcome): Plan | null {
    switch (mechanics.type) {
      case "bogo":
        return this.planBogo(mechanics.buy, mechanics.get, mechanics.maxApplications);
      case "bundle":
        return this.planBundle(mechanics.components, mechanics.priceCents);
      case "percent_off":
        return mechanics.products === null
          ? this.planBasket(rule, mechanics.percentBps, mechanics.minSubtotalCents, outcome)
          : this.planPercent(mechanics.products, mechanics.percentBps, mechanics.minSubtotalCents);
    }
  }

  /**
   * For every `buy.quantity` units bought, `get.quantity` further units get `get.percentBps`
   * off; the cheapest eligible units are the discounted ones, the dearest pay for them.
   */
  private planBogo(
    buy: { products: Products; quantity: bigint },
    get: { products: Products; quantity: bigint; percentBps: number },
    max: bigint | null,
  ): Plan | null {
    // Candidates to discount: cheapest first (a stable sort, so line-id order among equals).
    const gettable = this.holding((sku) => get.products.set.has(sku)).sort(
      ([a], [b]) => this.line(a).unitPrice - this.line(b).unitPrice,
    );
    const buyTotal = total(this.holding((sku) => buy.products.set.has(sku)));
    const getTotal = total(gettable);
    // The k cheapest gettable units are discounted; the buy side must still hold k × buy units
    // once they are set aside. Feasibility falls as k grows: bisect.
    const feasible = (k: bigint): boolean => {
      let left = k * get.quantity;
      let takenFromBuy = 0n;
      for (const [i, units] of gettable) {
        const take = min(left, units);
        if (this.sells(i, buy.products)) {
          takenFromBuy += take;
        }
        left -= take;
      }
      return left === 0n && buyTotal - takenFromBuy >= k * buy.quantity;
    };
    let low = 0n;
    let high = getTotal / get.quantity;
    if (max !== null) {
      high = min(high, max);
    }
    while (low < high) {
      const mid = low + (high - low + 1n) / 2n;
      if (feasible(mid)) {
        low = mid;
      } else {
        high = mid - 1n;
      }
    }
    const applications = low;
    if (applications === 0n) {
      return null;
    }
    const consumed: [number, bigint][] = [];
    const reductions: [number, number][] = [];
    let left = applications * get.quantity;
    for (const [i, units] of gettable) {
      const take = min(left, units);
      if (take === 0n) {
        break;
      }
      left -= take;
      consumed.push([i, take]);
      reductions.push([i, percent(unitsValue(this.line(i).unitPrice, take), get.percentBps)]);
    }
    // The buy side: the dearest free units not already set aside.
    const buyable = this.holding((sku) => buy.products.set.has(sku))
      .map(([i, units]): Held => [i, units - total(consumed.filter(([c]) => c === i))])
      .filter(([, units]) => units > 0n)
      .sort(([a], [b]) => this.line(b).unitPrice - this.line(a).unitPrice);
    left = applications * buy.quantity;
    for (const [i, units] of buyable) {
      const take = min(left, units);
      if (take === 0n) {
        break;
      }
      left -= take;
      consumed.push([i, take]);
    }
    const value = sum(reductions.map(([, amount]) => amount));
    return { value, consumed, reductions, basket: null };
  }

  /** Each complete set of components sells for `price`, repeated while sets are complete. */
  private planBundle(components: readonly { productId: string; quantity: bigint }[], price: number): Plan | null {
    // One requirement per article, even if the rule names an article twice; by article id.
    const needs: { sku: string; quantity: bigint }[] = [];
    for (const component of components) {
      const need = needs.find((n) => n.sku === component.productId);
      if (need) {
        need.quantity += component.quantity;
      } else {
        needs.push({ sku: component.productId, quantity: component.quantity });
      }
    }
    needs.sort((a, b) => compareText(a.sku, b.sku));
    const holdings = needs.map(({ sku: wanted }) => this.holding((sku) => sku === wanted));
    // Complete sets: the fewest any component allows.
    const sets = needs
      .map(({ quantity }, n) => total(holdings[n] ?? []) / quantity)
      .reduce((fewest: bigint | null, count) => (fewest === null || count < fewest ? count : fewest), null);
    if (sets === null || sets === 0n) {
      return null;
    }
    // Take the sets' units line by line, then spread the saving over them by what they are
    // worth, so that no line gives up more than its value.
    const taken: { line: number; units: bigint; value: number }[] = [];
    needs.forEach(({ quantity }, n) => {
      let left = sets * quantity;
      for (const [i, units] of holdings[n] ?? []) {
        const take = min(left, units);
        if (take === 0n) {
          break;
        }
        left -= take;
        taken.push({ line: i, units: take, value: unitsValue(this.line(i).unitPrice, take) });
      }
    });
    const regular = sum(taken.map((t) => t.value));
    const bundled = mul(price, toI64(sets));
    const saving = sub(regular, bundled);
    if (saving <= 0) {
      return null;
    }
    const shares = allocate(
      saving,
      taken.map((t) => t.value),
      taken.map((_, i) => i),
    );
    return {
      value: saving,
      consumed: taken.map((t) => [t.line, t.units]),
      reductions: taken.map((t, i) => [t.line, shares[i] ?? 0]),
      basket: null,
    };
  }

  /** `percentBps` off the named articles once their subtotal reaches `min`. */
  private planPercent(products: Products, percentBps: number, min: number | null): Plan | null {
    const holding = this.holding((sku) => products.set.has(sku));
    let eligible = 0;
    const reductions: [number, number][] = [];
    for (const [i, units] of holding) {
      const amount = unitsValue(this.line(i).unitPrice, units);
      eligible = add(eligible, amount);
      reductions.push([i, percent(amount, percentBps)]);
    }
    if (holding.length === 0 || eligible < (min ?? 0)) {
      return null;
    }
    const value = sum(reductions.map(([, amount]) => amount));
    return { value, consumed: holding, reductions, basket: null };
  }

  /**
   * A basket-wide percentage takes no unit; its worth is its share of what is left to pay after
   * the promotions already chosen.
   */
  private planBasket(rule: Rule, percentBps: number, min: number | null, outcome: PromotionOutcome): Plan | null {
    const gross = sum(this.lines.map((line) => unitsValue(line.unitPrice, BigInt(line.quantity))));
    const taken = sum(outcome.reductions.map((r) => r.amount));
    const base = sub(gross, taken);
    const minimum = min ?? 0;
    if (base < minimum) {
      return null;
    }
    return {
      value: percent(base, percentBps),
      consumed: [],
      reductions: [],
      basket: { promotionId: rule.id, percentBps, minSubtotal: minimum },
    };
  }

  commit(rule: Rule, plan: Plan, outcome: PromotionOutcome): void {
    for (const [i, units] of plan.consumed) {
      this.free[i] = this.freeUnits(i) - units;
    }
    for (const [line, amount] of plan.reductions) {
      if (amount > 0) {
        outcome.reductions.push({ line, amount, promotionId: rule.id });
      }
    }
    if (plan.basket !== null) {
      outcome.basket.push(plan.basket);
    }
  }
}

function total(held: readonly Held[]): bigint {
  return held.reduce((acc, [, units]) => acc + units, 0n);
}

function min(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}

const I64_MAX = (1n << 63n) - 1n;

/** A count as Rust's `i64::try_from`: past i64, an overflow. */
function toI64(units: bigint): bigint {
  if (units > I64_MAX) {
    throw new Overflow();
  }
  return units;
}

/** `units × unitPrice`, checked (`units_value`). */
function unitsValue(unitPrice: number, units: bigint): number {
  return mul(unitPrice, toI64(units));
}
