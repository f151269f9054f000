//! A promotion rule on the wire: its three shapes as the document states them, read from a body
//! and rendered from the domain's [`promotions::PromotionRule`].
//!
//! Each shape is a schema of its own carrying its `type`, joined by a union with a
//! discriminator on `type`. The shapes come twice: with `id` required (the upsert, and every
//! answer) and with `id` optional (the replace, where the path names the rule).

use crate::fields::{Field, FromBody, Obj};
use crate::openapi::{GroupName, Instant, SkuId as SkuIdText, Text};
use crate::routes::customers::group_names;
use jiff::Timestamp;
use serde::Serialize;
use std::collections::HashSet;
use till_core::ids::{PromotionId, SkuId, StoreId};
use till_core::instant::Zone;
use till_core::money::{Bps, Cents, MAX_SAFE_INTEGER};
use till_core::promotions::{self, BuySide, Component, GetSide, Mechanics, Products};

/// How a shape holds the rule's id: the upsert's is the body's own, the replace's is the
/// path's (a body's id, if any, must still be one, and is overwritten).
pub trait RuleId: Sized {
    /// What names the rule besides the body.
    type Path;

    fn read(root: &Obj<'_>) -> Option<Self>;

    fn resolve(self, path: Self::Path) -> PromotionId;
}

impl RuleId for PromotionId {
    type Path = ();

    fn read(root: &Obj<'_>) -> Option<Self> {
        root.required("id", |f| f.parse_text(PromotionId::parse))
    }

    fn resolve(self, (): ()) -> PromotionId {
        self
    }
}

impl RuleId for Option<PromotionId> {
    type Path = PromotionId;

    fn read(root: &Obj<'_>) -> Option<Self> {
        root.optional("id", |f| f.parse_text(PromotionId::parse))
    }

    fn resolve(self, path: PromotionId) -> PromotionId {
        path
    }
}

/// Declares one set of the three shapes and their union, with the union's reading from a body
/// and its meaning as a domain rule. Left as written by rustfmt, which indents the
/// discriminator's attribute further at every run.
#[rustfmt::skip]
macro_rules! rule_shapes {
    ($union:ident, $bogo:ident, $bundle:ident, $percent_off:ident,
     id: $id:ty, $id_schema:ty, required: $required:literal, $id_doc:literal, $union_doc:literal) => {
        #[doc = $union_doc]
        #[derive(Serialize, utoipa::ToSchema)]
        #[serde(untagged)]
        #[schema(discriminator(
            property_name = "type",
            mapping(
                ("bogo" = concat!("#/components/schemas/", stringify!($bogo))),
                ("bundle" = concat!("#/components/schemas/", stringify!($bundle))),
                ("percent_off" = concat!("#/components/schemas/", stringify!($percent_off)))
            )
        ))]
        pub enum $union {
            Bogo($bogo),
            Bundle($bundle),
            PercentOff($percent_off),
        }

        /// For every `buy.quantity` units bought, `get.quantity` further units get
        /// `get.percentBps` off; repeats per multiple; the cheapest eligible units are the
        /// discounted ones.
        #[derive(Serialize, utoipa::ToSchema)]
        #[serde(rename_all = "camelCase")]
        pub struct $bogo {
            #[schema(inline)]
            r#type: BogoType,
            #[doc = $id_doc]
            #[schema(value_type = $id_schema, required = $required)]
            id: $id,
            #[schema(value_type = Text)]
            name: String,
            #[schema(value_type = Instant)]
            valid_from: Timestamp,
            /// Not before `validFrom`.
            #[schema(value_type = Instant)]
            valid_until: Timestamp,
            /// Higher first. Default 0.
            #[schema(minimum = -9007199254740991_i64, maximum = 9007199254740991_i64)]
            priority: Option<i64>,
            /// Applies only alone, excluding every other promotion of the sale. Default false.
            exclusive: Option<bool>,
            /// The stores it runs in, at least one; absent: every store.
            #[schema(value_type = Option<Vec<Text>>, min_items = 1)]
            #[serde(skip_serializing_if = "Option::is_none")]
            store_ids: Option<Vec<StoreId>>,
            /// Only for sales whose customer is in one of these groups (staff, trade prices), at
            /// least one; absent: every sale.
            #[schema(value_type = Option<Vec<GroupName>>, min_items = 1, max_items = 50)]
            #[serde(skip_serializing_if = "Option::is_none")]
            customer_groups: Option<Vec<String>>,
            /// Default true; the deactivate operation turns it off.
            active: Option<bool>,
            buy: BuySideBody,
            get: GetSideBody,
            /// At most this many applications per sale; unlimited when absent.
            #[schema(minimum = 1, maximum = 9007199254740991_i64)]
            #[serde(skip_serializing_if = "Option::is_none")]
            max_applications: Option<i64>,
        }

        /// Each complete set of components sells for `priceCents`, repeated while sets are
        /// complete.
        #[derive(Serialize, utoipa::ToSchema)]
        #[serde(rename_all = "camelCase")]
        pub struct $bundle {
            #[schema(inline)]
            r#type: BundleType,
            #[doc = $id_doc]
            #[schema(value_type = $id_schema, required = $required)]
            id: $id,
            #[schema(value_type = Text)]
            name: String,
            #[schema(value_type = Instant)]
            valid_from: Timestamp,
            /// Not before `validFrom`.
            #[schema(value_type = Instant)]
            valid_until: Timestamp,
            /// Higher first. Default 0.
            #[schema(minimum = -9007199254740991_i64, maximum = 9007199254740991_i64)]
            priority: Option<i64>,
            /// Applies only alone, excluding every other promotion of the sale. Default false.
            exclusive: Option<bool>,
            /// The stores it runs in, at least one; absent: every store.
            #[schema(value_type = Option<Vec<Text>>, min_items = 1)]
            #[serde(skip_serializing_if = "Option::is_none")]
            store_ids: Option<Vec<StoreId>>,
            /// Only for sales whose customer is in one of these groups (staff, trade prices), at
            /// least one; absent: every sale.
            #[schema(value_type = Option<Vec<GroupName>>, min_items = 1, max_items = 50)]
            #[serde(skip_serializing_if = "Option::is_none")]
            customer_groups: Option<Vec<String>>,
            /// Default true; the deactivate operation turns it off.
            active: Option<bool>,
            /// At least one; each article in one component only.
            #[schema(min_items = 1)]
            components: Vec<ComponentBody>,
            #[schema(value_type = i64, minimum = 0, maximum = 9007199254740991_i64)]
            price_cents: Cents,
        }

        /// `percentBps` off the named products (absent: the whole basket) once their subtotal
        /// reaches `minSubtotalCents`.
        #[derive(Serialize, utoipa::ToSchema)]
        #[serde(rename_all = "camelCase")]
        pub struct $percent_off {
            #[schema(inline)]
            r#type: PercentOffType,
            #[doc = $id_doc]
            #[schema(value_type = $id_schema, required = $required)]
            id: $id,
            #[schema(value_type = Text)]
            name: String,
            #[schema(value_type = Instant)]
            valid_from: Timestamp,
            /// Not before `validFrom`.
            #[schema(value_type = Instant)]
            valid_until: Timestamp,
            /// Higher first. Default 0.
            #[schema(minimum = -9007199254740991_i64, maximum = 9007199254740991_i64)]
            priority: Option<i64>,
            /// Applies only alone, excluding every other promotion of the sale. Default false.
            exclusive: Option<bool>,
            /// The stores it runs in, at least one; absent: every store.
            #[schema(value_type = Option<Vec<Text>>, min_items = 1)]
            #[serde(skip_serializing_if = "Option::is_none")]
            store_ids: Option<Vec<StoreId>>,
            /// Only for sales whose customer is in one of these groups (staff, trade prices), at
            /// least one; absent: every sale.
            #[schema(value_type = Option<Vec<GroupName>>, min_items = 1, max_items = 50)]
            #[serde(skip_serializing_if = "Option::is_none")]
            customer_groups: Option<Vec<String>>,
            /// Default true; the deactivate operation turns it off.
            active: Option<bool>,
            /// The articles it takes off, at least one; absent: the whole basket.
            #[schema(value_type = Option<Vec<SkuIdText>>, min_items = 1)]
            #[serde(skip_serializing_if = "Option::is_none")]
            product_ids: Option<Vec<SkuId>>,
            #[schema(value_type = i64, minimum = 1, maximum = 10000)]
            percent_bps: Bps,
            #[schema(value_type = Option<i64>, minimum = 0, maximum = 9007199254740991_i64)]
            #[serde(skip_serializing_if = "Option::is_none")]
            min_subtotal_cents: Option<Cents>,
        }

        impl FromBody for $union {
            fn from_body(root: &Obj<'_>) -> Option<Self> {
                let id = <$id as RuleId>::read(root);
                let kind = root.required("type", |f| f.one_of(&KINDS));
                let common = CommonRead::read(root);
                let mechanics = kind.and_then(|kind| mechanics(kind, root));
                let common = common.finish(root);
                let (id, common, mechanics) = (id?, common?, mechanics?);
                let Common { name, valid_from, valid_until, priority, exclusive, store_ids, customer_groups, active } = common;
                Some(match mechanics {
                    MechanicsBody::Bogo { buy, get, max_applications } => $union::Bogo($bogo {
                        r#type: BogoType::Bogo, id, name, valid_from, valid_until, priority, exclusive, store_ids,
                        customer_groups, active, buy, get, max_applications,
                    }),
                    MechanicsBody::Bundle { components, price_cents } => $union::Bundle($bundle {
                        r#type: BundleType::Bundle, id, name, valid_from, valid_until, priority, exclusive, store_ids,
                        customer_groups, active, components, price_cents,
                    }),
                    MechanicsBody::PercentOff { product_ids, percent_bps, min_subtotal_cents } => {
                        $union::PercentOff($percent_off {
                            r#type: PercentOffType::PercentOff, id, name, valid_from, valid_until, priority,
                            exclusive, store_ids, customer_groups, active, product_ids, percent_bps,
                            min_subtotal_cents,
                        })
                    }
                })
            }
        }

        impl $union {
            /// The rule the body states, named by `path` where the path names it.
            pub fn into_rule(self, path: <$id as RuleId>::Path) -> promotions::PromotionRule {
                let (id, common, mechanics) = match self {
                    $union::Bogo($bogo {
                        r#type: BogoType::Bogo, id, name, valid_from, valid_until, priority, exclusive, store_ids,
                        customer_groups, active, buy, get, max_applications,
                    }) => (id, Common { name, valid_from, valid_until, priority, exclusive, store_ids, customer_groups, active },
                           Mechanics::Bogo { buy: buy.into(), get: get.into(), max_applications }),
                    $union::Bundle($bundle {
                        r#type: BundleType::Bundle, id, name, valid_from, valid_until, priority, exclusive,
                        store_ids, customer_groups, active, components, price_cents,
                    }) => (id, Common { name, valid_from, valid_until, priority, exclusive, store_ids, customer_groups, active },
                           Mechanics::Bundle { components: components.into_iter().map(Component::from).collect(), price_cents }),
                    $union::PercentOff($percent_off {
                        r#type: PercentOffType::PercentOff, id, name, valid_from, valid_until, priority,
                        exclusive, store_ids, customer_groups, active, product_ids, percent_bps,
                        min_subtotal_cents,
                    }) => (id, Common { name, valid_from, valid_until, priority, exclusive, store_ids, customer_groups, active },
                           Mechanics::PercentOff { product_ids: product_ids.map(Products::from), percent_bps, min_subtotal_cents }),
                };
                promotions::PromotionRule {
                    id: id.resolve(path),
                    name: common.name,
                    valid_from: common.valid_from,
                    valid_until: common.valid_until,
                    priority: common.priority.unwrap_or(0),
                    exclusive: common.exclusive.unwrap_or(false),
                    store_ids: common.store_ids,
                    customer_groups: common.customer_groups.map(|groups| groups.into_iter().collect()),
                    active: common.active.unwrap_or(true),
                    mechanics,
                }
            }
        }
    };
}

rule_shapes!(PromotionRule, BogoRule, BundleRule, PercentOffRule,
    id: PromotionId, Text, required: true, "The rule's id: the upsert creates or replaces the rule it names.",
    "A promotion rule: one of three shapes selected by `type`.");

rule_shapes!(PromotionRuleReplacement, BogoRuleReplacement, BundleRuleReplacement, PercentOffRuleReplacement,
    id: Option<PromotionId>, Option<Text>, required: false, "Optional; if present, overwritten by the path's id.",
    "The whole new content of a rule: one of three shapes selected by `type`. Every field absent \
     is gone after the replace.");

/// A stored rule as answered: every default stated.
impl From<&promotions::PromotionRule> for PromotionRule {
    fn from(rule: &promotions::PromotionRule) -> PromotionRule {
        let id = rule.id.clone();
        let name = rule.name.clone();
        let (valid_from, valid_until) = (rule.valid_from, rule.valid_until);
        let (priority, exclusive, active) = (Some(rule.priority), Some(rule.exclusive), Some(rule.active));
        let store_ids = rule.store_ids.clone();
        let customer_groups = rule
            .customer_groups
            .as_ref()
            .map(|groups| groups.iter().cloned().collect::<Vec<_>>());
        match &rule.mechanics {
            Mechanics::Bogo {
                buy,
                get,
                max_applications,
            } => PromotionRule::Bogo(BogoRule {
                r#type: BogoType::Bogo,
                id,
                name,
                valid_from,
                valid_until,
                priority,
                exclusive,
                store_ids,
                customer_groups,
                active,
                buy: BuySideBody {
                    product_ids: buy.product_ids.to_vec(),
                    quantity: buy.quantity,
                },
                get: GetSideBody {
                    product_ids: get.product_ids.to_vec(),
                    quantity: get.quantity,
                    percent_bps: get.percent_bps,
                },
                max_applications: *max_applications,
            }),
            Mechanics::Bundle {
                components,
                price_cents,
            } => PromotionRule::Bundle(BundleRule {
                r#type: BundleType::Bundle,
                id,
                name,
                valid_from,
                valid_until,
                priority,
                exclusive,
                store_ids,
                customer_groups,
                active,
                components: components
                    .iter()
                    .map(|component| ComponentBody {
                        product_id: component.product_id.clone(),
                        quantity: component.quantity,
                    })
                    .collect(),
                price_cents: *price_cents,
            }),
            Mechanics::PercentOff {
                product_ids,
                percent_bps,
                min_subtotal_cents,
            } => PromotionRule::PercentOff(PercentOffRule {
                r#type: PercentOffType::PercentOff,
                id,
                name,
                valid_from,
                valid_until,
                priority,
                exclusive,
                store_ids,
                customer_groups,
                active,
                product_ids: product_ids.as_ref().map(|products| products.to_vec()),
                percent_bps: *percent_bps,
                min_subtotal_cents: *min_subtotal_cents,
            }),
        }
    }
}

#[derive(Clone, Copy, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum BogoType {
    Bogo,
}

#[derive(Clone, Copy, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum BundleType {
    Bundle,
}

#[derive(Clone, Copy, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum PercentOffType {
    PercentOff,
}

/// The units that must be bought.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BuySideBody {
    /// At least one article.
    #[schema(value_type = Vec<SkuIdText>, min_items = 1)]
    product_ids: Vec<SkuId>,
    #[schema(minimum = 1, maximum = 9007199254740991_i64)]
    quantity: i64,
}

/// The units that get the reduction.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GetSideBody {
    /// At least one article.
    #[schema(value_type = Vec<SkuIdText>, min_items = 1)]
    product_ids: Vec<SkuId>,
    #[schema(minimum = 1, maximum = 9007199254740991_i64)]
    quantity: i64,
    #[schema(value_type = i64, minimum = 1, maximum = 10000)]
    percent_bps: Bps,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ComponentBody {
    #[schema(value_type = SkuIdText)]
    product_id: SkuId,
    #[schema(minimum = 1, maximum = 9007199254740991_i64)]
    quantity: i64,
}

impl From<BuySideBody> for BuySide {
    fn from(side: BuySideBody) -> BuySide {
        BuySide {
            product_ids: side.product_ids.into(),
            quantity: side.quantity,
        }
    }
}

impl From<GetSideBody> for GetSide {
    fn from(side: GetSideBody) -> GetSide {
        GetSide {
            product_ids: side.product_ids.into(),
            quantity: side.quantity,
            percent_bps: side.percent_bps,
        }
    }
}

impl From<ComponentBody> for Component {
    fn from(component: ComponentBody) -> Component {
        Component {
            product_id: component.product_id,
            quantity: component.quantity,
        }
    }
}

#[derive(Clone, Copy)]
enum Kind {
    Bogo,
    Bundle,
    PercentOff,
}

const KINDS: [(&str, Kind); 3] = [
    ("bogo", Kind::Bogo),
    ("bundle", Kind::Bundle),
    ("percent_off", Kind::PercentOff),
];

/// What every shape holds besides its id and mechanics, as read.
struct Common {
    name: String,
    valid_from: Timestamp,
    valid_until: Timestamp,
    priority: Option<i64>,
    exclusive: Option<bool>,
    store_ids: Option<Vec<StoreId>>,
    customer_groups: Option<Vec<String>>,
    active: Option<bool>,
}

/// [`Common`]'s fields as read, each `None` once a problem was recorded.
struct CommonRead {
    name: Option<String>,
    valid_from: Option<Timestamp>,
    valid_until: Option<Timestamp>,
    priority: Option<Option<i64>>,
    exclusive: Option<Option<bool>>,
    store_ids: Option<Option<Vec<StoreId>>>,
    customer_groups: Option<Option<Vec<String>>>,
    active: Option<Option<bool>>,
}

impl CommonRead {
    fn read(root: &Obj<'_>) -> CommonRead {
        CommonRead {
            name: root.required("name", |f| f.text()),
            valid_from: root.required("validFrom", |f| f.instant(Zone::UtcOrOffset)),
            valid_until: root.required("validUntil", |f| f.instant(Zone::UtcOrOffset)),
            priority: root.optional("priority", |f| f.integer(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER)),
            exclusive: root.optional("exclusive", |f| f.boolean()),
            store_ids: root.optional("storeIds", |f| non_empty(f, |s| s.parse_text(StoreId::parse))),
            customer_groups: root.optional("customerGroups", |f| {
                if f.value().as_array().is_some_and(Vec::is_empty) {
                    return f.fail("must not be empty");
                }
                group_names(f)
            }),
            active: root.optional("active", |f| f.boolean()),
        }
    }

    /// The fields, once the period they state is one.
    fn finish(self, root: &Obj<'_>) -> Option<Common> {
        let (valid_from, valid_until) = (self.valid_from?, self.valid_until?);
        if valid_until < valid_from {
            return root.fail("validUntil", crate::fields::UNTIL_BEFORE_FROM);
        }
        Some(Common {
            name: self.name?,
            valid_from,
            valid_until,
            priority: self.priority?,
            exclusive: self.exclusive?,
            store_ids: self.store_ids?,
            customer_groups: self.customer_groups?,
            active: self.active?,
        })
    }
}

/// The fields of one shape's mechanics, as read.
enum MechanicsBody {
    Bogo {
        buy: BuySideBody,
        get: GetSideBody,
        max_applications: Option<i64>,
    },
    Bundle {
        components: Vec<ComponentBody>,
        price_cents: Cents,
    },
    PercentOff {
        product_ids: Option<Vec<SkuId>>,
        percent_bps: Bps,
        min_subtotal_cents: Option<Cents>,
    },
}

fn mechanics(kind: Kind, root: &Obj<'_>) -> Option<MechanicsBody> {
    match kind {
        Kind::Bogo => bogo(root),
        Kind::Bundle => bundle(root),
        Kind::PercentOff => percent_off(root),
    }
}

/// An array with at least one element, each parsed by `each`.
fn non_empty<'a, T>(field: Field<'a>, each: impl FnMut(Field<'a>) -> Option<T>) -> Option<Vec<T>> {
    if field.value().as_array().is_some_and(Vec::is_empty) {
        return field.fail("must not be empty");
    }
    field.array(each)
}

fn products(field: Field<'_>) -> Option<Vec<SkuId>> {
    non_empty(field, |p| p.parse_text(SkuId::parse))
}

fn quantity(field: Field<'_>) -> Option<i64> {
    field.integer(1, MAX_SAFE_INTEGER)
}

fn bogo(root: &Obj<'_>) -> Option<MechanicsBody> {
    let buy = root.required("buy", |f| {
        let side = f.object()?;
        let ids = side.required("productIds", products);
        let quantity = side.required("quantity", quantity);
        Some(BuySideBody {
            product_ids: ids?,
            quantity: quantity?,
        })
    });
    let get = root.required("get", |f| {
        let side = f.object()?;
        let ids = side.required("productIds", products);
        let quantity = side.required("quantity", quantity);
        let percent = side.required("percentBps", |f| f.bps(1));
        Some(GetSideBody {
            product_ids: ids?,
            quantity: quantity?,
            percent_bps: percent?,
        })
    });
    let max_applications = root.optional("maxApplications", quantity);
    Some(MechanicsBody::Bogo {
        buy: buy?,
        get: get?,
        max_applications: max_applications?,
    })
}

fn bundle(root: &Obj<'_>) -> Option<MechanicsBody> {
    let mut seen = HashSet::new();
    let components = root.required("components", |f| {
        non_empty(f, |c| {
            let component = c.object()?;
            let product = component.required("productId", |f| f.parse_text(SkuId::parse));
            let product = match product {
                Some(id) if !seen.insert(id.clone()) => {
                    component.fail("productId", "appears in another component; give it one quantity")
                }
                other => other,
            };
            let quantity = component.required("quantity", quantity);
            Some(ComponentBody {
                product_id: product?,
                quantity: quantity?,
            })
        })
    });
    let price = root.required("priceCents", |f| f.cents());
    Some(MechanicsBody::Bundle {
        components: components?,
        price_cents: price?,
    })
}

fn percent_off(root: &Obj<'_>) -> Option<MechanicsBody> {
    let product_ids = root.optional("productIds", products);
    let percent = root.required("percentBps", |f| f.bps(1));
    let minimum = root.optional("minSubtotalCents", |f| f.cents());
    Some(MechanicsBody::PercentOff {
        product_ids: product_ids?,
        percent_bps: percent?,
        min_subtotal_cents: minimum?,
    })
}
