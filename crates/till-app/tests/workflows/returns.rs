use crate::harness::{CASHIER, REGISTER, STORE, Till, cash, refusal, sale, selling, session_of};
use till_app::returns::give_back;
use till_app::{Booked, Error, Principal, Refusal};
use till_core::ids::{StoreId, Subject, TransactionId};
use till_core::returns::{ReturnError, ReturnRequest, ReturnedUnits};

fn giving_back(id: &str, till: &Principal, of: &str, units: i64, refund: i64) -> ReturnRequest {
    ReturnRequest {
        transaction_id: TransactionId::parse(id).unwrap(),
        original_transaction_id: TransactionId::parse(of).unwrap(),
        number: format!("N-{id}"),
        store_id: StoreId::parse(STORE).unwrap(),
        seller_id: Subject::parse(CASHIER).unwrap(),
        session_id: session_of(till),
        register_id: None,
        lines: vec![ReturnedUnits {
            line_id: "l1".to_owned(),
            units,
        }],
        tenders: cash(refund),
    }
}

/// Gives back `units` of line `l1` of sale `of` as return `id`, refunded `refund` in cash.
async fn give(till: &Till, cashier: &Principal, id: &str, of: &str, units: i64, refund: i64) -> Result<Booked, Error> {
    give_back(&till.app, cashier, &giving_back(id, cashier, of, units, refund)).await
}

#[tokio::test]
async fn a_return_is_numbered_as_a_credit_note_and_cannot_take_back_more_than_remains() {
    let (till, cashier, article) = selling(1000).await;
    till.finalize(&cashier, sale("t-1", &cashier, &article, 2, 1000, 2000))
        .await
        .unwrap();

    let first = give(&till, &cashier, "r-1", "t-1", 1, 1000).await.unwrap();
    assert_eq!(
        first.body,
        format!(r#"{{"return":"r-1","of":"t-1","total":-1000,"creditNote":"AV-{REGISTER}-000002"}}"#),
        "the credit note is numbered by the return's place in the register's chain"
    );

    let too_many = give(&till, &cashier, "r-2", "t-1", 2, 2000).await;
    assert_eq!(
        refusal(too_many),
        Refusal::Return {
            error: ReturnError::TooMany {
                line_id: "l1".to_owned(),
                quantity: 2,
                remaining: 1,
            },
            original: TransactionId::parse("t-1").unwrap(),
        }
    );

    give(&till, &cashier, "r-2", "t-1", 1, 1000)
        .await
        .expect("the unit left may still be returned");
    let none_left = give(&till, &cashier, "r-3", "t-1", 1, 1000).await;
    assert!(matches!(
        refusal(none_left),
        Refusal::Return {
            error: ReturnError::TooMany { remaining: 0, .. },
            ..
        }
    ));

    let replay = give(&till, &cashier, "r-1", "t-1", 1, 1000).await.unwrap();
    assert_eq!((replay.body, replay.replayed), (first.body, true));
}

#[tokio::test]
async fn a_return_names_a_sale_that_exists_and_pays_out_its_refund_exactly() {
    let (till, cashier, article) = selling(1000).await;
    till.finalize(&cashier, sale("t-1", &cashier, &article, 1, 1000, 1000))
        .await
        .unwrap();

    let unknown = give(&till, &cashier, "r-1", "t-9", 1, 1000).await;
    assert_eq!(
        refusal(unknown),
        Refusal::NoOriginal(TransactionId::parse("t-9").unwrap())
    );

    let short = give(&till, &cashier, "r-2", "t-1", 1, 900).await;
    assert!(matches!(refusal(short), Refusal::RefundMismatch { refund, .. } if refund.get() == 1000));

    give(&till, &cashier, "r-3", "t-1", 1, 1000).await.unwrap();
    let of_a_return = give(&till, &cashier, "r-4", "r-3", 1, 1000).await;
    assert_eq!(
        refusal(of_a_return),
        Refusal::OriginalIsReturn(TransactionId::parse("r-3").unwrap())
    );
}
