//! Stored value at the till: a tender drawing on a gift card, a credit note or points is
//! redeemed in the sale's commit, or the sale is refused by that tender and nothing is kept.

use crate::harness::{Till, refusal, sale, sku};
use till_app::{Error, Refusal, Settings};
use till_core::ids::{CustomerId, TenderReference};
use till_core::money::Cents;
use till_core::sale::{SaleRequest, TenderMethod};
use till_core::stored_value::{InstrumentCode, TenderProblem};
use till_store::stored_value::NewCard;
use till_store::{InstrumentRefusal, Rule, StoreError};

fn cents(value: i64) -> Cents {
    Cents::new(value).unwrap()
}

/// A till selling one article at 1000, with `settings`, and its cashier's session.
async fn till_with(settings: Settings) -> (Till, till_app::Principal, till_core::ids::SkuId) {
    let till = Till::with(settings).await;
    let (cashier, article) = (till.session().await, sku(1));
    till.article(&article, 1000).await;
    (till, cashier, article)
}

/// `request` paid wholly by one tender of `method` naming `reference`.
fn paid_by(mut request: SaleRequest, method: TenderMethod, reference: Option<&str>) -> SaleRequest {
    let tender = &mut request.tenders.tenders[0];
    tender.method = method;
    tender.reference = reference.map(|r| TenderReference::parse(r).unwrap());
    request
}

async fn issue(till: &Till, code: &str, balance: i64) {
    let card = NewCard {
        code: InstrumentCode::parse(code).unwrap(),
        balance: cents(balance),
        expires_at: None,
        store_ids: Vec::new(),
        now: till_app::Clock::now(&*till.clock),
    };
    till.store.issue_gift_card(card).await.unwrap();
}

fn tender_refusal<T: std::fmt::Debug>(outcome: Result<T, Error>) -> (usize, InstrumentRefusal) {
    match outcome {
        Err(Error::Store(StoreError::Rule(Rule::Tender { tender, why }))) => (tender, why),
        other => panic!("expected a tender refused by storage, got {other:?}"),
    }
}

const CARD: &str = "ABCDEFGHJKMNPQRS";

#[tokio::test]
async fn a_card_that_cannot_pay_refuses_the_sale_by_its_tender_and_keeps_nothing() {
    let (till, cashier, article) = till_with(Settings::default()).await;
    issue(&till, CARD, 1500).await;
    let short = paid_by(
        sale("t-1", &cashier, &article, 2, 1000, 2000),
        TenderMethod::GiftCard,
        Some(CARD),
    );
    assert_eq!(
        tender_refusal(till.finalize(&cashier, short).await),
        (0, InstrumentRefusal::Insufficient { balance: cents(1500) })
    );
    let unknown = paid_by(
        sale("t-2", &cashier, &article, 1, 1000, 1000),
        TenderMethod::GiftCard,
        Some("ZZZZZZZZZZZZZZZZ"),
    );
    assert_eq!(
        tender_refusal(till.finalize(&cashier, unknown).await),
        (0, InstrumentRefusal::Unknown)
    );
    let never_issued = paid_by(
        sale("t-3", &cashier, &article, 1, 1000, 1000),
        TenderMethod::CreditNote,
        Some("AV-till-1-000001"),
    );
    assert_eq!(
        tender_refusal(till.finalize(&cashier, never_issued).await),
        (0, InstrumentRefusal::Unknown)
    );
    let card = till
        .store
        .gift_card(&InstrumentCode::parse(CARD).unwrap(), None)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (card.balance, card.activities.len()),
        (cents(1500), 1),
        "nothing was spent"
    );
    let paid = paid_by(
        sale("t-4", &cashier, &article, 1, 1000, 1000),
        TenderMethod::GiftCard,
        Some(CARD),
    );
    till.finalize(&cashier, paid).await.unwrap();
    let card = till
        .store
        .gift_card(&InstrumentCode::parse(CARD).unwrap(), None)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(card.balance, cents(500));
}

#[tokio::test]
async fn points_are_spent_only_by_a_named_customer_in_whole_points() {
    let settings = Settings {
        loyalty_point_value_cents: 5,
        ..Settings::default()
    };
    let (till, cashier, article) = till_with(settings).await;
    let anonymous = paid_by(
        sale("t-1", &cashier, &article, 1, 1000, 1000),
        TenderMethod::Loyalty,
        None,
    );
    assert_eq!(
        refusal(till.finalize(&cashier, anonymous).await),
        Refusal::Tender {
            tender: 0,
            problem: TenderProblem::NoCustomer
        }
    );
    let odd_priced = sku(2);
    till.article(&odd_priced, 1003).await;
    let mut odd = paid_by(
        sale("t-2", &cashier, &odd_priced, 1, 1003, 1003),
        TenderMethod::Loyalty,
        None,
    );
    odd.customer_id = Some(CustomerId::parse("c-1").unwrap());
    assert_eq!(
        refusal(till.finalize(&cashier, odd).await),
        Refusal::Tender {
            tender: 0,
            problem: TenderProblem::NotWholePoints { point_value: 5 }
        }
    );
    let mut broke = paid_by(
        sale("t-3", &cashier, &article, 1, 1000, 1000),
        TenderMethod::Loyalty,
        None,
    );
    broke.customer_id = Some(CustomerId::parse("c-1").unwrap());
    assert_eq!(
        tender_refusal(till.finalize(&cashier, broke).await),
        (0, InstrumentRefusal::NotEnoughPoints { points: 0 })
    );
}

#[tokio::test]
async fn a_method_another_system_keeps_is_taken_unchecked_with_its_reference() {
    let settings = Settings {
        external_tenders: vec![TenderMethod::GiftCard],
        ..Settings::default()
    };
    let (till, cashier, article) = till_with(settings).await;
    let elsewhere = paid_by(
        sale("t-1", &cashier, &article, 1, 1000, 1000),
        TenderMethod::GiftCard,
        Some("PARTNER-42"),
    );
    till.finalize(&cashier, elsewhere).await.unwrap();
    let receipt = till
        .store
        .receipt(&till_core::ids::TransactionId::parse("t-1").unwrap())
        .await
        .unwrap()
        .unwrap();
    // Sealed with the sale, masked: a gift card's code is a bearer credential whoever keeps
    // its balance.
    let sealed = &receipt.sale.tenders[0];
    assert_eq!(sealed.reference, None);
    assert_eq!(sealed.reference_last4.as_deref(), Some("R-42"));
    assert!(sealed.reference_digest.is_some());
}
