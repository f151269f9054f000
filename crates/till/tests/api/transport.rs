//! The transport: refusals hyper or till make before a handler runs arrive in the envelope,
//! slow and idle clients are closed, connections are capped, CORS for listed origins only,
//! and HTTPS whose certificate is replaced without a restart. Driven over raw TCP where a
//! client library would not send what a broken or hostile one does.

use crate::harness::{Engine, Reply, SECRET, TestServer};
use crate::on_both_engines;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use rustls::pki_types::pem::PemObject;
use serde_json::Value;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use till::config::Config;
use till_api::ManualClock;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The longest any answer or close may take before the test gives up on it: a guard against a
/// hung test, not a timing under test.
const PATIENCE: Duration = Duration::from_secs(30);

fn address(server: &TestServer) -> SocketAddr {
    server
        .base
        .trim_start_matches("http://")
        .parse()
        .expect("a socket address")
}

/// Reads one answer: its head, then as many body bytes as its content-length says.
async fn read_answer(stream: &mut TcpStream) -> Reply {
    tokio::time::timeout(PATIENCE, async {
        let mut bytes = Vec::new();
        let mut chunk = [0u8; 8192];
        let head_end = loop {
            if let Some(end) = bytes.windows(4).position(|window| window == b"\r\n\r\n") {
                break end + 4;
            }
            let read = stream.read(&mut chunk).await.expect("the answer is readable");
            assert!(
                read > 0,
                "closed before an answer: {:?}",
                String::from_utf8_lossy(&bytes)
            );
            bytes.extend_from_slice(&chunk[..read]);
        };
        let head = String::from_utf8(bytes[..head_end].to_vec()).expect("a text head");
        let mut lines = head.split("\r\n");
        let status = lines.next().unwrap().split(' ').nth(1).unwrap().parse().unwrap();
        let mut headers = HeaderMap::new();
        for line in lines.filter(|line| !line.is_empty()) {
            let (name, value) = line.split_once(':').expect("a header line");
            headers.append(
                HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_str(value.trim()).unwrap(),
            );
        }
        let length: usize = headers
            .get("content-length")
            .map_or(0, |value| value.to_str().unwrap().parse().unwrap());
        while bytes.len() < head_end + length {
            let read = stream.read(&mut chunk).await.expect("the body is readable");
            assert!(read > 0, "closed inside the body");
            bytes.extend_from_slice(&chunk[..read]);
        }
        let text = String::from_utf8(bytes[head_end..head_end + length].to_vec()).expect("a text body");
        let body = serde_json::from_str(&text).unwrap_or(Value::Null);
        Reply {
            status,
            headers,
            text,
            body,
        }
    })
    .await
    .expect("an answer in time")
}

/// Whether the server closed the connection (end of stream or reset) with nothing more sent.
async fn closed_without_a_word(stream: &mut TcpStream) -> bool {
    let mut rest = Vec::new();
    match tokio::time::timeout(PATIENCE, stream.read_to_end(&mut rest)).await {
        Ok(Ok(_)) => rest.is_empty(),
        Ok(Err(error)) => error.kind() == std::io::ErrorKind::ConnectionReset && rest.is_empty(),
        Err(_) => panic!("the connection was not closed"),
    }
}

async fn connect(server: &TestServer) -> TcpStream {
    TcpStream::connect(address(server)).await.expect("connects")
}

/// Sends `request` whole from a task of its own (the server may stop reading part way), and
/// reads the answer meanwhile, to the end of the connection.
async fn answer_to(server: &TestServer, request: Vec<u8>) -> Reply {
    let (mut reading, mut writing) = connect(server).await.into_split();
    let writer = tokio::spawn(async move {
        let _ = writing.write_all(&request).await;
        // Kept open until the answer is read.
        writing
    });
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 8192];
    tokio::time::timeout(PATIENCE, async {
        while let Ok(read @ 1..) = reading.read(&mut chunk).await {
            bytes.extend_from_slice(&chunk[..read]);
        }
    })
    .await
    .expect("the server answers and closes");
    drop(writer.await);
    parse_whole(&bytes)
}

/// An answer read to the end of the connection.
fn parse_whole(bytes: &[u8]) -> Reply {
    let text = String::from_utf8_lossy(bytes);
    let (head, body) = text
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("no answer: {text:?}"));
    let mut lines = head.split("\r\n");
    let status = lines.next().unwrap().split(' ').nth(1).unwrap().parse().unwrap();
    let mut headers = HeaderMap::new();
    for line in lines {
        let (name, value) = line.split_once(':').expect("a header line");
        headers.append(
            HeaderName::from_bytes(name.as_bytes()).unwrap(),
            HeaderValue::from_str(value.trim()).unwrap(),
        );
    }
    Reply {
        status,
        headers,
        text: body.to_owned(),
        body: serde_json::from_str(body).unwrap_or(Value::Null),
    }
}

async fn a_target_hyper_cannot_read_is_414_in_the_envelope(engine: Engine) {
    let server = TestServer::start(engine).await;
    let request = format!("GET /v1/sales/{} HTTP/1.1\r\nHost: till\r\n\r\n", "a".repeat(100_000));
    let reply = answer_to(&server, request.into_bytes()).await;
    reply.assert_error(414, "URI_TOO_LONG");
    assert_eq!(reply.headers["connection"], "close");
    assert!(reply.headers.contains_key("date"));
    server.stop().await;
}

async fn a_megabyte_of_headers_is_431_in_the_envelope(engine: Engine) {
    let server = TestServer::start(engine).await;
    let mut request = b"GET /healthz HTTP/1.1\r\nHost: till\r\n".to_vec();
    for n in 0..16 {
        request.extend_from_slice(format!("x-fill-{n}: {}\r\n", "a".repeat(64 * 1024)).as_bytes());
    }
    request.extend_from_slice(b"\r\n");
    let reply = answer_to(&server, request).await;
    reply.assert_error(431, "HEADERS_TOO_LARGE");
    server.stop().await;
}

async fn a_garbage_request_line_is_400_in_the_envelope(engine: Engine) {
    let server = TestServer::start(engine).await;
    let reply = answer_to(&server, b"GARBAGE\r\n\r\n".to_vec()).await;
    reply.assert_error(400, "VALIDATION_FAILED");
    assert_eq!(reply.fields(), ["request"]);
    server.stop().await;
}

/// Over till's own limits but within what hyper reads: till answers, and the connection
/// goes on serving.
async fn heads_over_tills_limits_are_refused_and_the_connection_serves_on(engine: Engine) {
    let server = TestServer::start(engine).await;
    let mut stream = connect(&server).await;
    let long_target = format!("GET /v1/sales/{} HTTP/1.1\r\nHost: till\r\n\r\n", "a".repeat(9_000));
    stream.write_all(long_target.as_bytes()).await.unwrap();
    read_answer(&mut stream).await.assert_error(414, "URI_TOO_LONG");
    let big_headers = format!(
        "GET /healthz HTTP/1.1\r\nHost: till\r\nx-a: {a}\r\nx-b: {a}\r\n\r\n",
        a = "a".repeat(40_000)
    );
    stream.write_all(big_headers.as_bytes()).await.unwrap();
    read_answer(&mut stream).await.assert_error(431, "HEADERS_TOO_LARGE");
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: till\r\n\r\n")
        .await
        .unwrap();
    assert_eq!(read_answer(&mut stream).await.status, 200);
    server.stop().await;
}

/// Sends a head one byte a second on `stream`, and tells whether the server closed the
/// connection without answering it.
async fn slow_head_is_closed_unanswered(stream: TcpStream) -> bool {
    let (mut reading, mut writing) = stream.into_split();
    let slow = tokio::spawn(async move {
        for byte in b"GET /healthz HTTP/1.1\r\nHost: till\r\nX-Slow: "
            .iter()
            .chain([b'a'; 200].iter())
        {
            if writing.write_all(&[*byte]).await.is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    });
    let mut rest = Vec::new();
    let outcome = tokio::time::timeout(PATIENCE, reading.read_to_end(&mut rest)).await;
    slow.abort();
    outcome.is_ok() && rest.is_empty()
}

/// A head sent one byte a second is closed at the head timeout: on a new connection, and on a
/// kept-alive one whose idle timeout is far longer.
async fn a_slow_request_head_is_closed_by_the_header_timeout(engine: Engine) {
    let server = TestServer::start_with(engine, |config| {
        config.http_header_timeout_seconds = 1;
        config.http_idle_timeout_seconds = 600;
    })
    .await;
    let fresh = connect(&server).await;
    let mut kept = connect(&server).await;
    kept.write_all(b"GET /healthz HTTP/1.1\r\nHost: till\r\n\r\n")
        .await
        .unwrap();
    assert_eq!(read_answer(&mut kept).await.status, 200);
    let (fresh, kept) = tokio::join!(
        slow_head_is_closed_unanswered(fresh),
        slow_head_is_closed_unanswered(kept)
    );
    assert!(fresh, "a new connection's slow head was closed unanswered");
    assert!(kept, "a kept-alive connection's slow head was closed unanswered");
    server.stop().await;
}

/// The head timeout does not cut an idle kept-alive connection; the idle timeout does.
async fn an_idle_connection_is_kept_for_the_idle_timeout_then_closed(engine: Engine) {
    let server = TestServer::start_with(engine, |config| {
        config.http_header_timeout_seconds = 1;
        config.http_idle_timeout_seconds = 4;
    })
    .await;
    let mut stream = connect(&server).await;
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: till\r\n\r\n")
        .await
        .unwrap();
    assert_eq!(read_answer(&mut stream).await.status, 200);
    // Idle for twice the head timeout, well within the idle timeout.
    tokio::time::sleep(Duration::from_secs(2)).await;
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: till\r\n\r\n")
        .await
        .unwrap();
    assert_eq!(read_answer(&mut stream).await.status, 200);
    assert!(closed_without_a_word(&mut stream).await);
    server.stop().await;
}

async fn a_body_that_never_comes_is_408_in_the_envelope(engine: Engine) {
    let server = TestServer::start_with(engine, |config| config.http_body_timeout_seconds = 1).await;
    let admin = server.admin();
    let mut stream = connect(&server).await;
    let head = format!(
        "PUT /v1/stores/s1 HTTP/1.1\r\nHost: till\r\nAuthorization: Bearer {admin}\r\n\
         Content-Type: application/json\r\nContent-Length: 500000\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let reply = read_answer(&mut stream).await;
    reply.assert_error(408, "REQUEST_TIMEOUT");
    assert_eq!(reply.headers["connection"], "close");
    assert!(reply.headers.contains_key("x-request-id"));
    assert!(closed_without_a_word(&mut stream).await);
    server.get("/v1/stores/s1", &admin).await.assert_error(404, "NOT_FOUND");
    server.stop().await;
}

/// A body announced larger than `TILL_MAX_BODY_BYTES` is refused from the head: at once, in
/// the envelope, never `100 Continue`, nothing read or done.
async fn a_body_announced_over_the_limit_is_413_from_its_head(engine: Engine) {
    // A short body timeout: a server that waited for the body would answer 408 soon.
    let server = TestServer::start_with(engine, |config| config.http_body_timeout_seconds = 3).await;
    let admin = server.admin();
    let head = |expect: &str| {
        format!(
            "PUT /v1/stores/s1 HTTP/1.1\r\nHost: till\r\nAuthorization: Bearer {admin}\r\n\
             Content-Type: application/json\r\n{expect}Content-Length: 1000000000000\r\n\r\n"
        )
    };
    // The client waits for `100 Continue` before it sends the body.
    let mut stream = connect(&server).await;
    let asked = std::time::Instant::now();
    stream
        .write_all(head("Expect: 100-continue\r\n").as_bytes())
        .await
        .unwrap();
    let reply = read_answer(&mut stream).await;
    reply.assert_error(413, "PAYLOAD_TOO_LARGE");
    assert!(asked.elapsed() < Duration::from_secs(2), "answered from the head");
    assert_eq!(reply.headers["connection"], "close");
    assert!(closed_without_a_word(&mut stream).await);
    // The client sends its body at once: the answer comes all the same, and the connection
    // closes without a reset that would lose it.
    let mut request = head("").into_bytes();
    request.extend_from_slice(&[b'{'; 256 * 1024]);
    let reply = answer_to(&server, request).await;
    reply.assert_error(413, "PAYLOAD_TOO_LARGE");
    assert_eq!(reply.headers["connection"], "close");
    server.get("/v1/stores/s1", &admin).await.assert_error(404, "NOT_FOUND");
    server.stop().await;
}

/// Past the cap a connection is answered 503 with `Retry-After`; once a connection closes, a
/// new one is served again.
async fn connections_over_the_cap_are_answered_503(engine: Engine) {
    let server = TestServer::start_with(engine, |config| config.max_connections = 2).await;
    let mut held = Vec::new();
    for _ in 0..2 {
        let mut stream = connect(&server).await;
        stream
            .write_all(b"GET /healthz HTTP/1.1\r\nHost: till\r\n\r\n")
            .await
            .unwrap();
        assert_eq!(read_answer(&mut stream).await.status, 200);
        held.push(stream);
    }
    let mut over = connect(&server).await;
    over.write_all(b"GET /healthz HTTP/1.1\r\nHost: till\r\n\r\n")
        .await
        .unwrap();
    let reply = read_answer(&mut over).await;
    reply.assert_error(503, "SERVICE_UNAVAILABLE");
    assert_eq!(reply.headers["retry-after"], "1");
    assert!(closed_without_a_word(&mut over).await);

    drop(held.pop());
    let mut served = false;
    for _ in 0..200 {
        let mut stream = connect(&server).await;
        stream
            .write_all(b"GET /healthz HTTP/1.1\r\nHost: till\r\n\r\n")
            .await
            .unwrap();
        let reply = read_answer(&mut stream).await;
        if reply.status == 200 {
            served = true;
            break;
        }
        reply.assert_error(503, "SERVICE_UNAVAILABLE");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(served, "a slot freed by a closed connection serves again");
    drop(held);
    server.stop().await;
}

/// Stopping lets a request in flight finish: new connections are refused, its answer arrives,
/// then the node stops.
async fn a_request_in_flight_finishes_when_the_node_stops(engine: Engine) {
    let server = TestServer::start(engine).await;
    let admin = server.admin();
    let addr = address(&server);
    let mut stream = connect(&server).await;
    let body = br#"{"name": "Marais"}"#;
    let head = format!(
        "PUT /v1/stores/s1 HTTP/1.1\r\nHost: till\r\nAuthorization: Bearer {admin}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nExpect: 100-continue\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    // hyper asks for the body once the handler reads it: the request is in flight.
    let mut interim = [0u8; 25];
    stream.read_exact(&mut interim).await.unwrap();
    assert_eq!(&interim, b"HTTP/1.1 100 Continue\r\n\r\n");

    let stopping = tokio::spawn(server.stop());
    let mut refused = false;
    for _ in 0..500 {
        if TcpStream::connect(addr).await.is_err() {
            refused = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(refused, "a stopping node accepts no connection");
    stream.write_all(body).await.unwrap();
    let reply = read_answer(&mut stream).await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    tokio::time::timeout(PATIENCE, stopping)
        .await
        .expect("the node stops once the answer is sent")
        .expect("cleanly");
}

const ORIGIN: &str = "https://till.example.com";

fn preflight(http: &reqwest::Client, base: &str, origin: &str) -> reqwest::RequestBuilder {
    http.request(reqwest::Method::OPTIONS, format!("{base}/v1/checkout/finalize"))
        .header("origin", origin)
        .header("access-control-request-method", "POST")
        .header(
            "access-control-request-headers",
            "authorization, content-type, if-match, x-elevation-token, x-request-id",
        )
}

fn cors_headers(headers: &HeaderMap) -> Vec<String> {
    headers
        .keys()
        .map(|name| name.as_str().to_owned())
        .filter(|name| name.starts_with("access-control-"))
        .collect()
}

fn words(headers: &HeaderMap, name: &str) -> Vec<String> {
    headers
        .get(name)
        .map(|value| {
            value
                .to_str()
                .unwrap()
                .split(',')
                .map(|word| word.trim().to_ascii_lowercase())
                .collect()
        })
        .unwrap_or_default()
}

async fn listed_origins_get_cors_and_others_none(engine: Engine) {
    let server = TestServer::start_with(engine, |config| {
        config.cors_origins = vec![ORIGIN.to_owned(), "http://localhost:5173".to_owned()];
    })
    .await;

    let allowed = server.send(|http, base| preflight(http, &base, ORIGIN)).await;
    assert_eq!(allowed.status, 200, "preflight answered: {}", allowed.text);
    let headers = &allowed.headers;
    assert_eq!(headers["access-control-allow-origin"], ORIGIN);
    assert!(!headers.contains_key("access-control-allow-credentials"));
    assert!(words(headers, "access-control-allow-methods").contains(&"post".to_owned()));
    let allowed_headers = words(headers, "access-control-allow-headers");
    for wanted in [
        "authorization",
        "content-type",
        "if-match",
        "x-elevation-token",
        "x-request-id",
    ] {
        assert!(
            allowed_headers.contains(&wanted.to_owned()),
            "{wanted} in {allowed_headers:?}"
        );
    }

    let refused = server
        .send(|http, base| preflight(http, &base, "https://elsewhere.example.com"))
        .await;
    assert!(cors_headers(&refused.headers).is_empty(), "{:?}", refused.headers);
    refused.assert_error(405, "METHOD_NOT_ALLOWED");

    let actual = server
        .send(|http, base| http.get(format!("{base}/healthz")).header("origin", ORIGIN))
        .await;
    assert_eq!(actual.status, 200);
    assert_eq!(actual.headers["access-control-allow-origin"], ORIGIN);
    let exposed = words(&actual.headers, "access-control-expose-headers");
    for wanted in [
        "etag",
        "retry-after",
        "x-request-id",
        "x-idempotent-replay",
        "location",
        "x-till-print",
        "www-authenticate",
    ] {
        assert!(exposed.contains(&wanted.to_owned()), "{wanted} in {exposed:?}");
    }

    let other = server
        .send(|http, base| {
            http.get(format!("{base}/healthz"))
                .header("origin", "https://elsewhere.example.com")
        })
        .await;
    assert_eq!(other.status, 200);
    assert!(cors_headers(&other.headers).is_empty(), "{:?}", other.headers);
    assert!(
        words(&other.headers, "vary").contains(&"origin".to_owned()),
        "{:?}",
        other.headers
    );
    server.stop().await;
}

async fn without_origins_there_is_no_cors(engine: Engine) {
    let server = TestServer::start(engine).await;
    let reply = server.send(|http, base| preflight(http, &base, ORIGIN)).await;
    assert!(cors_headers(&reply.headers).is_empty(), "{:?}", reply.headers);
    reply.assert_error(405, "METHOD_NOT_ALLOWED");
    server.stop().await;
}

/// A transport misconfigured stops the server at start, saying what is wrong (before any
/// database is opened, so on no engine in particular).
#[tokio::test]
async fn transport_mistakes_are_errors_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let base = Config {
        listen: "127.0.0.1:0".to_owned(),
        data_dir: dir.path().to_path_buf(),
        jwt_secret: Some(SECRET.to_owned()),
        ..Config::default()
    };
    let clock = || Arc::new(ManualClock::new(jiff::Timestamp::now()));
    let cases = [
        (
            Config {
                cors_origins: vec!["*".to_owned()],
                ..base.clone()
            },
            "`*` is not accepted",
        ),
        (
            Config {
                cors_origins: vec!["till.example.com".to_owned()],
                ..base.clone()
            },
            "is not an origin",
        ),
        (
            Config {
                tls_cert: Some(dir.path().join("cert.pem")),
                ..base.clone()
            },
            "TILL_TLS_CERT is set without TILL_TLS_KEY",
        ),
        (
            Config {
                tls_cert: Some(dir.path().join("cert.pem")),
                tls_key: Some(dir.path().join("key.pem")),
                ..base.clone()
            },
            "cannot read the TLS certificate",
        ),
        (
            Config {
                max_connections: 0,
                ..base.clone()
            },
            "TILL_MAX_CONNECTIONS",
        ),
    ];
    for (config, says) in cases {
        let error = match till::server::start(&config, clock()).await {
            Ok(_) => panic!("started despite: {says}"),
            Err(error) => format!("{error:#}"),
        };
        assert!(error.contains(says), "{error} should say {says}");
    }
}

/// A certificate authority of the test's own and the certificates it issues for 127.0.0.1.
struct Authority {
    issuer: rcgen::Issuer<'static, rcgen::KeyPair>,
    pem: String,
}

impl Authority {
    fn new() -> Authority {
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "till test authority");
        let key = rcgen::KeyPair::generate().unwrap();
        let certificate = params.self_signed(&key).unwrap();
        Authority {
            pem: certificate.pem(),
            issuer: rcgen::Issuer::new(params, key),
        }
    }

    /// A certificate and key for the server, in PEM; the certificate's DER to recognise it.
    fn issue(&self) -> (String, String, Vec<u8>) {
        let key = rcgen::KeyPair::generate().unwrap();
        let params = rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()]).unwrap();
        let certificate = params.signed_by(&key, &self.issuer).unwrap();
        (certificate.pem(), key.serialize_pem(), certificate.der().to_vec())
    }
}

/// The certificate a fresh connection to `/healthz` is served, checked against the authority.
async fn served_certificate(base: &str, authority: &Authority) -> Vec<u8> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::builder()
        .tls_certs_only([reqwest::Certificate::from_pem(authority.pem.as_bytes()).unwrap()])
        .tls_info(true)
        .build()
        .unwrap();
    let response = client
        .get(format!("{base}/healthz"))
        .send()
        .await
        .expect("HTTPS answers");
    assert_eq!(response.status(), 200);
    let info = response.extensions().get::<reqwest::tls::TlsInfo>().expect("TLS info");
    info.peer_certificate().expect("a server certificate").to_vec()
}

async fn https_serves_and_takes_a_new_certificate_without_restart(engine: Engine) {
    let dir = tempfile::tempdir().unwrap();
    let (cert_path, key_path) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    let authority = Authority::new();
    let (cert, key, first) = authority.issue();
    std::fs::write(&cert_path, cert).unwrap();
    std::fs::write(&key_path, key).unwrap();
    let server = TestServer::start_with(engine, |config| {
        config.tls_cert = Some(cert_path.clone());
        config.tls_key = Some(key_path.clone());
        config.tls_reload_seconds = 1;
    })
    .await;
    assert!(server.base.starts_with("https://"), "{}", server.base);
    assert_eq!(served_certificate(&server.base, &authority).await, first);

    // Renewed the way a certificate tool does it: new files moved into place.
    let (cert, key, second) = authority.issue();
    std::fs::write(dir.path().join("cert.new"), cert).unwrap();
    std::fs::write(dir.path().join("key.new"), key).unwrap();
    std::fs::rename(dir.path().join("key.new"), &key_path).unwrap();
    std::fs::rename(dir.path().join("cert.new"), &cert_path).unwrap();
    let mut served = first.clone();
    for _ in 0..100 {
        served = served_certificate(&server.base, &authority).await;
        if served != first {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(served, second, "the new certificate is served without a restart");
    server.stop().await;
}

/// Over HTTPS the handshake is bounded by the head timeout too.
async fn a_silent_https_connection_is_closed(engine: Engine) {
    let dir = tempfile::tempdir().unwrap();
    let (cert, key, _) = Authority::new().issue();
    std::fs::write(dir.path().join("cert.pem"), cert).unwrap();
    std::fs::write(dir.path().join("key.pem"), key).unwrap();
    let server = TestServer::start_with(engine, |config| {
        config.tls_cert = Some(dir.path().join("cert.pem"));
        config.tls_key = Some(dir.path().join("key.pem"));
        config.http_header_timeout_seconds = 1;
    })
    .await;
    let addr = server.base.trim_start_matches("https://");
    let mut stream = TcpStream::connect(addr).await.unwrap();
    assert!(closed_without_a_word(&mut stream).await);
    server.stop().await;
}

/// Over HTTPS too, a request hyper cannot parse is answered in the envelope.
async fn garbage_over_https_is_400_in_the_envelope(engine: Engine) {
    let dir = tempfile::tempdir().unwrap();
    let authority = Authority::new();
    let (cert, key, _) = authority.issue();
    std::fs::write(dir.path().join("cert.pem"), cert).unwrap();
    std::fs::write(dir.path().join("key.pem"), key).unwrap();
    let server = TestServer::start_with(engine, |config| {
        config.tls_cert = Some(dir.path().join("cert.pem"));
        config.tls_key = Some(dir.path().join("key.pem"));
    })
    .await;
    let mut roots = rustls::RootCertStore::empty();
    let authority_der = rustls::pki_types::CertificateDer::from_pem_slice(authority.pem.as_bytes()).unwrap();
    roots.add(authority_der).unwrap();
    let client = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(client));
    let tcp = TcpStream::connect(server.base.trim_start_matches("https://"))
        .await
        .unwrap();
    let name = rustls::pki_types::ServerName::try_from("127.0.0.1").unwrap();
    let mut tls = connector.connect(name, tcp).await.expect("handshake");
    tls.write_all(b"GARBAGE\r\n\r\n").await.unwrap();
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(PATIENCE, tls.read_to_end(&mut answer))
        .await
        .expect("answered and closed");
    let reply = parse_whole(&answer);
    reply.assert_error(400, "VALIDATION_FAILED");
    assert_eq!(reply.fields(), ["request"]);
    server.stop().await;
}

/// Over HTTPS every answer tells the browser to keep to HTTPS (`Strict-Transport-Security`):
/// the router's, the transport's own refusals, hyper's replaced ones. Over plain HTTP, none.
async fn https_answers_carry_strict_transport_security(engine: Engine) {
    let dir = tempfile::tempdir().unwrap();
    let authority = Authority::new();
    let (cert, key, _) = authority.issue();
    std::fs::write(dir.path().join("cert.pem"), cert).unwrap();
    std::fs::write(dir.path().join("key.pem"), key).unwrap();
    let server = TestServer::start_with(engine, |config| {
        config.tls_cert = Some(dir.path().join("cert.pem"));
        config.tls_key = Some(dir.path().join("key.pem"));
    })
    .await;
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::builder()
        .tls_certs_only([reqwest::Certificate::from_pem(authority.pem.as_bytes()).unwrap()])
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let hsts = "max-age=31536000";
    for path in ["/healthz", "/v1/nothing", "/console", "/console/sign-in", "/v1/stores"] {
        let response = client.get(format!("{}{path}", server.base)).send().await.unwrap();
        assert_eq!(
            response
                .headers()
                .get("strict-transport-security")
                .map(|v| v.to_str().unwrap()),
            Some(hsts),
            "{path}: {}",
            response.status()
        );
    }
    let oversized = client
        .put(format!("{}/v1/stores/s1", server.base))
        .header("content-type", "application/json")
        .body(vec![b' '; 5 * 1024 * 1024])
        .send()
        .await
        .unwrap();
    assert_eq!(oversized.status(), 413);
    assert_eq!(oversized.headers()["strict-transport-security"], hsts);

    // A head hyper cannot parse, answered by the envelope that replaces hyper's answer.
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(rustls::pki_types::CertificateDer::from_pem_slice(authority.pem.as_bytes()).unwrap())
        .unwrap();
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let tcp = TcpStream::connect(server.base.trim_start_matches("https://"))
        .await
        .unwrap();
    let name = rustls::pki_types::ServerName::try_from("127.0.0.1").unwrap();
    let mut tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(name, tcp)
        .await
        .expect("handshake");
    tls.write_all(b"GARBAGE\r\n\r\n").await.unwrap();
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(PATIENCE, tls.read_to_end(&mut answer))
        .await
        .expect("answered and closed");
    let reply = parse_whole(&answer);
    reply.assert_error(400, "VALIDATION_FAILED");
    assert_eq!(reply.headers["strict-transport-security"], hsts);
    server.stop().await;

    let plain = TestServer::start(engine).await;
    for path in ["/healthz", "/v1/nothing", "/console/sign-in"] {
        let reply = plain.call(reqwest::Method::GET, path, None, None).await;
        assert!(!reply.headers.contains_key("strict-transport-security"), "{path}");
    }
    let reply = answer_to(&plain, b"GARBAGE\r\n\r\n".to_vec()).await;
    assert!(!reply.headers.contains_key("strict-transport-security"));
    plain.stop().await;
}

on_both_engines!(
    a_target_hyper_cannot_read_is_414_in_the_envelope,
    a_megabyte_of_headers_is_431_in_the_envelope,
    a_garbage_request_line_is_400_in_the_envelope,
    heads_over_tills_limits_are_refused_and_the_connection_serves_on,
    a_slow_request_head_is_closed_by_the_header_timeout,
    an_idle_connection_is_kept_for_the_idle_timeout_then_closed,
    a_body_that_never_comes_is_408_in_the_envelope,
    a_body_announced_over_the_limit_is_413_from_its_head,
    connections_over_the_cap_are_answered_503,
    a_request_in_flight_finishes_when_the_node_stops,
    listed_origins_get_cors_and_others_none,
    without_origins_there_is_no_cors,
    https_serves_and_takes_a_new_certificate_without_restart,
    a_silent_https_connection_is_closed,
    garbage_over_https_is_400_in_the_envelope,
    https_answers_carry_strict_transport_security,
);
