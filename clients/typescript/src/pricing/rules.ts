// Promotion rules as the engine reads them (`till_core::promotions::PromotionRule`), made once
// from `GET /v1/promotions`' answer, and the book that finds those that could apply to a cart.

import { parseInstant, type Instant } from "./instant.js";
import { cents } from "./money.js";
import type { PromotionRule } from "./types.js";

/** The articles a rule names, with a set of them for look-ups. */
export interface Products {
  ids: readonly string[];
  set: ReadonlySet<string>;
}

export type Mechanics =
  | {
      type: "bogo";
      buy: { products: Products; quantity: bigint };
      get: { products: Products; quantity: bigint; percentBps: number };
      maxApplications: bigint | null;
    }
  | { type: "bundle"; components: { productId: string; quantity: bigint }[]; priceCents: number }
  | { type: "percent_off"; products: Products | null; percentBps: number; minSubtotalCents: number | null };

export interface Rule {
  id: string;
  name: string;
  validFrom: Instant;
  validUntil: Instant;
  /** Higher first. */
  priority: number;
  /** Applies only alone. */
  exclusive: boolean;
  /** Null: every store. */
  storeIds: ReadonlySet<string> | null;
  /** Null: every sale. */
  customerGroups: ReadonlySet<string> | null;
  active: boolean;
  mechanics: Mechanics;
}

/** A rule of the answer, with the defaults the server applies to what it leaves out. */
export function readRule(rule: PromotionRule): Rule {
  const common = {
    id: rule.id,
    name: rule.name,
    validFrom: parseInstant(rule.validFrom, false),
    validUntil: parseInstant(rule.validUntil, false),
    priority: rule.priority ?? 0,
    exclusive: rule.exclusive ?? false,
    storeIds: rule.storeIds ? new Set(rule.storeIds) : null,
    customerGroups: rule.customerGroups ? new Set(rule.customerGroups) : null,
    active: rule.active ?? true,
  };
  switch (rule.type) {
    case "bogo":
      return {
        ...common,
        mechanics: {
          type: "bogo",
          buy: { products: products(rule.buy.productIds), quantity: BigInt(rule.buy.quantity) },
          get: {
            products: products(rule.get.productIds),
            quantity: BigInt(rule.get.quantity),
            percentBps: rule.get.percentBps,
          },
          maxApplications: rule.maxApplications == null ? null : BigInt(rule.maxApplications),
        },
      };
    case "bundle":
      return {
        ...common,
        mechanics: {
          type: "bundle",
          components: rule.components.map((c) => ({ productId: c.productId, quantity: BigInt(c.quantity) })),
          priceCents: cents(rule.priceCents),
        },
      };
    case "percent_off":
      return {
        ...common,
        mechanics: {
          type: "percent_off",
          products: rule.productIds ? products(rule.productIds) : null,
          percentBps: rule.percentBps,
          minSubtotalCents: rule.minSubtotalCents == null ? null : cents(rule.minSubtotalCents),
        },
      };
  }
}

function products(ids: readonly string[]): Products {
  return { ids, set: new Set(ids) };
}

/** Whether the rule is in force at `at` in `store` (`PromotionRule::runs`). */
export function runs(rule: Rule, store: string, at: Instant): boolean {
  return (
    rule.active &&
    rule.validFrom <= at &&
    at <= rule.validUntil &&
    (rule.storeIds === null || rule.storeIds.has(store))
  );
}

/**
 * Whether the rule is for a sale whose customer holds `groups` (null: anonymous, or a customer
 * without a profile) (`PromotionRule::admits`).
 */
export function admits(rule: Rule, groups: ReadonlySet<string> | null): boolean {
  if (rule.customerGroups === null) {
    return true;
  }
  if (groups === null) {
    return false;
  }
  for (const group of rule.customerGroups) {
    if (groups.has(group)) {
      return true;
    }
  }
  return false;
}

/** The articles the rule looks at; empty for a basket-wide rule. */
function ruleProducts(rule: Rule): readonly string[] {
  const mechanics = rule.mechanics;
  switch (mechanics.type) {
    case "bogo":
      return [...mechanics.buy.products.ids, ...mechanics.get.products.ids];
    case "bundle":
      return mechanics.components.map((c) => c.productId);
    case "percent_off":
      return mechanics.products?.ids ?? [];
  }
}

/**
 * Active rules indexed by the articles they touch (`RuleBook`), so that a cart costs what the
 * rules touching its articles cost.
 */
export class RuleBook {
  private readonly rules: Rule[];
  private readonly byProduct = new Map<string, number[]>();
  private readonly basket: number[] = [];

  constructor(rules: readonly Rule[]) {
    this.rules = rules.filter((rule) => rule.active);
    this.rules.forEach((rule, index) => {
      const touched = new Set(ruleProducts(rule));
      if (touched.size === 0) {
        this.basket.push(index);
      }
      for (const product of touched) {
        const found = this.byProduct.get(product);
        if (found) {
          found.push(index);
        } else {
          this.byProduct.set(product, [index]);
        }
      }
    });
  }

  /** The rules that could apply to a cart holding `articles`, in force at `at` in `store`. */
  candidates(articles: Iterable<string>, store: string, at: Instant): Rule[] {
    const indexes = new Set(this.basket);
    for (const article of articles) {
      for (const index of this.byProduct.get(article) ?? []) {
        indexes.add(index);
      }
    }
    return [...indexes]
      .sort((a, b) => a - b)
      .map((index) => this.rules[index])
      .filter((rule): rule is Rule => rule !== undefined && runs(rule, store, at));
  }
}
