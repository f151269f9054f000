use crate::harness::{CASHIER, PIN, refusal, sale, selling, session_of};
use till_app::Refusal;
use till_app::drawer::{MovementRequest, move_cash, x_report};
use till_app::sessions::close;
use till_core::drawer::{Count, MovementKind};
use till_core::ids::MovementId;
use till_core::money::Cents;

fn movement(id: &str, kind: MovementKind, amount: i64) -> MovementRequest {
    MovementRequest {
        movement_id: MovementId::parse(id).unwrap(),
        kind,
        amount: Cents::new(amount).unwrap(),
        reason: None,
    }
}

#[tokio::test]
async fn the_x_report_is_what_the_z_report_then_seals_with_the_count() {
    let (till, cashier, article) = selling(1_000).await;
    till.finalize(&cashier, sale("t1", &cashier, &article, 2, 1_000, 2_000))
        .await
        .unwrap();
    let session = session_of(&cashier);
    let moved = move_cash(
        &till.app,
        &cashier,
        session.clone(),
        movement("m1", MovementKind::PaidOut, 300),
    )
    .await
    .unwrap();
    assert!(!moved.replayed);
    let again = move_cash(
        &till.app,
        &cashier,
        session.clone(),
        movement("m1", MovementKind::PaidOut, 300),
    )
    .await
    .unwrap();
    assert!(
        again.replayed,
        "the same movement sent again is answered, not recorded again"
    );
    assert_eq!(again.record, moved.record);
    assert_eq!(
        refusal(
            move_cash(
                &till.app,
                &cashier,
                session.clone(),
                movement("m1", MovementKind::PaidOut, 301)
            )
            .await
        ),
        Refusal::MovementIdTaken(MovementId::parse("m1").unwrap())
    );

    let x = serde_json::to_value(x_report(&till.app, &cashier, session.clone()).await.unwrap()).unwrap();
    assert_eq!(x["expectedCashCents"], 2_000 - 300);
    let counted = vec![Count {
        method: "cash".into(),
        counted: Cents::new(1_650).unwrap(),
    }];
    let z = close(&till.app, session.clone(), counted).await.unwrap();
    for field in ["salesCount", "totalCents", "vat", "movements", "expectedCashCents"] {
        assert_eq!(x[field], z[field], "{field}");
    }
    assert_eq!(z["tenders"][0]["differenceCents"], -50);
    assert_eq!(
        refusal(x_report(&till.app, &cashier, session.clone()).await),
        Refusal::DrawerClosed(session)
    );
}

#[tokio::test]
async fn a_till_reaches_its_own_drawer_only() {
    let (till, cashier, _) = selling(1_000).await;
    let mine = session_of(&cashier);
    close(&till.app, mine.clone(), Vec::new()).await.unwrap();
    let next = till.open(CASHIER, PIN).await.unwrap();
    let other = till.principal(&next.token).await;
    assert_eq!(
        refusal(move_cash(&till.app, &other, mine.clone(), movement("m1", MovementKind::Drop, 100)).await),
        Refusal::DrawerOfAnotherSession {
            token: next.record.session_id.clone(),
            named: mine,
        }
    );
    move_cash(
        &till.app,
        &other,
        next.record.session_id,
        movement("m1", MovementKind::NoSale, 0),
    )
    .await
    .expect("its own drawer");
}
