//! Prometheus metrics: one process-wide recorder, rendered at `/metrics` (docs/deploy.md,
//! "Metrics"). Requests are counted and timed as they are served; what a scrape reads of the
//! node (its connections, the delivery backlog, the process) is read when it asks.

use crate::state::{AppState, Build};
use axum::extract::{MatchedPath, Request};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::Response;
use metrics::{Unit, describe_counter, describe_histogram};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use till_app::e_receipts::MailQueue;
use till_app::health::{Deliveries, Vitals};
use till_core::e_receipt::MailFailure;
use till_core::webhooks::Failure;

const REQUESTS: &str = "till_http_requests_total";
const REQUEST_SECONDS: &str = "till_http_request_duration_seconds";
const BUILD_INFO: &str = "till_build_info";
const DATABASE_UP: &str = "till_database_up";
const CONNECTIONS: &str = "till_db_connections";
const CONNECTIONS_MAX: &str = "till_db_connections_max";
const WRITER_QUEUE: &str = "till_sqlite_writer_queue_jobs";
const FEED_HEAD: &str = "till_feed_head_position";
const FEED_UNPLACED: &str = "till_feed_unplaced_events";
const WEBHOOK_ATTEMPTS: &str = "till_webhook_attempts_total";
const MAIL_ATTEMPTS: &str = "till_email_attempts_total";
const MAIL_QUEUED: &str = "till_email_queued";
const MAIL_OLDEST: &str = "till_email_oldest_queued_age_seconds";
const MAIL_FAILED: &str = "till_email_failed";
const WEBHOOK_PENDING: &str = "till_webhook_pending_events";
const WEBHOOK_OLDEST: &str = "till_webhook_oldest_pending_age_seconds";
const WEBHOOK_ENDPOINTS: &str = "till_webhook_endpoints";
const WEBHOOK_FAILING: &str = "till_webhook_longest_failing_seconds";

/// Buckets of request and wait timings, in seconds.
const SECONDS_BUCKETS: [f64; 12] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0];
/// Buckets of how many units of work a batch holds.
const JOBS_BUCKETS: [f64; 9] = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0];

/// The recorder is global to the process (the `metrics` facade has one), so every server in a
/// process, such as the many of a test run, shares it.
pub fn handle() -> PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE
        .get_or_init(|| {
            let recorder = PrometheusBuilder::new()
                .set_buckets_for_metric(Matcher::Suffix("_duration_seconds".to_owned()), &SECONDS_BUCKETS)
                .and_then(|builder| builder.set_buckets_for_metric(Matcher::Suffix("_jobs".to_owned()), &JOBS_BUCKETS))
                .expect("bucket lists are not empty")
                .build_recorder();
            let handle = recorder.handle();
            // Another recorder may already be installed (a host embedding us); ours still renders.
            let _ = metrics::set_global_recorder(recorder);
            describe();
            process().describe();
            keep_up(handle.clone());
            handle
        })
        .clone()
}

/// Reads the process's CPU, memory, threads and files (Prometheus's own `process_*` names).
fn process() -> &'static metrics_process::Collector {
    static PROCESS: OnceLock<metrics_process::Collector> = OnceLock::new();
    PROCESS.get_or_init(metrics_process::Collector::default)
}

/// The help text and unit of every metric this crate records.
fn describe() {
    describe_counter!(
        REQUESTS,
        Unit::Count,
        "HTTP requests served, by route template, method and status class."
    );
    describe_histogram!(
        REQUEST_SECONDS,
        Unit::Seconds,
        "HTTP requests by how long they took to answer, by route template, method and status class."
    );
    describe_counter!(
        WEBHOOK_ATTEMPTS,
        Unit::Count,
        "Webhook deliveries this node attempted, by outcome: delivered or how it failed."
    );
    describe_counter!(
        MAIL_ATTEMPTS,
        Unit::Count,
        "Receipts this node tried to send by e-mail, by outcome: sent or how it failed."
    );
}

/// `/metrics`: what the process recorded, then what this server reads at a scrape (its
/// connections and build, the deliveries' backlog). The recorder is the process's, shared by
/// every server a process runs; the figures read here are this server's own, so they are
/// written from their values rather than through it.
pub async fn render(state: &AppState) -> String {
    let vitals = till_app::health::vitals(state.app(), state.now()).await;
    process().collect();
    let mut text = state.metrics().render();
    let mut out = Exposition(&mut text);
    out.build(state.config().build);
    out.vitals(&vitals);
    if state.config().mail.is_some() {
        match till_app::e_receipts::queue(state.app()).await {
            Ok(queue) => out.mail(&queue, state.now()),
            Err(error) => tracing::warn!(%error, "the e-mail queue could not be read for the metrics"),
        }
    }
    text
}

/// Gauges written in Prometheus's text format. Every label value comes from a closed set or
/// from the build, and is escaped all the same.
struct Exposition<'a>(&'a mut String);

impl Exposition<'_> {
    fn gauge(&mut self, name: &str, help: &str, samples: &[(&[(&str, &str)], f64)]) {
        let out = &mut *self.0;
        if !out.is_empty() && !out.ends_with("\n\n") {
            out.push('\n');
        }
        out.push_str(&format!("# HELP {name} {help}\n# TYPE {name} gauge\n"));
        for (labels, value) in samples {
            out.push_str(name);
            if !labels.is_empty() {
                let written: Vec<String> = labels
                    .iter()
                    .map(|(label, value)| format!("{label}=\"{}\"", escaped(value)))
                    .collect();
                out.push_str(&format!("{{{}}}", written.join(",")));
            }
            out.push_str(&format!(" {value}\n"));
        }
    }

    fn one(&mut self, name: &str, help: &str, value: f64) {
        self.gauge(name, help, &[(&[], value)]);
    }

    fn build(&mut self, build: Build) {
        self.gauge(
            BUILD_INFO,
            "Always 1; its labels name the version and the commit this node runs.",
            &[(&[("version", build.version), ("commit", build.commit)], 1.0)],
        );
    }

    fn vitals(&mut self, vitals: &Vitals) {
        let connections = &vitals.connections;
        self.gauge(
            CONNECTIONS,
            "This node's database connections, by state: busy (lent to a request or a task) or idle.",
            &[
                (&[("state", "busy")], connections.busy as f64),
                (&[("state", "idle")], connections.idle as f64),
            ],
        );
        if let Some(most) = connections.most {
            self.one(
                CONNECTIONS_MAX,
                "The most database connections this node keeps open (PostgreSQL's pool size).",
                most as f64,
            );
        }
        if let Some(queued) = connections.writer_queue {
            self.one(
                WRITER_QUEUE,
                "Units of work waiting for SQLite's writer to start its next batch.",
                queued as f64,
            );
        }
        self.one(
            DATABASE_UP,
            "1 when the database answered this scrape's reads, else 0.",
            if vitals.deliveries.is_some() { 1.0 } else { 0.0 },
        );
        if let Some(deliveries) = &vitals.deliveries {
            self.deliveries(deliveries);
        }
    }

    fn mail(&mut self, queue: &MailQueue, now: jiff::Timestamp) {
        self.one(
            MAIL_QUEUED,
            "Receipts waiting in the queue to be sent by e-mail.",
            queue.queued as f64,
        );
        let oldest = queue
            .oldest_queued_at
            .map_or(0.0, |at| now.duration_since(at).as_secs_f64().max(0.0));
        self.one(
            MAIL_OLDEST,
            "Age in seconds of the oldest receipt waiting to be sent by e-mail; 0 when none waits.",
            oldest,
        );
        self.one(
            MAIL_FAILED,
            "Receipts whose e-mail was given up: refused for good, or still failing when the retry window closed.",
            queue.failed as f64,
        );
    }

    fn deliveries(&mut self, deliveries: &Deliveries) {
        self.one(
            FEED_HEAD,
            "The event feed's last position.",
            deliveries.feed_head as f64,
        );
        self.one(
            FEED_UNPLACED,
            "Events committed and not yet handed out by the feed: not numbered, or not released (PostgreSQL).",
            deliveries.unplaced_events as f64,
        );
        self.one(
            WEBHOOK_PENDING,
            "Feed positions past the cursors of the webhook endpoints still tried, summed.",
            deliveries.pending_events as f64,
        );
        self.one(
            WEBHOOK_OLDEST,
            "Age in seconds of the oldest event a webhook endpoint still tried has not received, by the event's own time.",
            deliveries.oldest_pending.as_secs_f64(),
        );
        self.one(
            WEBHOOK_FAILING,
            "Seconds since the first failure of the longest current streak of webhook failures.",
            deliveries.longest_failing.as_secs_f64(),
        );
        let endpoints = deliveries.endpoints;
        self.gauge(
            WEBHOOK_ENDPOINTS,
            "Webhook endpoints by state: healthy, failing (retried with backoff) or disabled.",
            &[
                (&[("state", "healthy")], endpoints.healthy as f64),
                (&[("state", "failing")], endpoints.failing as f64),
                (&[("state", "disabled")], endpoints.disabled as f64),
            ],
        );
    }
}

/// A label value as the text format writes it.
fn escaped(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

/// One webhook delivery attempt and how it ended.
pub fn webhook_attempt(answer: Result<u16, Failure>) {
    let outcome = match answer {
        Ok(_) => "delivered",
        Err(failure) => failure.kind(),
    };
    metrics::counter!(WEBHOOK_ATTEMPTS, "outcome" => outcome).increment(1);
}

/// One attempt to send a receipt by e-mail and how it ended.
pub fn mail_attempt(result: Result<(), MailFailure>) {
    let outcome = match result {
        Ok(()) => "sent",
        Err(failure) => failure.as_str(),
    };
    metrics::counter!(MAIL_ATTEMPTS, "outcome" => outcome).increment(1);
}

/// How often recorded timings are folded into their buckets when nothing scrapes `/metrics`.
const UPKEEP_INTERVAL: Duration = Duration::from_secs(5);

/// The recorder keeps every timing it is given until a scrape or an upkeep folds it into its
/// histogram's buckets, and nothing runs an upkeep for a recorder built without the exporter's
/// own HTTP listener: a node nobody scraped grew with every sale ("Metrics upkeep" in
/// docs/performance.md). A thread of the process, like the recorder, folds them in.
fn keep_up(handle: PrometheusHandle) {
    let started = std::thread::Builder::new().name("till-metrics".into()).spawn(move || {
        loop {
            std::thread::sleep(UPKEEP_INTERVAL);
            handle.run_upkeep();
        }
    });
    if let Err(error) = started {
        tracing::warn!(%error, "the metrics upkeep thread could not start; timings wait for a scrape");
    }
}

/// Counts requests and times them by route template, method and status class. Every label
/// comes from a closed set, so that no request, however made up, adds a series: a method
/// outside the standard ones is `other`, a path no route matches is `unmatched`.
pub async fn track(request: Request, next: Next) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |path| path.as_str().to_owned());
    let method = method_label(request.method());
    let started = Instant::now();
    let response = next.run(request).await;
    let labels = [
        ("route", route),
        ("method", method.to_owned()),
        ("status", status_class(response.status()).to_owned()),
    ];
    metrics::counter!(REQUESTS, &labels).increment(1);
    metrics::histogram!(REQUEST_SECONDS, &labels).record(started.elapsed().as_secs_f64());
    response
}

/// The method as a label: one of the standard methods, else `other`.
fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::HEAD => "HEAD",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        Method::PATCH => "PATCH",
        Method::OPTIONS => "OPTIONS",
        Method::CONNECT => "CONNECT",
        Method::TRACE => "TRACE",
        _ => "other",
    }
}

/// The status as a label: its class, `2xx` to `5xx`.
fn status_class(status: StatusCode) -> &'static str {
    match status.as_u16() {
        100..=199 => "1xx",
        200..=299 => "2xx",
        300..=399 => "3xx",
        400..=499 => "4xx",
        _ => "5xx",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_read_at_a_scrape_are_written_with_their_help_and_escaped_labels() {
        let mut text = String::from("# TYPE earlier counter\nearlier 1\n\n");
        let mut out = Exposition(&mut text);
        out.build(Build {
            version: "1.2.3",
            commit: "ab\"c\\d",
        });
        out.vitals(&Vitals {
            engine: till_app::health::Engine::Sqlite,
            connections: till_app::health::Connections {
                busy: 2,
                idle: 1,
                most: None,
                writer_queue: Some(7),
            },
            deliveries: None,
        });
        let expected = "# TYPE earlier counter\nearlier 1\n\n\
            # HELP till_build_info Always 1; its labels name the version and the commit this node runs.\n\
            # TYPE till_build_info gauge\n\
            till_build_info{version=\"1.2.3\",commit=\"ab\\\"c\\\\d\"} 1\n\n\
            # HELP till_db_connections This node's database connections, by state: busy (lent to a request or a task) or idle.\n\
            # TYPE till_db_connections gauge\n\
            till_db_connections{state=\"busy\"} 2\n\
            till_db_connections{state=\"idle\"} 1\n\n\
            # HELP till_sqlite_writer_queue_jobs Units of work waiting for SQLite's writer to start its next batch.\n\
            # TYPE till_sqlite_writer_queue_jobs gauge\n\
            till_sqlite_writer_queue_jobs 7\n\n\
            # HELP till_database_up 1 when the database answered this scrape's reads, else 0.\n\
            # TYPE till_database_up gauge\n\
            till_database_up 0\n";
        assert_eq!(text, expected);
    }

    #[test]
    fn labels_come_from_closed_sets() {
        assert_eq!(method_label(&Method::POST), "POST");
        assert_eq!(method_label(&Method::from_bytes(b"MADEUP").unwrap()), "other");
        assert_eq!(status_class(StatusCode::CREATED), "2xx");
        assert_eq!(status_class(StatusCode::NOT_FOUND), "4xx");
        assert_eq!(status_class(StatusCode::SERVICE_UNAVAILABLE), "5xx");
    }
}
