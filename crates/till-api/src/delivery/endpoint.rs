//! One endpoint's deliveries, on a task of their own while this node holds its lease: the
//! events after its cursor, in feed order, a batch at a time, each sent once the one before it
//! was answered 2xx. The first failure ends the batch; the cursor passes what was delivered.

use super::Context;
use crate::routes::events::render_event;
use bytes::Bytes;
use jiff::Timestamp;
use std::time::Instant;
use till_core::events::FeedCursor;
use till_core::webhooks::{Failure, Next, Signer, WebhookUrl, delivered_through};
use till_store::feed::FeedEvent;
use till_store::webhooks::{Attempt, Claimed, Progress, Standing};
use tokio::sync::watch;

/// Events read and sent per batch; the cursor is written once per batch.
const BATCH: i64 = 100;

/// Attempts are pruned once an endpoint's cursor passes a multiple of this.
const PRUNE_EVERY: i64 = 1_000;

/// How one send ended.
enum Sent {
    Answered(Result<u16, Failure>),
    /// The node is stopping: the event counts as not sent.
    Stopped,
}

pub(super) async fn deliver(claimed: Claimed, context: std::sync::Arc<Context>, mut stop: watch::Receiver<bool>) {
    let Claimed {
        endpoint,
        secret,
        lease,
    } = claimed;
    let url = match WebhookUrl::parse(&endpoint.url) {
        Ok(url) => url,
        Err(refusal) => {
            tracing::error!(endpoint = %endpoint.id, %refusal, "a stored webhook URL does not read");
            return;
        }
    };
    let signer = secret.signer();
    let types = endpoint.types.clone().unwrap_or_default();
    let mut cursor = endpoint.delivered_through;
    let mut streak = endpoint.failing.map(|(streak, _)| streak);
    loop {
        let started = Instant::now();
        let read = async {
            let head = context.store.feed_head().await?;
            let events = context.store.events_after(cursor, BATCH, &types).await?;
            Ok::<_, till_store::StoreError>((head, events))
        };
        let (head, events) = match read.await {
            Ok(read) => read,
            Err(error) => {
                tracing::warn!(endpoint = %endpoint.id, %error, "the feed could not be read for a webhook");
                return;
            }
        };
        let read_to_end = events.len() < BATCH as usize;
        let positions: Vec<FeedCursor> = events.iter().map(|event| event.cursor).collect();
        let mut attempts = Vec::new();
        let mut failed = None;
        let mut cut = false;
        for event in events {
            if *stop.borrow() || started.elapsed() > context.batch_budget {
                cut = true;
                break;
            }
            let number = match (attempts.is_empty(), streak) {
                (true, Some(streak)) => streak.failures.saturating_add(1),
                _ => 1,
            };
            let event_id = event.id;
            let at = Timestamp::now();
            let clock = Instant::now();
            let sent = match send(&context, &url, &signer, event, &mut stop).await {
                Some(sent) => sent,
                None => {
                    tracing::error!(endpoint = %endpoint.id, event = event_id, "a stored event does not render");
                    return;
                }
            };
            let answer = match sent {
                Sent::Answered(answer) => answer,
                Sent::Stopped => {
                    cut = true;
                    break;
                }
            };
            attempts.push(Attempt {
                event_id,
                attempt: number,
                status: answer.map_or_else(Failure::status, Some),
                failure: answer.err(),
                at,
                duration: clock.elapsed(),
            });
            if let Err(failure) = answer {
                failed = Some(failure);
                break;
            }
        }
        let acknowledged = attempts.iter().filter(|attempt| attempt.failure.is_none()).count();
        let through = delivered_through(cursor, &positions, acknowledged, read_to_end, head);
        let now = Timestamp::now();
        let standing = match failed {
            None => Standing::Healthy,
            Some(failure) => {
                // A failure after deliveries in this batch starts a streak of its own.
                let before = if acknowledged == 0 { streak } else { None };
                match context.retry.after_failure(failure, before, now) {
                    Next::RetryAt { at, streak } => Standing::Failing {
                        streak,
                        failure,
                        retry_at: at,
                    },
                    Next::Disable { reason, streak } => Standing::Disabled {
                        reason,
                        streak,
                        failure,
                    },
                }
            }
        };
        streak = match standing {
            Standing::Failing { streak, .. } | Standing::Disabled { streak, .. } => Some(streak),
            Standing::Healthy => None,
        };
        let more = failed.is_none() && !*stop.borrow() && (cut || !read_to_end);
        let progress = Progress {
            delivered_through: through,
            attempts,
            standing,
            hold_until: more.then(|| context.lease_until(now)),
            prune: cursor.position() / PRUNE_EVERY != through.position() / PRUNE_EVERY,
            now,
        };
        match context.store.record_progress(&endpoint.id, &lease, progress).await {
            Ok(true) if more => cursor = through,
            Ok(_) => return,
            Err(error) => {
                // The lease runs out and the endpoint is taken again from its stored cursor:
                // what was delivered meanwhile is delivered again.
                tracing::warn!(endpoint = %endpoint.id, %error, "a webhook's progress could not be written");
                return;
            }
        }
    }
}

/// Renders, signs and sends one event; `None` when the event does not render.
async fn send(
    context: &Context,
    url: &WebhookUrl,
    signer: &Signer,
    event: FeedEvent,
    stop: &mut watch::Receiver<bool>,
) -> Option<Sent> {
    let id = format!("evt_{}", event.id);
    let body = render_event(event).ok()?;
    let timestamp = Timestamp::now().as_second();
    let signature = signer.sign(&id, timestamp, &body);
    let sending = context.sender.send(url, &id, timestamp, &signature, Bytes::from(body));
    Some(tokio::select! {
        answer = sending => Sent::Answered(answer),
        _ = stop.changed() => Sent::Stopped,
    })
}
