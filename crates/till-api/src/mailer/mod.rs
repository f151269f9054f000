//! Receipts sent by e-mail (docs/receipts.md, "By e-mail"), running on every node when a mail
//! server is configured.
//!
//! The database decides who sends what: every few milliseconds a node claims the sends that
//! are due, each under a lease no other node can take until it runs out, and sends each on a
//! task of its own over a pool of SMTP connections. A task records how its attempt went only
//! while its lease holds; a node that dies loses its leases, and the sends it held are tried
//! again by whichever node claims them next. A mail the server took just before a node died
//! and whose outcome was not recorded is sent again: a receipt is sent at least once.

mod letter;

use crate::state::{AppState, MailSettings};
use crate::worker::{StopSignal, Worker};
use jiff::Timestamp;
use lettre::message::Mailbox;
use lettre::transport::smtp::PoolConfig;
use lettre::{AsyncSmtpTransport, AsyncTransport, Tokio1Executor};
use std::sync::Arc;
use std::time::Duration;
use till_app::e_receipts::{ClaimedSend, Letter};
use till_core::e_receipt::MailFailure;
use tokio::task::JoinSet;

/// How often a node looks for sends that are due.
const CLAIM_EVERY: Duration = Duration::from_millis(50);

/// How long a node waits after a claim the database refused.
const CLAIM_AGAIN_AFTER: Duration = Duration::from_secs(1);

/// Sends one node has under way at once, and the SMTP connections it keeps for them.
const MOST_AT_ONCE: usize = 16;

/// The longest one SMTP command may wait for the server.
const SMTP_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a claim holds a send: an attempt, its every command timing out, fits in it.
const LEASE: Duration = Duration::from_secs(300);

/// What every send task of a node shares.
struct Context {
    state: AppState,
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
}

/// Why the mailer cannot start: the settings were checked when the configuration was read.
#[derive(Debug, thiserror::Error)]
pub enum MailerError {
    #[error("TILL_SMTP_URL does not read as an SMTP URL")]
    Url,
    #[error("TILL_SMTP_FROM is not a mailbox")]
    From,
}

/// The transport and sender `settings` name, as [`Mailer::start`] uses them.
pub fn check(settings: &MailSettings) -> Result<(), MailerError> {
    transport(settings)?;
    settings.from.parse::<Mailbox>().map_err(|_| MailerError::From)?;
    Ok(())
}

fn transport(settings: &MailSettings) -> Result<AsyncSmtpTransport<Tokio1Executor>, MailerError> {
    // lettre's rustls uses the process's crypto provider; ring is ours. Installing twice is a
    // harmless no-op error.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let builder = AsyncSmtpTransport::<Tokio1Executor>::from_url(&settings.url).map_err(|_| MailerError::Url)?;
    let pool = PoolConfig::new().max_size(u32::try_from(MOST_AT_ONCE).unwrap_or(u32::MAX));
    Ok(builder.timeout(Some(SMTP_TIMEOUT)).pool_config(pool).build())
}

/// This node's mailer, running until [`Mailer::stop`].
pub struct Mailer {
    worker: Worker,
}

impl Mailer {
    /// Starts sending when the configuration names a mail server; `None` when it names none.
    pub fn start(state: &AppState) -> Option<Mailer> {
        let settings = state.config().mail.as_ref()?;
        let mut worker = Worker::default();
        match (transport(settings), settings.from.parse::<Mailbox>()) {
            (Ok(transport), Ok(from)) => {
                let context = Arc::new(Context {
                    state: state.clone(),
                    transport,
                    from,
                });
                worker.spawn(|stop| run(context, stop));
            }
            _ => tracing::error!("the mailer cannot start: its settings do not read"),
        }
        Some(Mailer { worker })
    }

    /// Stops claiming, lets the sends under way finish and record how they went, then
    /// returns.
    pub async fn stop(self) {
        self.worker.stop().await;
    }
}

async fn run(context: Arc<Context>, mut stop: StopSignal) {
    let mut tasks = JoinSet::new();
    loop {
        while tasks.try_join_next().is_some() {}
        let room = MOST_AT_ONCE.saturating_sub(tasks.len());
        let mut pause = CLAIM_EVERY;
        if room > 0 {
            let now = Timestamp::now();
            let until = now.checked_add(jiff::SignedDuration::try_from(LEASE).unwrap_or_default());
            let claimed = till_app::e_receipts::claim(
                context.state.app(),
                now,
                until.unwrap_or(Timestamp::MAX),
                i64::try_from(room).unwrap_or(1),
            )
            .await;
            match claimed {
                Ok(claimed) => {
                    // A full claim: more may be due, so look again at once.
                    if claimed.len() == room {
                        pause = Duration::ZERO;
                    }
                    for send in claimed {
                        tasks.spawn(deliver(context.clone(), send));
                    }
                }
                Err(error) => {
                    tracing::warn!(%error, "receipt sends could not be claimed; trying again");
                    pause = CLAIM_AGAIN_AFTER;
                }
            }
        }
        tokio::select! {
            _ = tokio::time::sleep(pause) => {}
            // A send that finishes makes room.
            Some(_) = tasks.join_next(), if room == 0 => {}
            _ = stop.changed() => break,
        }
    }
    while tasks.join_next().await.is_some() {}
}

/// One attempt at one send, recorded under its lease.
async fn deliver(context: Arc<Context>, send: ClaimedSend) {
    let app = context.state.app();
    let result = match till_app::e_receipts::letter(app, &send).await {
        Ok(Letter::Deliver { to, receipt }) => match letter::message(&context.from, &to, &receipt) {
            Some(message) => context.transport.send(message).await.map(|_| ()).map_err(|error| {
                tracing::warn!(send = send.record.id.as_str(), %error, "a receipt's e-mail did not go");
                failure_of(&error)
            }),
            None => Err(MailFailure::Rejected),
        },
        Ok(Letter::Undeliverable(failure)) => Err(failure),
        Err(error) => {
            // Left to its lease: another claim tries it again once it runs out.
            tracing::warn!(send = send.record.id.as_str(), %error, "a receipt to e-mail could not be read");
            return;
        }
    };
    crate::metrics::mail_attempt(result);
    match till_app::e_receipts::record_attempt(app, &send, result, Timestamp::now()).await {
        Ok(true) => {}
        Ok(false) => tracing::warn!(
            send = send.record.id.as_str(),
            "a receipt send's lease ran out before its outcome was recorded"
        ),
        Err(error) => {
            tracing::warn!(send = send.record.id.as_str(), %error, "a receipt send's outcome could not be recorded")
        }
    }
}

/// How an SMTP exchange that failed failed: a refusal for now or for good by the server's
/// reply, else no exchange at all.
fn failure_of(error: &lettre::transport::smtp::Error) -> MailFailure {
    if error.is_permanent() {
        MailFailure::Rejected
    } else if error.is_transient() {
        MailFailure::Deferred
    } else {
        MailFailure::Unreachable
    }
}
