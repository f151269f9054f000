use crate::harness::{CASHIER, PIN, REGISTER, Till, refusal};
use std::time::Duration;
use till_app::refusal::PinHolder;
use till_app::sessions::close;
use till_app::{Refusal, Settings};
use till_store::sessions::OpenRefusal;

#[tokio::test]
async fn a_till_has_one_open_session_at_a_time_and_a_close_answers_its_z_report() {
    let till = Till::new().await;
    let opened = till.open(CASHIER, PIN).await.unwrap();
    assert_eq!(opened.record.register_id.as_str(), REGISTER);
    assert!(opened.token.starts_with("pos_st_"));

    let second = till.open(CASHIER, PIN).await;
    assert_eq!(
        refusal(second),
        Refusal::Open(OpenRefusal::AlreadyOpen(opened.record.session_id.clone()))
    );

    let report = close(&till.app, opened.record.session_id.clone(), Vec::new())
        .await
        .unwrap();
    assert_eq!(report["sessionId"], opened.record.session_id.as_str());
    let again = close(&till.app, opened.record.session_id.clone(), Vec::new())
        .await
        .unwrap();
    assert_eq!(again, report, "closing twice answers the same report");
    till.open(CASHIER, PIN).await.expect("the till opens again once closed");
}

#[tokio::test]
async fn wrong_pins_lock_the_cashier_out_until_the_lockout_ends() {
    let settings = Settings {
        pin_max_failures: 2,
        pin_lockout: Duration::from_secs(300),
        ..Settings::default()
    };
    let till = Till::with(settings).await;
    for _ in 0..2 {
        assert_eq!(
            refusal(till.open(CASHIER, "1111").await),
            Refusal::WrongPin(PinHolder::Cashier)
        );
    }
    till.clock.advance(Duration::from_secs(100));
    assert_eq!(
        refusal(till.open(CASHIER, PIN).await),
        Refusal::LockedOut {
            holder: PinHolder::Cashier,
            retry_after: 200,
        }
    );
    till.clock.advance(Duration::from_secs(200));
    till.open(CASHIER, PIN).await.expect("the lockout has ended");
}

#[tokio::test]
async fn an_unknown_person_is_refused_like_a_wrong_pin() {
    let till = Till::new().await;
    assert_eq!(
        refusal(till.open("nobody", PIN).await),
        Refusal::WrongPin(PinHolder::Cashier)
    );
}
