use crate::harness::{CASHIER, MANAGER, PIN, REGISTER, Till, refusal, sale, selling, session_of, sku};
use till_app::elevation::{GrantRequest, asking_till, request_grant};
use till_app::finalize::finalize;
use till_app::refusal::Unapproved;
use till_app::secret::token_hash;
use till_app::{Clock, Error, Refusal};
use till_core::fiscal::payload::Period;
use till_core::ids::{Subject, TransactionId};
use till_core::money::Cents;
use till_core::sale::{DeclaredDiscount, DeclaredKind, DiscountReason, SaleType};
use till_store::elevation::GrantOperation;
use till_store::{Rule, StoreError};

#[tokio::test]
async fn a_sale_commits_once_and_its_replay_answers_the_stored_body() {
    let (till, cashier, article) = selling(1250).await;

    let booked = till
        .finalize(&cashier, sale("t-1", &cashier, &article, 2, 1250, 2500))
        .await
        .unwrap();
    assert_eq!(booked.body, r#"{"sale":"t-1","total":2500}"#);
    assert!(!booked.replayed);

    let again = till
        .finalize(&cashier, sale("t-1", &cashier, &article, 2, 1250, 2500))
        .await
        .unwrap();
    assert_eq!(
        (again.body, again.replayed),
        (booked.body, true),
        "the same body, marked a replay"
    );

    let other = till
        .finalize(&cashier, sale("t-1", &cashier, &article, 1, 1250, 1250))
        .await;
    assert_eq!(refusal(other), Refusal::DifferentContent);
}

#[tokio::test]
async fn a_replay_is_answered_even_once_its_session_has_closed() {
    let till = Till::new().await;
    let article = sku(1);
    till.article(&article, 1000).await;
    let token = till.open(CASHIER, PIN).await.unwrap().token;
    let cashier = till.principal(&token).await;
    let booked = till
        .finalize(&cashier, sale("t-1", &cashier, &article, 1, 1000, 1000))
        .await
        .unwrap();
    till_app::sessions::close(&till.app, session_of(&cashier), Vec::new())
        .await
        .unwrap();

    // A request resolved its token before the close and commits after it: the store refuses,
    // and the session read again is closed. Without the instant it was rung, the sale is
    // refused...
    let raced = till
        .finalize(&cashier, sale("t-2", &cashier, &article, 1, 1000, 1000))
        .await;
    assert_eq!(refusal(raced), Refusal::SessionClosed(session_of(&cashier)));
    // ...and with it, as a till that was offline sends it, it is booked late.
    let mut queued = sale("t-3", &cashier, &article, 1, 1000, 1000);
    queued.issued_at = Some(till.clock.now());
    let late = till.finalize(&cashier, queued).await.unwrap();
    assert!(!late.replayed);

    // The till's next requests: its token still authenticates, to replay what it sent.
    let cashier = till.principal(&token).await;
    let replay = till
        .finalize(&cashier, sale("t-1", &cashier, &article, 1, 1000, 1000))
        .await
        .unwrap();
    assert_eq!((replay.body, replay.replayed), (booked.body, true));

    let new = till
        .finalize(&cashier, sale("t-2", &cashier, &article, 1, 1000, 1000))
        .await;
    assert_eq!(refusal(new), Refusal::SessionClosed(session_of(&cashier)));
}

#[tokio::test]
async fn a_sale_whose_tenders_miss_the_total_is_refused_and_names_the_price_the_till_had_wrong() {
    let (till, cashier, article) = selling(1000).await;

    let stale_price = till
        .finalize(&cashier, sale("t-1", &cashier, &article, 1, 900, 900))
        .await;
    let Refusal::Settlement { differing, .. } = refusal(stale_price) else {
        panic!("a settlement refusal");
    };
    assert_eq!(differing.len(), 1);
    assert_eq!((differing[0].till.get(), differing[0].catalog.get()), (900, 1000));
    assert_eq!(
        till.store
            .find_sale(&TransactionId::parse("t-1").unwrap())
            .await
            .unwrap(),
        None,
        "nothing committed"
    );
}

#[tokio::test]
async fn a_managers_grant_is_spent_only_by_the_sale_that_commits() {
    let (till, cashier, article) = selling(1000).await;
    let request = GrantRequest {
        manager: Subject::parse(MANAGER).unwrap(),
        pin: PIN.to_owned(),
        operation: GrantOperation::DiscountTicket,
        amount: Some(100),
        percent: None,
    };
    let grant = request_grant(&till.app, asking_till(&cashier).unwrap(), &request)
        .await
        .unwrap();
    let token = Some(grant.token.as_bytes());
    let discounted = |id: &str, paid: i64| {
        let mut sale = sale(id, &cashier, &article, 1, 1000, paid);
        sale.declared_discounts = vec![DeclaredDiscount {
            id: "d1".to_owned(),
            reason: DiscountReason::ManagerGoodwill,
            kind: DeclaredKind::TicketAmount {
                amount: Cents::new(100).unwrap(),
            },
        }];
        sale
    };

    let alone = till.finalize(&cashier, discounted("t-0", 900)).await;
    assert!(matches!(refusal(alone), Refusal::DiscountsBeyondLimit { .. }));

    let wrong_tender = finalize(&till.app, &cashier, discounted("t-1", 1000), token).await;
    assert!(matches!(refusal(wrong_tender), Refusal::Settlement { .. }));
    assert!(
        spent_at(&till, &grant.token).await.is_none(),
        "a refused sale leaves the grant whole"
    );

    finalize(&till.app, &cashier, discounted("t-2", 900), token)
        .await
        .unwrap();
    assert!(
        spent_at(&till, &grant.token).await.is_some(),
        "the committed sale spent it"
    );

    let again = finalize(&till.app, &cashier, discounted("t-3", 900), token).await;
    assert_eq!(refusal(again), Refusal::DiscountsNotApproved(Unapproved::Spent));
}

#[tokio::test]
async fn a_return_without_a_receipt_needs_an_approval() {
    let (till, cashier, article) = selling(1000).await;
    let mut unreceipted = sale("t-1", &cashier, &article, 1, 1000, 1000);
    unreceipted.kind = SaleType::Return;

    let outcome = till.finalize(&cashier, unreceipted).await;
    assert_eq!(refusal(outcome), Refusal::ReturnNeedsApproval);
}

#[tokio::test]
async fn a_sale_past_a_period_closed_early_is_refused_by_the_store() {
    let (till, cashier, article) = selling(1000).await;
    let rung = till.clock.now();
    // A day not over closes early once its session is closed.
    let store = &till.store;
    let open = store.close_period(REGISTER, Period::Day, till.clock.now()).await;
    assert!(
        matches!(open, Err(StoreError::Rule(Rule::SessionOpenOnDay { ref session, .. })) if *session == session_of(&cashier)),
        "{open:?}"
    );
    till_app::sessions::close(&till.app, session_of(&cashier), Vec::new())
        .await
        .unwrap();
    store
        .close_period(REGISTER, Period::Day, till.clock.now())
        .await
        .unwrap();

    // A sale the till rang before the close, arriving late, finds the day closed.
    let mut late = sale("t-1", &cashier, &article, 1, 1000, 1000);
    late.issued_at = Some(rung);
    let outcome = till.finalize(&cashier, late).await;
    assert!(
        matches!(outcome, Err(Error::Store(StoreError::Rule(Rule::PeriodClosed { .. })))),
        "{outcome:?}"
    );
}

async fn spent_at(till: &Till, token: &str) -> Option<jiff::Timestamp> {
    let grant = till.store.grant_by_token(&token_hash(token)).await.unwrap();
    grant.expect("the grant is stored").spent_at
}
