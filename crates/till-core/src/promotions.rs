//! Automatic promotions: the rules, an index of them by product, and the engine that decides
//! which rules apply to a cart and what each takes off (step 2 of pricing, plus the basket
//! percentages of step 4).
//!
//! The engine works on units, counted per line, never expanded one by one, so a line of a
//! million units costs what a line of one does. A unit serves at most one promotion. Rules
//! are considered by priority (highest first); within a priority the one worth most to the
//! customer on what is left goes first. An exclusive rule applies only alone: first, or not
//! at all. Every tie is broken by rule id, line id or article id, never by cart order.

use crate::ids::{PromotionId, SkuId, StoreId};
use crate::money::{Bps, Cents, Overflow, checked_sum};
use crate::pricing::{BasketPercent, LineReduction, allocate};
use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap, HashSet};

/// A promotion rule as the back office writes it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromotionRule {
    pub id: PromotionId,
    pub name: String,
    pub valid_from: Timestamp,
    pub valid_until: Timestamp,
    /// Higher first.
    pub priority: i64,
    /// Applies only alone, excluding every other promotion of the sale.
    pub exclusive: bool,
    /// The stores it runs in; absent: every store.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store_ids: Option<Vec<StoreId>>,
    /// The customer groups it is for (staff, trade); absent: every sale.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub customer_groups: Option<BTreeSet<String>>,
    pub active: bool,
    #[serde(flatten)]
    pub mechanics: Mechanics,
}

/// What a rule does, by `type`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum Mechanics {
    /// For every `buy.quantity` units bought, `get.quantity` further units get
    /// `get.percentBps` off; the cheapest eligible units are the discounted ones.
    Bogo {
        buy: BuySide,
        get: GetSide,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_applications: Option<i64>,
    },
    /// Each complete set of components sells for `priceCents`.
    Bundle {
        components: Vec<Component>,
        price_cents: Cents,
    },
    /// `percentBps` off the named products (absent: the whole basket) once their subtotal
    /// reaches `minSubtotalCents`.
    PercentOff {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        product_ids: Option<Products>,
        percent_bps: Bps,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        min_subtotal_cents: Option<Cents>,
    },
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BuySide {
    pub product_ids: Products,
    pub quantity: i64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetSide {
    pub product_ids: Products,
    pub quantity: i64,
    pub percent_bps: Bps,
}

/// The articles a rule names, in the order it names them, with a set of them built once, so
/// that a cart's line is matched against a rule of hundreds of articles by one look-up. Built
/// for every cart instead, that set made pricing a small cart against the load generator's
/// two rules several times slower (docs/performance.md, "Promotion rule book").
#[derive(Clone, Debug, Default)]
pub struct Products {
    ids: Vec<SkuId>,
    set: HashSet<SkuId>,
}

impl Products {
    pub fn contains(&self, sku: &SkuId) -> bool {
        self.set.contains(sku)
    }
}

impl From<Vec<SkuId>> for Products {
    fn from(ids: Vec<SkuId>) -> Products {
        let set = ids.iter().cloned().collect();
        Products { ids, set }
    }
}

impl std::ops::Deref for Products {
    type Target = [SkuId];

    fn deref(&self) -> &[SkuId] {
        &self.ids
    }
}

impl FromIterator<SkuId> for Products {
    fn from_iter<I: IntoIterator<Item = SkuId>>(ids: I) -> Products {
        Products::from(ids.into_iter().collect::<Vec<_>>())
    }
}

impl<'a> IntoIterator for &'a Products {
    type Item = &'a SkuId;
    type IntoIter = std::slice::Iter<'a, SkuId>;

    fn into_iter(self) -> Self::IntoIter {
        self.ids.iter()
    }
}

impl PartialEq for Products {
    fn eq(&self, other: &Products) -> bool {
        self.ids == other.ids
    }
}

impl Eq for Products {}

impl Serialize for Products {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.ids.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Products {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Products, D::Error> {
        Vec::<SkuId>::deserialize(deserializer).map(Products::from)
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Component {
    pub product_id: SkuId,
    pub quantity: i64,
}

impl PromotionRule {
    /// Whether the rule is in force at `at` in `store`.
    pub fn runs(&self, store: &StoreId, at: Timestamp) -> bool {
        self.active
            && self.valid_from <= at
            && at <= self.valid_until
            && self.store_ids.as_ref().is_none_or(|stores| stores.contains(store))
    }

    /// Whether the rule may run in `store` at `from` or later: what a till selling offline from
    /// then on must know of.
    pub fn may_run_from(&self, store: &StoreId, from: Timestamp) -> bool {
        self.active && from <= self.valid_until && self.store_ids.as_ref().is_none_or(|stores| stores.contains(store))
    }

    /// Whether the rule is for a sale whose customer holds `groups` (none: no customer, or
    /// one without a profile).
    pub fn admits(&self, groups: Option<&BTreeSet<String>>) -> bool {
        match &self.customer_groups {
            None => true,
            Some(wanted) => groups.is_some_and(|held| !wanted.is_disjoint(held)),
        }
    }

    /// The articles the rule looks at; empty for a basket-wide rule.
    pub fn products(&self) -> Vec<&SkuId> {
        match &self.mechanics {
            Mechanics::Bogo { buy, get, .. } => buy.product_ids.iter().chain(&get.product_ids).collect(),
            Mechanics::Bundle { components, .. } => components.iter().map(|c| &c.product_id).collect(),
            Mechanics::PercentOff { product_ids, .. } => product_ids.iter().flatten().collect(),
        }
    }
}

/// Active rules indexed by the articles they touch, so that pricing a cart costs what the
/// rules touching its articles cost, not what all rules cost.
#[derive(Clone, Debug, Default)]
pub struct RuleBook {
    rules: Vec<PromotionRule>,
    by_product: HashMap<SkuId, Vec<usize>>,
    basket: Vec<usize>,
}

impl RuleBook {
    /// Indexes the active rules among `rules`.
    pub fn new(rules: Vec<PromotionRule>) -> RuleBook {
        let rules: Vec<PromotionRule> = rules.into_iter().filter(|r| r.active).collect();
        let mut by_product: HashMap<SkuId, Vec<usize>> = HashMap::new();
        let mut basket = Vec::new();
        for (index, rule) in rules.iter().enumerate() {
            let products = rule.products();
            if products.is_empty() {
                basket.push(index);
            }
            let unique: BTreeSet<&SkuId> = products.into_iter().collect();
            for product in unique {
                by_product.entry(product.clone()).or_default().push(index);
            }
        }
        RuleBook {
            rules,
            by_product,
            basket,
        }
    }

    pub fn len(&self) -> usize {
        self.rules.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The rules that could apply to a cart holding `articles`, in force at `at` in `store`.
    pub fn candidates<'a>(
        &self,
        articles: impl IntoIterator<Item = &'a SkuId>,
        store: &StoreId,
        at: Timestamp,
    ) -> Vec<&PromotionRule> {
        let mut indexes: BTreeSet<usize> = self.basket.iter().copied().collect();
        for article in articles {
            if let Some(found) = self.by_product.get(article) {
                indexes.extend(found);
            }
        }
        indexes
            .into_iter()
            .map(|i| &self.rules[i])
            .filter(|rule| rule.runs(store, at))
            .collect()
    }
}

/// The groups among `held` that make the rules named by `applied` apply: a sale priced with
/// them stands only while its customer is still in each.
pub fn groups_relied_on<'a>(
    rules: &[&PromotionRule],
    applied: impl IntoIterator<Item = &'a str>,
    held: &BTreeSet<String>,
) -> BTreeSet<String> {
    let applied: HashSet<&str> = applied.into_iter().collect();
    rules
        .iter()
        .filter(|rule| applied.contains(rule.id.as_str()))
        .filter_map(|rule| rule.customer_groups.as_ref())
        .flat_map(|wanted| wanted.intersection(held).cloned())
        .collect()
}

/// A cart line as the engine sees it. Custom lines have no article and take no promotion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromoLine {
    pub line_id: String,
    pub sku: Option<SkuId>,
    pub unit_price: Cents,
    pub quantity: i64,
}

/// What the promotions do to a cart.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PromotionOutcome {
    /// Step 2: reductions of lines, by line index.
    pub reductions: Vec<LineReduction>,
    /// Step 4: basket-wide percentages, applied on the running total.
    pub basket: Vec<BasketPercent>,
}

/// Decides which of `rules` apply to `lines` and what they take off.
pub fn apply_promotions(rules: &[&PromotionRule], lines: &[PromoLine]) -> Result<PromotionOutcome, Overflow> {
    let mut cart = Cart::new(lines);
    let mut outcome = PromotionOutcome::default();
    let mut pending: Vec<&PromotionRule> = rules.to_vec();
    pending.sort_by(|a, b| b.priority.cmp(&a.priority).then_with(|| a.id.cmp(&b.id)));
    let mut applied_any = false;
    while !pending.is_empty() {
        let top = pending[0].priority;
        // The best rule of the highest priority left, on the units still free.
        let mut best: Option<(usize, Plan)> = None;
        for (index, rule) in pending.iter().enumerate().take_while(|(_, r)| r.priority == top) {
            if let Some(plan) = cart.plan(rule, &outcome)?
                && best.as_ref().is_none_or(|(_, b)| plan.value > b.value)
            {
                best = Some((index, plan));
            }
        }
        let Some((index, plan)) = best else {
            // Nothing of this priority applies any more.
            pending.retain(|r| r.priority != top);
            continue;
        };
        let rule = pending.remove(index);
        if rule.exclusive && applied_any {
            continue;
        }
        cart.commit(rule, plan, &mut outcome)?;
        applied_any = true;
        if rule.exclusive {
            break;
        }
    }
    Ok(outcome)
}

/// What applying one rule would do, computed against the units still free.
struct Plan {
    value: Cents,
    /// Units consumed per line index.
    consumed: Vec<(usize, i128)>,
    reductions: Vec<(usize, Cents)>,
    basket: Option<BasketPercent>,
}

struct Cart<'a> {
    lines: &'a [PromoLine],
    /// Units not yet serving a promotion, per line.
    free: Vec<i128>,
    /// Line indexes by line id, the order every allocation follows.
    by_id: Vec<usize>,
}

impl<'a> Cart<'a> {
    fn new(lines: &'a [PromoLine]) -> Cart<'a> {
        let free = lines
            .iter()
            .map(|l| if l.sku.is_some() { i128::from(l.quantity) } else { 0 })
            .collect();
        let mut by_id: Vec<usize> = (0..lines.len()).collect();
        by_id.sort_by(|a, b| lines[*a].line_id.cmp(&lines[*b].line_id));
        Cart { lines, free, by_id }
    }

    /// Free units of the lines selling an article `wanted` picks, as (line index, units), in
    /// line-id order.
    fn holding(&self, wanted: impl Fn(&SkuId) -> bool) -> Vec<(usize, i128)> {
        self.by_id
            .iter()
            .filter(|i| self.free[**i] > 0 && self.lines[**i].sku.as_ref().is_some_and(&wanted))
            .map(|i| (*i, self.free[*i]))
            .collect()
    }

    fn plan(&self, rule: &PromotionRule, outcome: &PromotionOutcome) -> Result<Option<Plan>, Overflow> {
        let plan = match &rule.mechanics {
            Mechanics::Bogo {
                buy,
                get,
                max_applications,
            } => self.plan_bogo(buy, get, *max_applications)?,
            Mechanics::Bundle {
                components,
                price_cents,
            } => self.plan_bundle(components, *price_cents)?,
            Mechanics::PercentOff {
                product_ids: Some(products),
                percent_bps,
                min_subtotal_cents,
            } => self.plan_percent(products, *percent_bps, *min_subtotal_cents)?,
            Mechanics::PercentOff {
                product_ids: None,
                percent_bps,
                min_subtotal_cents,
            } => self.plan_basket(rule, *percent_bps, *min_subtotal_cents, outcome)?,
        };
        Ok(plan.filter(|p| p.value > Cents::ZERO))
    }

    fn plan_bogo(&self, buy: &BuySide, get: &GetSide, max: Option<i64>) -> Result<Option<Plan>, Overflow> {
        let (need_buy, need_get) = (i128::from(buy.quantity), i128::from(get.quantity));
        // Candidates to discount: cheapest first.
        let mut gettable = self.holding(|sku| get.product_ids.contains(sku));
        gettable.sort_by_key(|(i, _)| self.lines[*i].unit_price);
        let buy_total: i128 = self
            .holding(|sku| buy.product_ids.contains(sku))
            .iter()
            .map(|(_, n)| n)
            .sum();
        let get_total: i128 = gettable.iter().map(|(_, n)| n).sum();
        // The k cheapest gettable units are discounted; the buy side must still hold k x buy
        // units once they are set aside. Feasibility falls as k grows: bisect.
        let feasible = |k: i128| {
            let mut left = k * need_get;
            let mut taken_from_buy = 0;
            for (i, units) in &gettable {
                let take = left.min(*units);
                if self.lines[*i].sku.as_ref().is_some_and(|s| buy.product_ids.contains(s)) {
                    taken_from_buy += take;
                }
                left -= take;
            }
            left == 0 && buy_total - taken_from_buy >= k * need_buy
        };
        let (mut low, mut high) = (0i128, get_total / need_get);
        if let Some(max) = max {
            high = high.min(i128::from(max));
        }
        while low < high {
            let mid = low + (high - low + 1) / 2;
            if feasible(mid) { low = mid } else { high = mid - 1 }
        }
        let applications = low;
        if applications == 0 {
            return Ok(None);
        }
        let mut consumed: Vec<(usize, i128)> = Vec::new();
        let mut reductions = Vec::new();
        let mut left = applications * need_get;
        for (i, units) in &gettable {
            let take = left.min(*units);
            if take == 0 {
                break;
            }
            left -= take;
            consumed.push((*i, take));
            let amount = units_value(self.lines[*i].unit_price, take)?.percent(get.percent_bps);
            reductions.push((*i, amount));
        }
        // The buy side: the dearest free units not already set aside.
        let mut buyable: Vec<(usize, i128)> = self
            .holding(|sku| buy.product_ids.contains(sku))
            .into_iter()
            .map(|(i, units)| {
                (
                    i,
                    units - consumed.iter().filter(|(c, _)| *c == i).map(|(_, n)| n).sum::<i128>(),
                )
            })
            .filter(|(_, units)| *units > 0)
            .collect();
        buyable.sort_by_key(|(i, _)| std::cmp::Reverse(self.lines[*i].unit_price));
        let mut left = applications * need_buy;
        for (i, units) in buyable {
            let take = left.min(units);
            if take == 0 {
                break;
            }
            left -= take;
            consumed.push((i, take));
        }
        let value = checked_sum(reductions.iter().map(|(_, c)| *c))?;
        Ok(Some(Plan {
            value,
            consumed,
            reductions,
            basket: None,
        }))
    }

    fn plan_bundle(&self, components: &[Component], price: Cents) -> Result<Option<Plan>, Overflow> {
        // One requirement per article, even if the rule names an article twice.
        let mut needs: Vec<(&SkuId, i128)> = Vec::new();
        for component in components {
            match needs.iter_mut().find(|(sku, _)| *sku == &component.product_id) {
                Some((_, quantity)) => *quantity += i128::from(component.quantity),
                None => needs.push((&component.product_id, i128::from(component.quantity))),
            }
        }
        needs.sort_by(|a, b| a.0.cmp(b.0));
        let holdings: Vec<Vec<(usize, i128)>> = needs
            .iter()
            .map(|(wanted, _)| self.holding(|sku| sku == *wanted))
            .collect();
        let sets = needs
            .iter()
            .zip(&holdings)
            .map(|((_, quantity), holding)| holding.iter().map(|(_, n)| n).sum::<i128>() / quantity)
            .min()
            .unwrap_or(0);
        if sets == 0 {
            return Ok(None);
        }
        // Take the sets' units line by line, then spread the saving over them by what they
        // are worth, so that no line gives up more than its value.
        let mut taken: Vec<(usize, i128, Cents)> = Vec::new();
        for ((_, quantity), holding) in needs.iter().zip(&holdings) {
            let mut left = sets * quantity;
            for (i, units) in holding {
                let take = left.min(*units);
                if take == 0 {
                    break;
                }
                left -= take;
                taken.push((*i, take, units_value(self.lines[*i].unit_price, take)?));
            }
        }
        let regular = checked_sum(taken.iter().map(|(_, _, value)| *value))?;
        let bundled = price.checked_mul(i64::try_from(sets).map_err(|_| Overflow)?)?;
        let saving = regular.checked_sub(bundled)?;
        if saving <= Cents::ZERO {
            return Ok(None);
        }
        let weights: Vec<Cents> = taken.iter().map(|(_, _, value)| *value).collect();
        let order: Vec<usize> = (0..taken.len()).collect();
        let shares = allocate(saving, &weights, &order)?;
        let consumed = taken.iter().map(|(i, units, _)| (*i, *units)).collect();
        let reductions = taken.iter().zip(shares).map(|((i, _, _), share)| (*i, share)).collect();
        Ok(Some(Plan {
            value: saving,
            consumed,
            reductions,
            basket: None,
        }))
    }

    fn plan_percent(&self, products: &Products, percent: Bps, min: Option<Cents>) -> Result<Option<Plan>, Overflow> {
        let holding = self.holding(|sku| products.contains(sku));
        let mut eligible = Cents::ZERO;
        let mut reductions = Vec::with_capacity(holding.len());
        for (i, units) in &holding {
            let amount = units_value(self.lines[*i].unit_price, *units)?;
            eligible = eligible.checked_add(amount)?;
            reductions.push((*i, amount.percent(percent)));
        }
        if holding.is_empty() || eligible < min.unwrap_or(Cents::ZERO) {
            return Ok(None);
        }
        let value = checked_sum(reductions.iter().map(|(_, c)| *c))?;
        Ok(Some(Plan {
            value,
            consumed: holding,
            reductions,
            basket: None,
        }))
    }

    /// A basket-wide percentage takes no unit; its worth is its share of what is left to pay
    /// after the promotions already chosen.
    fn plan_basket(
        &self,
        rule: &PromotionRule,
        percent: Bps,
        min: Option<Cents>,
        outcome: &PromotionOutcome,
    ) -> Result<Option<Plan>, Overflow> {
        let gross = checked_sum(
            self.lines
                .iter()
                .map(|l| units_value(l.unit_price, i128::from(l.quantity)))
                .collect::<Result<Vec<_>, _>>()?,
        )?;
        let taken = checked_sum(outcome.reductions.iter().map(|r| r.amount))?;
        let base = gross.checked_sub(taken)?;
        let min = min.unwrap_or(Cents::ZERO);
        if base < min {
            return Ok(None);
        }
        let basket = BasketPercent {
            promotion_id: rule.id.as_str().to_owned(),
            percent,
            min_subtotal: min,
        };
        Ok(Some(Plan {
            value: base.percent(percent),
            consumed: Vec::new(),
            reductions: Vec::new(),
            basket: Some(basket),
        }))
    }

    fn commit(&mut self, rule: &PromotionRule, plan: Plan, outcome: &mut PromotionOutcome) -> Result<(), Overflow> {
        for (i, units) in plan.consumed {
            self.free[i] -= units;
        }
        for (line, amount) in plan.reductions {
            if amount > Cents::ZERO {
                outcome.reductions.push(LineReduction {
                    line,
                    amount,
                    promotion_id: rule.id.as_str().to_owned(),
                });
            }
        }
        outcome.basket.extend(plan.basket);
        Ok(())
    }
}

/// `units` x `unit_price`, checked.
fn units_value(unit_price: Cents, units: i128) -> Result<Cents, Overflow> {
    i64::try_from(units)
        .map_err(|_| Overflow)
        .and_then(|n| unit_price.checked_mul(n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::PromotionId;
    use proptest::prelude::*;

    fn sku(n: u8) -> SkuId {
        SkuId::parse(&format!("{n:02x}").repeat(32)).unwrap()
    }

    fn cents(v: i64) -> Cents {
        Cents::new(v).unwrap()
    }

    fn bps(v: i64) -> Bps {
        Bps::new(v).unwrap()
    }

    fn rule(id: &str, mechanics: Mechanics) -> PromotionRule {
        PromotionRule {
            id: PromotionId::parse(id).unwrap(),
            name: id.to_owned(),
            valid_from: "2026-01-01T00:00:00Z".parse().unwrap(),
            valid_until: "2026-12-31T23:59:59Z".parse().unwrap(),
            priority: 0,
            exclusive: false,
            store_ids: None,
            customer_groups: None,
            active: true,
            mechanics,
        }
    }

    fn line(id: &str, article: u8, price: i64, quantity: i64) -> PromoLine {
        PromoLine {
            line_id: id.to_owned(),
            sku: Some(sku(article)),
            unit_price: cents(price),
            quantity,
        }
    }

    fn buy_x_get_y(buy: i64, get: i64, percent: i64, articles: &[u8]) -> Mechanics {
        let products: Vec<SkuId> = articles.iter().map(|a| sku(*a)).collect();
        Mechanics::Bogo {
            buy: BuySide {
                product_ids: products.clone().into(),
                quantity: buy,
            },
            get: GetSide {
                product_ids: products.into(),
                quantity: get,
                percent_bps: bps(percent),
            },
            max_applications: None,
        }
    }

    fn reductions(outcome: &PromotionOutcome) -> Vec<(usize, i64, &str)> {
        let mut found: Vec<(usize, i64, &str)> = outcome
            .reductions
            .iter()
            .map(|r| (r.line, r.amount.get(), r.promotion_id.as_str()))
            .collect();
        found.sort();
        found
    }

    fn run(rules: &[PromotionRule], lines: &[PromoLine]) -> PromotionOutcome {
        let rules: Vec<&PromotionRule> = rules.iter().collect();
        apply_promotions(&rules, lines).unwrap()
    }

    #[test]
    fn a_rules_articles_keep_their_order_and_are_found_by_the_set_built_with_them() {
        let named = [sku(3), sku(1), sku(3), sku(2)];
        let products = Products::from(named.to_vec());
        // The back office gets back the list it wrote, repeats included.
        let text = serde_json::to_string(&products).unwrap();
        let expected = serde_json::to_string(&named).unwrap();
        assert_eq!(text, expected);
        let read: Products = serde_json::from_str(&text).unwrap();
        assert_eq!(read, products);
        assert_eq!(&*read, &named);
        // The set answers for what was named and only that, after a round trip too.
        for n in 0..6 {
            let named_it = named.contains(&sku(n));
            assert_eq!(products.contains(&sku(n)), named_it, "article {n}");
            assert_eq!(read.contains(&sku(n)), named_it, "article {n} read back");
        }
    }

    #[test]
    fn buy_two_get_one_free_discounts_the_cheapest_per_multiple() {
        let rules = [rule("b2g1", buy_x_get_y(2, 1, 10_000, &[1, 2]))];
        // Seven eligible units: two full multiples; the two cheapest units are free.
        let lines = [line("a", 1, 500, 4), line("b", 2, 300, 3)];
        assert_eq!(reductions(&run(&rules, &lines)), [(1, 600, "b2g1")]);
        // Two units: no complete multiple.
        assert!(run(&rules, &[line("a", 1, 500, 2)]).reductions.is_empty());
    }

    #[test]
    fn bogo_respects_max_applications_and_buy_get_products() {
        let mut capped = buy_x_get_y(1, 1, 5_000, &[1]);
        if let Mechanics::Bogo { max_applications, .. } = &mut capped {
            *max_applications = Some(1);
        }
        let rules = [rule("half", capped)];
        assert_eq!(reductions(&run(&rules, &[line("a", 1, 1000, 6)])), [(0, 500, "half")]);
        // Buy a coffee machine, get capsules at 50 %: capsules alone earn nothing.
        let mixed = Mechanics::Bogo {
            buy: BuySide {
                product_ids: vec![sku(1)].into(),
                quantity: 1,
            },
            get: GetSide {
                product_ids: vec![sku(2)].into(),
                quantity: 2,
                percent_bps: bps(5_000),
            },
            max_applications: None,
        };
        let rules = [rule("capsules", mixed)];
        assert!(run(&rules, &[line("c", 2, 400, 4)]).reductions.is_empty());
        assert_eq!(
            reductions(&run(&rules, &[line("m", 1, 9900, 1), line("c", 2, 400, 4)])),
            [(1, 400, "capsules")]
        );
    }

    #[test]
    fn a_bundle_repeats_while_sets_are_complete() {
        let bundle = Mechanics::Bundle {
            components: vec![
                Component {
                    product_id: sku(1),
                    quantity: 1,
                },
                Component {
                    product_id: sku(2),
                    quantity: 2,
                },
            ],
            price_cents: cents(1000),
        };
        let rules = [rule("menu", bundle)];
        // 3 mains (800) and 5 drinks (200): two complete sets of 1 + 2, regular 1200, saving 200 each.
        let outcome = run(&rules, &[line("m", 1, 800, 3), line("d", 2, 200, 5)]);
        let total: i64 = outcome.reductions.iter().map(|r| r.amount.get()).sum();
        assert_eq!(total, 400);
        // A bundle priced above the regular price never raises it.
        let dear = Mechanics::Bundle {
            components: vec![Component {
                product_id: sku(1),
                quantity: 1,
            }],
            price_cents: cents(900),
        };
        assert!(
            run(&[rule("dear", dear)], &[line("m", 1, 800, 1)])
                .reductions
                .is_empty()
        );
    }

    #[test]
    fn percent_off_needs_its_minimum_and_basket_rules_go_to_step_four() {
        let products = Mechanics::PercentOff {
            product_ids: Some(vec![sku(1)].into()),
            percent_bps: bps(1_000),
            min_subtotal_cents: Some(cents(2_000)),
        };
        let rules = [rule("ten", products)];
        assert!(run(&rules, &[line("a", 1, 1000, 1)]).reductions.is_empty());
        assert_eq!(reductions(&run(&rules, &[line("a", 1, 1000, 2)])), [(0, 200, "ten")]);
        let basket = Mechanics::PercentOff {
            product_ids: None,
            percent_bps: bps(500),
            min_subtotal_cents: None,
        };
        let outcome = run(&[rule("five", basket)], &[line("a", 1, 1000, 2)]);
        assert!(outcome.reductions.is_empty());
        assert_eq!(
            outcome.basket,
            vec![BasketPercent {
                promotion_id: "five".into(),
                percent: bps(500),
                min_subtotal: Cents::ZERO
            }]
        );
    }

    #[test]
    fn a_unit_serves_one_promotion_and_priority_comes_first() {
        let lines = [line("a", 1, 1000, 3)];
        let mut low_but_rich = rule(
            "rich",
            Mechanics::PercentOff {
                product_ids: Some(vec![sku(1)].into()),
                percent_bps: bps(5_000),
                min_subtotal_cents: None,
            },
        );
        let mut high_but_poor = rule(
            "poor",
            Mechanics::PercentOff {
                product_ids: Some(vec![sku(1)].into()),
                percent_bps: bps(1_000),
                min_subtotal_cents: None,
            },
        );
        high_but_poor.priority = 10;
        low_but_rich.priority = 1;
        let outcome = run(&[low_but_rich.clone(), high_but_poor.clone()], &lines);
        assert_eq!(reductions(&outcome), [(0, 300, "poor")]);
        // Same priority: the better one for the customer.
        high_but_poor.priority = 1;
        assert_eq!(
            reductions(&run(&[low_but_rich, high_but_poor], &lines)),
            [(0, 1500, "rich")]
        );
    }

    #[test]
    fn an_exclusive_rule_applies_alone_or_not_at_all() {
        let lines = [line("a", 1, 1000, 2), line("b", 2, 500, 1)];
        let mut exclusive = rule(
            "solo",
            Mechanics::PercentOff {
                product_ids: Some(vec![sku(1)].into()),
                percent_bps: bps(3_000),
                min_subtotal_cents: None,
            },
        );
        exclusive.exclusive = true;
        let other = rule(
            "other",
            Mechanics::PercentOff {
                product_ids: Some(vec![sku(2)].into()),
                percent_bps: bps(1_000),
                min_subtotal_cents: None,
            },
        );
        let basket = rule(
            "basket",
            Mechanics::PercentOff {
                product_ids: None,
                percent_bps: bps(500),
                min_subtotal_cents: None,
            },
        );
        let outcome = run(&[exclusive.clone(), other.clone(), basket.clone()], &lines);
        assert_eq!(reductions(&outcome), [(0, 600, "solo")]);
        assert!(outcome.basket.is_empty());
        // Behind a higher-priority rule that applied, the exclusive one does not apply at all.
        let mut first = other.clone();
        first.priority = 5;
        let outcome = run(&[exclusive, first, basket], &lines);
        assert_eq!(reductions(&outcome), [(1, 50, "other")]);
        assert_eq!(outcome.basket.len(), 1);
    }

    #[test]
    fn rules_run_only_in_their_window_and_stores() {
        let mut scoped = rule(
            "paris",
            Mechanics::PercentOff {
                product_ids: None,
                percent_bps: bps(500),
                min_subtotal_cents: None,
            },
        );
        scoped.store_ids = Some(vec![StoreId::parse("paris").unwrap()]);
        let paris = StoreId::parse("paris").unwrap();
        let lyon = StoreId::parse("lyon").unwrap();
        let during: Timestamp = "2026-06-01T00:00:00Z".parse().unwrap();
        let after: Timestamp = "2027-01-01T00:00:00Z".parse().unwrap();
        assert!(scoped.runs(&paris, during));
        assert!(!scoped.runs(&lyon, during));
        assert!(!scoped.runs(&paris, after));
        scoped.active = false;
        assert!(!scoped.runs(&paris, during));
    }

    #[test]
    fn a_rule_for_groups_admits_only_their_customers() {
        let groups = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<BTreeSet<_>>();
        let mut staff = rule(
            "staff",
            Mechanics::PercentOff {
                product_ids: None,
                percent_bps: bps(1000),
                min_subtotal_cents: None,
            },
        );
        staff.customer_groups = Some(groups(&["staff", "trade"]));
        let everyone = rule(
            "everyone",
            Mechanics::PercentOff {
                product_ids: None,
                percent_bps: bps(100),
                min_subtotal_cents: None,
            },
        );
        assert!(staff.admits(Some(&groups(&["vip", "trade"]))));
        assert!(!staff.admits(Some(&groups(&["vip"]))));
        assert!(!staff.admits(Some(&groups(&[]))));
        assert!(!staff.admits(None), "an anonymous sale is in no group");
        assert!(everyone.admits(None));
        let held = groups(&["staff", "trade", "vip"]);
        let rules = [&staff, &everyone];
        assert_eq!(
            groups_relied_on(&rules, ["staff", "everyone"], &held),
            groups(&["staff", "trade"])
        );
        assert!(groups_relied_on(&rules, ["everyone"], &held).is_empty());
    }

    #[test]
    fn the_book_finds_rules_by_article() {
        let touching = rule(
            "a",
            Mechanics::PercentOff {
                product_ids: Some(vec![sku(1)].into()),
                percent_bps: bps(100),
                min_subtotal_cents: None,
            },
        );
        let elsewhere = rule(
            "b",
            Mechanics::PercentOff {
                product_ids: Some(vec![sku(9)].into()),
                percent_bps: bps(100),
                min_subtotal_cents: None,
            },
        );
        let basket = rule(
            "c",
            Mechanics::PercentOff {
                product_ids: None,
                percent_bps: bps(100),
                min_subtotal_cents: None,
            },
        );
        let book = RuleBook::new(vec![touching, elsewhere, basket]);
        let at: Timestamp = "2026-06-01T00:00:00Z".parse().unwrap();
        let found: Vec<&str> = book
            .candidates([&sku(1)], &StoreId::parse("s").unwrap(), at)
            .iter()
            .map(|r| r.id.as_str())
            .collect();
        assert_eq!(found, ["a", "c"]);
    }

    #[test]
    fn rules_round_trip_through_their_json() {
        let original = rule("b2g1", buy_x_get_y(2, 1, 10_000, &[1]));
        let text = serde_json::to_string(&original).unwrap();
        assert!(
            text.contains(r#""type":"bogo""#) && text.contains(r#""percentBps":10000"#),
            "{text}"
        );
        assert_eq!(serde_json::from_str::<PromotionRule>(&text).unwrap(), original);
        let bad = text.replace("10000", "10001");
        assert!(serde_json::from_str::<PromotionRule>(&bad).is_err());
    }

    fn any_rule() -> impl Strategy<Value = PromotionRule> {
        let articles = prop::collection::vec(0u8..4, 1..3);
        prop_oneof![
            (1i64..4, 1i64..3, 1i64..=10_000, articles.clone()).prop_map(|(b, g, p, a)| buy_x_get_y(b, g, p, &a)),
            (prop::collection::vec((0u8..4, 1i64..3), 1..3), 0i64..3_000).prop_map(|(parts, price)| {
                let mut seen = HashSet::new();
                let components = parts
                    .into_iter()
                    .filter(|(a, _)| seen.insert(*a))
                    .map(|(a, q)| Component {
                        product_id: sku(a),
                        quantity: q,
                    })
                    .collect();
                Mechanics::Bundle {
                    components,
                    price_cents: cents(price),
                }
            }),
            (prop::option::of(articles), 1i64..=10_000, 0i64..5_000).prop_map(|(a, p, m)| {
                Mechanics::PercentOff {
                    product_ids: a.map(|a| a.iter().map(|x| sku(*x)).collect()),
                    percent_bps: bps(p),
                    min_subtotal_cents: Some(cents(m)),
                }
            }),
        ]
        .prop_flat_map(|mechanics| (Just(mechanics), -2i64..3, any::<bool>(), 0u32..1000))
        .prop_map(|(mechanics, priority, exclusive, n)| {
            let mut r = rule(&format!("r{n}"), mechanics);
            r.priority = priority;
            r.exclusive = exclusive;
            r
        })
    }

    fn any_lines() -> impl Strategy<Value = Vec<PromoLine>> {
        prop::collection::vec((0u8..4, 1i64..2_000, 1i64..8), 1..6).prop_map(|specs| {
            specs
                .into_iter()
                .enumerate()
                .map(|(i, (a, p, q))| line(&format!("l{i}"), a, p, q))
                .collect()
        })
    }

    proptest! {
        #[test]
        fn promotions_never_take_more_than_a_line_is_worth(
            rules in prop::collection::vec(any_rule(), 0..5),
            lines in any_lines(),
        ) {
            let outcome = run(&rules, &lines);
            for (index, line) in lines.iter().enumerate() {
                let taken: i64 = outcome.reductions.iter().filter(|r| r.line == index).map(|r| r.amount.get()).sum();
                prop_assert!(taken >= 0);
                prop_assert!(taken <= line.unit_price.get() * line.quantity, "line {} lost {} of {}", index, taken, line.unit_price.get() * line.quantity);
            }
        }

        /// Overlapping percentage rules on the same articles: each unit serves one rule, so a
        /// line never loses more than the largest percentage of its value.
        #[test]
        fn a_unit_is_discounted_at_most_once(
            rates in prop::collection::vec((1i64..=10_000, prop::collection::vec(0u8..3, 1..3)), 1..6),
            lines in any_lines(),
        ) {
            let rules: Vec<PromotionRule> = rates
                .iter()
                .enumerate()
                .map(|(n, (rate, articles))| {
                    let products = Some(articles.iter().map(|a| sku(*a)).collect());
                    rule(&format!("p{n}"), Mechanics::PercentOff { product_ids: products, percent_bps: bps(*rate), min_subtotal_cents: None })
                })
                .collect();
            let highest = rates.iter().map(|(rate, _)| *rate).max().unwrap_or(0);
            let outcome = run(&rules, &lines);
            for (index, line) in lines.iter().enumerate() {
                let value = cents(line.unit_price.get() * line.quantity);
                let taken: Vec<&LineReduction> = outcome.reductions.iter().filter(|r| r.line == index).collect();
                prop_assert!(taken.len() <= 1, "line {} discounted by {} rules", index, taken.len());
                let total: i64 = taken.iter().map(|r| r.amount.get()).sum();
                prop_assert!(total <= value.percent(bps(highest)).get());
            }
        }

        #[test]
        fn promotions_do_not_depend_on_line_order(
            rules in prop::collection::vec(any_rule(), 0..5),
            lines in any_lines(),
        ) {
            let outcome = run(&rules, &lines);
            let mut reversed = lines.clone();
            reversed.reverse();
            let again = run(&rules, &reversed);
            let by_id = |outcome: &PromotionOutcome, lines: &[PromoLine]| {
                let mut found: Vec<(String, i64, String)> = outcome
                    .reductions
                    .iter()
                    .map(|r| (lines[r.line].line_id.clone(), r.amount.get(), r.promotion_id.clone()))
                    .collect();
                found.sort();
                found
            };
            prop_assert_eq!(by_id(&outcome, &lines), by_id(&again, &reversed));
            prop_assert_eq!(outcome.basket, again.basket);
        }
    }
}
