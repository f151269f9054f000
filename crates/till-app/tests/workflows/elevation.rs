use crate::harness::{MANAGER, PIN, Till, refusal};
use std::time::Duration;
use till_app::elevation::{GrantRequest, asking_till, request_grant};
use till_app::refusal::PinHolder;
use till_app::{Credential, Principal, Refusal, Settings};
use till_core::grant::GrantSet;
use till_core::ids::Subject;
use till_store::elevation::GrantOperation;

fn asking(pin: &str, amount: i64) -> GrantRequest {
    GrantRequest {
        manager: Subject::parse(MANAGER).unwrap(),
        pin: pin.to_owned(),
        operation: GrantOperation::DiscountTicket,
        amount: Some(amount),
        percent: None,
    }
}

#[tokio::test]
async fn only_a_till_may_ask_for_an_approval() {
    let back_office = Principal {
        subject: Subject::parse("back-office").unwrap(),
        grants: GrantSet::all(),
        credential: Credential::Token,
    };
    assert_eq!(asking_till(&back_office).unwrap_err(), Refusal::NotATill);
}

#[tokio::test]
async fn wrong_pins_lock_the_manager_out_until_the_lockout_ends() {
    let settings = Settings {
        pin_max_failures: 3,
        pin_lockout: Duration::from_secs(600),
        ..Settings::default()
    };
    let till = Till::with(settings).await;
    let cashier = till.session().await;
    let asking_till = asking_till(&cashier).unwrap();

    for _ in 0..3 {
        let wrong = request_grant(&till.app, asking_till, &asking("0000", 100)).await;
        assert_eq!(refusal(wrong), Refusal::WrongPin(PinHolder::Manager));
    }
    let locked = request_grant(&till.app, asking_till, &asking(PIN, 100)).await;
    assert_eq!(
        refusal(locked),
        Refusal::LockedOut {
            holder: PinHolder::Manager,
            retry_after: 600,
        },
        "even the right PIN is not weighed while locked out"
    );

    till.clock.advance(Duration::from_secs(601));
    let granted = request_grant(&till.app, asking_till, &asking(PIN, 100)).await.unwrap();
    assert_eq!(granted.operation, GrantOperation::DiscountTicket);
    let events = till.store.elevation_events(Some(MANAGER), None, 10).await.unwrap();
    let outcomes: Vec<(&str, Option<&str>)> = events.iter().map(|e| (e.outcome.as_str(), e.code.as_deref())).collect();
    assert!(outcomes.contains(&("locked_out", Some("LOCKED_OUT"))), "{outcomes:?}");
    assert!(outcomes.iter().any(|(outcome, _)| *outcome == "issued"), "{outcomes:?}");
}

#[tokio::test]
async fn an_approval_the_cashier_does_not_need_is_refused() {
    let till = Till::new().await;
    let cashier = till.session().await;
    // A cashier may grant nothing alone by default; a reduction of nothing needs no approval.
    let needless = request_grant(&till.app, asking_till(&cashier).unwrap(), &asking(PIN, 0)).await;
    assert_eq!(refusal(needless), Refusal::NoElevationRequired);
}

#[tokio::test]
async fn a_closed_session_cannot_ask_for_an_approval() {
    let till = Till::new().await;
    let cashier = till.session().await;
    till.clock.advance(Settings::default().session_ttl);
    let late = request_grant(&till.app, asking_till(&cashier).unwrap(), &asking(PIN, 100)).await;
    assert!(matches!(refusal(late), Refusal::GrantSessionClosed(_)));
}
