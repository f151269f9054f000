// What the carts of a run came to, counted from the offline answers, to show what the run
// covered: how many were priced, which kinds of promotions took something, how many lines sold at
// a store's own price or at a price scheduled after the first, and the refusals by reason.

import { articleAt, readArticle, type Article } from "../../src/pricing/catalog.js";
import { parseInstant } from "../../src/pricing/instant.js";
import type { PromotionRule } from "../../src/pricing/index.js";
import type { TestCart } from "./carts.js";
import type { Comparison } from "./compare.js";
import type { World } from "./world.js";

export class Tally {
  total = 0;
  private readonly kinds = new Map<string, number>();
  /** Per world: articles read without the stores' prices, and the rules by id. */
  private readonly worlds = new WeakMap<World, { plain: Map<string, Article>; rules: Map<string, PromotionRule> }>();

  count(world: World, cart: TestCart, { result }: Comparison): void {
    this.total++;
    if (!result.ok) {
      const { reason, fieldErrors } = result.refusal;
      if (reason.kind === "coupon_unusable") {
        this.add(`refused: ${reason.kind} (${reason.why})`);
      } else if (fieldErrors !== undefined) {
        const fields = new Set(fieldErrors.map((e) => e.field.replace(/\.[0-9]+\./g, ".N.")));
        this.add(`refused: ${reason.kind} (${[...fields].sort().join(", ")})`);
      } else {
        this.add(`refused: ${reason.kind}`);
      }
      return;
    }
    this.add("priced");
    const { plain, rules } = this.of(world);
    const kinds = new Set<string>();
    for (const adjustment of result.quote.adjustments.filter((a) => a.amountCents > 0)) {
      const rule = rules.get(adjustment.id);
      if (adjustment.source !== "promotion" || rule === undefined) {
        kinds.add(adjustment.source);
        continue;
      }
      const basket = rule.type === "percent_off" && rule.productIds == null;
      kinds.add(`promotion ${basket ? "basket" : rule.type}`);
      if (rule.customerGroups != null) kinds.add("promotion for groups");
      if (rule.exclusive === true) kinds.add("exclusive promotion");
    }
    const at = parseInstant(cart.issuedAt, true);
    result.quote.lines.forEach((line) => {
      const article = plain.get(line.skuId);
      const catalog = article === undefined ? null : articleAt(article, at);
      if (catalog !== null && catalog.price !== line.unitPrice) kinds.add("store price");
      if (article !== undefined && article.prices.length > 1 && at >= (article.prices[1]?.from ?? at + 1n)) {
        kinds.add("scheduled price");
      }
    });
    for (const kind of kinds) this.add(`with ${kind}`);
  }

  describe(): string {
    return [...this.kinds]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([kind, n]) => `${kind}: ${n}`)
      .join("; ");
  }

  private add(kind: string): void {
    this.kinds.set(kind, (this.kinds.get(kind) ?? 0) + 1);
  }

  private of(world: World): { plain: Map<string, Article>; rules: Map<string, PromotionRule> } {
    let found = this.worlds.get(world);
    if (found === undefined) {
      const data = world.data.get(world.stores[0]);
      const plain = new Map(
        (data?.articles ?? []).map((article) => [article.skuId, readArticle({ ...article, storePrices: [] })]),
      );
      const rules = new Map((data?.promotions ?? []).map((rule) => [rule.id, rule]));
      found = { plain, rules };
      this.worlds.set(world, found);
    }
    return found;
  }
}
