//! One endpoint's deliveries, on a task of their own while this node holds its lease: the
//! events after its cursor, in feed order, a batch at a time, each sent once the one before it
//! was answered 2xx. The first failure ends the batch; the cursor passes what was delivered.

use super::Context;
use crate::routes::events::render_event;
use crate::worker::StopSignal;
use bytes::Bytes;
use jiff::Timestamp;
use std::sync::Arc;
use std::time::Instant;
use till_app::feed::FeedEvent;
use till_app::webhooks::{Attempt, Claimed, Progress, Standing, Unsent};
use till_core::events::FeedCursor;
use till_core::webhooks::{Failure, Next, RetryPolicy, Signer, Streak, WebhookUrl, delivered_through};

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

pub(super) async fn deliver(claimed: Claimed, context: Arc<Context>, mut stop: StopSignal) {
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
    let to = Target {
        id: &endpoint.id,
        url: &url,
        signer: secret.signer(),
    };
    let types = endpoint.types.clone().unwrap_or_default();
    let mut cursor = endpoint.delivered_through;
    let mut streak = endpoint.failing.map(|(streak, _)| streak);
    loop {
        let started = Instant::now();
        let Unsent { head, events } = match till_app::webhooks::unsent(context.app(), cursor, BATCH, &types).await {
            Ok(unsent) => unsent,
            Err(error) => {
                tracing::warn!(endpoint = %endpoint.id, %error, "the feed could not be read for a webhook");
                return;
            }
        };
        let read_to_end = events.len() < BATCH as usize;
        let positions: Vec<FeedCursor> = events.iter().map(|event| event.cursor).collect();
        let Some(batch) = send_batch(&context, &to, events, streak, started, &mut stop).await else {
            return;
        };
        let acknowledged = batch
            .attempts
            .iter()
            .filter(|attempt| attempt.failure.is_none())
            .count();
        let through = delivered_through(cursor, &positions, acknowledged, read_to_end, head);
        let now = Timestamp::now();
        // A failure after deliveries in the same batch starts a streak of its own.
        let before = if acknowledged == 0 { streak } else { None };
        let standing = standing_after(&context.retry, batch.failed, before, now);
        streak = match standing {
            Standing::Failing { streak, .. } | Standing::Disabled { streak, .. } => Some(streak),
            Standing::Healthy => None,
        };
        let more = batch.failed.is_none() && !*stop.borrow() && (batch.cut || !read_to_end);
        let progress = Progress {
            delivered_through: through,
            attempts: batch.attempts,
            standing,
            hold_until: more.then(|| context.lease_until(now)),
            prune: cursor.position() / PRUNE_EVERY != through.position() / PRUNE_EVERY,
            now,
        };
        match till_app::webhooks::record_progress(context.app(), &endpoint.id, &lease, progress).await {
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

/// Where one endpoint's deliveries go.
struct Target<'a> {
    id: &'a str,
    url: &'a WebhookUrl,
    signer: Signer,
}

/// What a batch sent.
struct Batch {
    attempts: Vec<Attempt>,
    /// How its last attempt failed, which ended it.
    failed: Option<Failure>,
    /// Ended before its last event: the node is stopping, or the lease would not outlast
    /// another send.
    cut: bool,
}

/// Sends `events` in order until one fails; `None` when an event does not render.
async fn send_batch(
    context: &Context,
    to: &Target<'_>,
    events: Vec<FeedEvent>,
    streak: Option<Streak>,
    started: Instant,
    stop: &mut StopSignal,
) -> Option<Batch> {
    let mut batch = Batch {
        attempts: Vec::new(),
        failed: None,
        cut: false,
    };
    for event in events {
        if *stop.borrow() || started.elapsed() > context.batch_budget {
            batch.cut = true;
            break;
        }
        // The first event of a batch is the one a streak of failures, if any, failed on.
        let number = match (batch.attempts.is_empty(), streak) {
            (true, Some(streak)) => streak.failures.saturating_add(1),
            _ => 1,
        };
        let event_id = event.id;
        let at = Timestamp::now();
        let clock = Instant::now();
        let Some(sent) = send(context, to, event, stop).await else {
            tracing::error!(endpoint = %to.id, event = event_id, "a stored event does not render");
            return None;
        };
        let Sent::Answered(answer) = sent else {
            batch.cut = true;
            break;
        };
        batch.attempts.push(Attempt {
            event_id,
            attempt: number,
            status: answer.map_or_else(Failure::status, Some),
            failure: answer.err(),
            at,
            duration: clock.elapsed(),
        });
        crate::metrics::webhook_attempt(answer);
        if let Err(failure) = answer {
            tracing::warn!(
                endpoint = %to.id,
                event = event_id,
                attempt = number,
                failure = failure.kind(),
                status = failure.status(),
                "a webhook delivery failed"
            );
            batch.failed = Some(failure);
            break;
        }
    }
    Some(batch)
}

/// How an endpoint stands after a batch that ended with `failed`, the failures in a row
/// before it being `streak`.
fn standing_after(retry: &RetryPolicy, failed: Option<Failure>, streak: Option<Streak>, now: Timestamp) -> Standing {
    let Some(failure) = failed else {
        return Standing::Healthy;
    };
    match retry.after_failure(failure, streak, now) {
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

/// Renders, signs and sends one event; `None` when the event does not render.
async fn send(context: &Context, to: &Target<'_>, event: FeedEvent, stop: &mut StopSignal) -> Option<Sent> {
    let id = format!("evt_{}", event.id);
    let body = render_event(event).ok()?;
    let timestamp = Timestamp::now().as_second();
    let signature = to.signer.sign(&id, timestamp, &body);
    let sending = context
        .sender
        .send(to.url, &id, timestamp, &signature, Bytes::from(body));
    Some(tokio::select! {
        answer = sending => Sent::Answered(answer),
        _ = stop.changed() => Sent::Stopped,
    })
}
