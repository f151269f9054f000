//! Prometheus metrics: one process-wide recorder, rendered at `/metrics`.

use axum::extract::{MatchedPath, Request};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::Response;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The recorder is global to the process (the `metrics` facade has one), so every server in a
/// process, such as the many of a test run, shares it.
pub fn handle() -> PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE
        .get_or_init(|| {
            let recorder = PrometheusBuilder::new()
                .set_buckets_for_metric(
                    Matcher::Full("till_http_request_duration_seconds".to_owned()),
                    &[0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0],
                )
                .expect("bucket list is not empty")
                .build_recorder();
            let handle = recorder.handle();
            // Another recorder may already be installed (a host embedding us); ours still renders.
            let _ = metrics::set_global_recorder(recorder);
            keep_up(handle.clone());
            handle
        })
        .clone()
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
    metrics::counter!("till_http_requests_total", &labels).increment(1);
    metrics::histogram!("till_http_request_duration_seconds", &labels).record(started.elapsed().as_secs_f64());
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
    fn labels_come_from_closed_sets() {
        assert_eq!(method_label(&Method::POST), "POST");
        assert_eq!(method_label(&Method::from_bytes(b"MADEUP").unwrap()), "other");
        assert_eq!(status_class(StatusCode::CREATED), "2xx");
        assert_eq!(status_class(StatusCode::NOT_FOUND), "4xx");
        assert_eq!(status_class(StatusCode::SERVICE_UNAVAILABLE), "5xx");
    }
}
