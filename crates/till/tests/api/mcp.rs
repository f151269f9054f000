//! The agent tools (DESIGN.md section 19) with rmcp's own client: over streamable HTTP at
//! `/v1/mcp` through till's transport, and over stdio from a `till mcp` process on the same
//! database. The tools follow the tiers and the token's scopes; a `confirm` tool acts only
//! with the single-use token its first call answered, for the same arguments.

use crate::harness::{Engine, SECRET, TestServer};
use crate::on_both_engines;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use std::collections::BTreeSet;

type Client = RunningService<RoleClient, ()>;

/// A client of `/v1/mcp` acting with `token`.
async fn over_http(server: &TestServer, token: &str) -> Client {
    let config = StreamableHttpClientTransportConfig::with_uri(format!("{}/v1/mcp", server.base)).auth_header(token);
    ().serve(StreamableHttpClientTransport::with_client(
        reqwest::Client::new(),
        config,
    ))
    .await
    .expect("the MCP client connects over HTTP")
}

/// A `till mcp` process on the server's database, its token in `TILL_MCP_TOKEN`, and a client
/// of its standard input and output.
struct OverStdio {
    client: Client,
    child: tokio::process::Child,
}

async fn over_stdio(server: &TestServer, token: &str) -> OverStdio {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_till"))
        .arg("mcp")
        .env("TILL_MCP_TOKEN", token)
        .env("TILL_DATABASE_URL", server.config.database_url())
        .env("TILL_DATA_DIR", &server.config.data_dir)
        .env("TILL_JWT_SECRET", SECRET)
        .env("TILL_LOG", "error")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("till mcp starts");
    let output = child.stdout.take().expect("its standard output");
    let input = child.stdin.take().expect("its standard input");
    let client = ().serve((output, input)).await.expect("the MCP client connects over stdio");
    OverStdio { client, child }
}

impl OverStdio {
    /// Closes the session; `till mcp` exits cleanly when its client leaves.
    async fn close(mut self) {
        self.client.cancel().await.expect("the client closes");
        let status = self.child.wait().await.expect("till mcp exits");
        assert!(status.success(), "till mcp exited with {status}");
    }
}

async fn tool_names(client: &Client) -> BTreeSet<String> {
    client
        .list_all_tools()
        .await
        .expect("the tools are listed")
        .into_iter()
        .map(|tool| tool.name.into_owned())
        .collect()
}

/// The operations of the document a token with `scopes` may call as tools: tier allow or
/// confirm, and public or accepting one of the scopes.
fn documented_tools(scopes: &[&str]) -> BTreeSet<String> {
    let document: Value = serde_json::from_str(till_api::openapi::document_json()).unwrap();
    let mut names = BTreeSet::new();
    for item in document["paths"].as_object().unwrap().values() {
        for operation in item.as_object().unwrap().values() {
            let tier = operation["x-agent-tier"].as_str().unwrap_or("");
            let accepted: Vec<&str> = operation["x-pos-scopes"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            let id = operation["operationId"].as_str().unwrap_or("");
            let permitted = accepted.is_empty() || accepted.iter().any(|scope| scopes.contains(scope));
            if ["allow", "confirm"].contains(&tier) && permitted && id != "sendMcpMessage" {
                names.insert(id.to_owned());
            }
        }
    }
    names
}

async fn call(client: &Client, tool: &str, arguments: Value) -> CallToolResult {
    let arguments = arguments.as_object().expect("arguments are an object").clone();
    client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments))
        .await
        .unwrap_or_else(|error| panic!("{tool} answers: {error}"))
}

fn text(result: &CallToolResult) -> String {
    result.content[0].as_text().expect("a text answer").text.clone()
}

fn json_of(result: &CallToolResult) -> Value {
    serde_json::from_str(&text(result)).unwrap_or_else(|_| panic!("JSON answer: {}", text(result)))
}

fn failed(result: &CallToolResult) -> bool {
    result.is_error == Some(true)
}

/// The scopes of a cashier's session token: their role's.
fn cashier_scopes() -> String {
    till_core::grant::Role::Cashier.default_grants().to_words()
}

async fn the_tools_follow_the_tiers_and_the_tokens_scopes(engine: Engine) {
    let server = TestServer::start(engine).await;
    let all_scopes = till_core::grant::GrantSet::all().to_words();
    let all: Vec<&str> = all_scopes.split(' ').collect();

    let admin = over_http(&server, &server.admin()).await;
    let tools = tool_names(&admin).await;
    assert_eq!(tools, documented_tools(&all));
    for never in [
        "finalizeSale",
        "requestElevationGrant",
        "openRegisterSession",
        "recordCashMovement",
        "sendMcpMessage",
    ] {
        assert!(!tools.contains(never), "{never} is offered");
    }
    assert!(tools.contains("putStore") && tools.contains("getSale") && tools.contains("closeFiscalPeriod"));
    admin.cancel().await.unwrap();

    // A till's session token: the cashier's scopes only.
    server.provision_store("s1").await;
    server.provision_staff("cashier-1", "cashier", "2468").await;
    let (_, session_token) = server.open_session("s1", "t1", "cashier-1", "2468").await;
    let cashier = over_http(&server, &session_token).await;
    let tools = tool_names(&cashier).await;
    assert_eq!(
        tools,
        documented_tools(&cashier_scopes().split(' ').collect::<Vec<_>>())
    );
    assert!(tools.contains("getSale") && tools.contains("createReturn") && tools.contains("priceCart"));
    assert!(!tools.contains("putStore") && !tools.contains("finalizeSale") && !tools.contains("requestElevationGrant"));
    cashier.cancel().await.unwrap();

    let reader = over_http(&server, &server.token("reader", "pos.catalog.read")).await;
    let tools = tool_names(&reader).await;
    assert_eq!(tools, documented_tools(&["pos.catalog.read"]));
    assert!(tools.contains("listCatalogItems") && !tools.contains("putCatalogItem"));
    reader.cancel().await.unwrap();
    server.stop().await;
}

async fn avoid_and_human_operations_cannot_be_called_by_name(engine: Engine) {
    let server = TestServer::start(engine).await;
    server.provision_store("s1").await;
    server.provision_staff("cashier-1", "cashier", "2468").await;
    let (session_id, session_token) = server.open_session("s1", "t1", "cashier-1", "2468").await;
    let cashier = over_http(&server, &session_token).await;
    let sale =
        json!({"body": {"transactionId": "t-mcp-1", "sessionId": session_id, "storeId": "s1", "registerId": "t1"}});
    let refused = call(&cashier, "finalizeSale", sale).await;
    assert!(
        failed(&refused) && text(&refused).contains("not a tool"),
        "{}",
        text(&refused)
    );
    let grant =
        json!({"body": {"managerSubject": "m", "pin": "1357", "operation": "discount.line", "amountCents": 100}});
    let refused = call(&cashier, "requestElevationGrant", grant).await;
    assert!(
        failed(&refused) && text(&refused).contains("not a tool"),
        "{}",
        text(&refused)
    );
    let unknown = cashier.call_tool(CallToolRequestParams::new("dropEverything")).await;
    assert!(unknown.is_err(), "an unknown tool is a protocol error");
    // A path argument stays in its segment: it cannot lead a tool to another route.
    let admin = over_http(&server, &server.admin()).await;
    let escape = call(&admin, "getStore", json!({"storeId": "../elevation-grants"})).await;
    assert!(failed(&escape));
    assert_eq!(json_of(&escape)["error"]["code"], "NOT_FOUND", "{}", text(&escape));
    admin.cancel().await.unwrap();
    // Nothing was sold and no approval was minted.
    assert_eq!(server.get("/v1/sales/t-mcp-1", &server.admin()).await.status, 404);
    assert_eq!(server.count_rows("elevation_grants").await, 0);
    cashier.cancel().await.unwrap();
    server.stop().await;
}

async fn an_allow_tool_answers_what_the_api_answers(engine: Engine) {
    let server = TestServer::start(engine).await;
    server.provision_store("paris-01").await;
    server.provision_store("lyon-02").await;
    let token = server.token("agent", "pos.catalog.read pos.stores.write");
    let client = over_http(&server, &token).await;

    let store = call(&client, "getStore", json!({"storeId": "paris-01"})).await;
    assert!(!failed(&store));
    assert_eq!(json_of(&store), server.get("/v1/stores/paris-01", &token).await.body);
    let page = call(&client, "listStores", json!({"limit": 1})).await;
    assert_eq!(json_of(&page), server.get("/v1/stores?limit=1", &token).await.body);
    assert_eq!(json_of(&page)["items"].as_array().unwrap().len(), 1);

    // The API's refusals come back as the API writes them.
    let missing = call(&client, "getStore", json!({"storeId": "nowhere"})).await;
    assert!(failed(&missing));
    assert_eq!(json_of(&missing), server.get("/v1/stores/nowhere", &token).await.body);
    let invalid = call(&client, "listStores", json!({"limit": 0})).await;
    assert!(failed(&invalid));
    assert_eq!(json_of(&invalid)["error"]["code"], "VALIDATION_FAILED");
    let typo = call(&client, "getStore", json!({"store": "paris-01"})).await;
    assert!(failed(&typo) && text(&typo).contains("`store`"), "{}", text(&typo));
    client.cancel().await.unwrap();
    server.stop().await;
}

/// The first call of a confirm tool, which must change nothing: its confirmation token.
async fn ask(client: &Client, tool: &str, arguments: &Value) -> String {
    let answer = call(client, tool, arguments.clone()).await;
    assert!(!failed(&answer), "{}", text(&answer));
    let summary = json_of(&answer);
    assert_eq!(summary["confirmationRequired"], true, "{summary}");
    assert_eq!(summary["tool"], tool);
    assert_eq!(summary["arguments"], *arguments);
    summary["confirmation"].as_str().expect("a token").to_owned()
}

fn confirmed(arguments: &Value, token: &str) -> Value {
    let mut arguments = arguments.clone();
    arguments["confirmation"] = Value::from(token);
    arguments
}

/// The confirm rules, the same on either transport.
async fn confirm_tools_act_once_when_confirmed(server: &TestServer, client: &Client) {
    let admin = server.admin();
    let paris = json!({"storeId": "paris-01", "body": {"name": "Paris"}});
    let token = ask(client, "putStore", &paris).await;
    assert_eq!(
        server.get("/v1/stores/paris-01", &admin).await.status,
        404,
        "the first call changed nothing"
    );

    // Bound to the arguments: other arguments are refused, and the token is spent.
    let lyon = json!({"storeId": "paris-01", "body": {"name": "Lyon"}});
    let refused = call(client, "putStore", confirmed(&lyon, &token)).await;
    assert!(
        failed(&refused) && text(&refused).contains("other arguments"),
        "{}",
        text(&refused)
    );
    let spent = call(client, "putStore", confirmed(&paris, &token)).await;
    assert!(
        failed(&spent) && text(&spent).contains("already used"),
        "{}",
        text(&spent)
    );
    // Bound to the operation.
    let token = ask(client, "putStore", &paris).await;
    let other = call(
        client,
        "putCoupon",
        json!({"code": "X", "body": {}, "confirmation": token}),
    )
    .await;
    assert!(failed(&other) && text(&other).contains("putStore"), "{}", text(&other));
    assert_eq!(server.get("/v1/stores/paris-01", &admin).await.status, 404);

    // The right token acts once, and answers what the API answers.
    let token = ask(client, "putStore", &paris).await;
    let done = call(client, "putStore", confirmed(&paris, &token)).await;
    assert!(!failed(&done), "{}", text(&done));
    let stored = server.get("/v1/stores/paris-01", &admin).await;
    assert_eq!(stored.status, 200);
    assert_eq!(json_of(&done), stored.body);
    assert!(done.content[1].as_text().unwrap().text.contains("201"));
    let again = call(client, "putStore", confirmed(&paris, &token)).await;
    assert!(
        failed(&again) && text(&again).contains("already used"),
        "{}",
        text(&again)
    );
    assert_eq!(server.get("/v1/stores/paris-01", &admin).await.body, stored.body);

    // A confirm tool without a body still waits: blocking a gift card.
    let card = server
        .post("/v1/gift-cards", &admin, json!({"balanceCents": 1000}))
        .await;
    assert_eq!(card.status, 201, "{}", card.text);
    let code = card.str("code");
    let block = json!({"code": code});
    let token = ask(client, "blockGiftCard", &block).await;
    let unblocked = server.get(&format!("/v1/gift-cards/{code}"), &admin).await;
    assert_eq!(unblocked.body["state"], "active", "{}", unblocked.text);
    let done = call(client, "blockGiftCard", confirmed(&block, &token)).await;
    assert!(!failed(&done), "{}", text(&done));
    assert_eq!(
        server.get(&format!("/v1/gift-cards/{code}"), &admin).await.body["state"],
        "blocked"
    );
}

async fn a_confirm_tool_acts_once_over_http(engine: Engine) {
    let server = TestServer::start(engine).await;
    let client = over_http(&server, &server.admin()).await;
    confirm_tools_act_once_when_confirmed(&server, &client).await;

    // Two nodes handed one token at once: exactly one acts.
    let renamed = json!({"storeId": "paris-01", "body": {"name": "Paris Centre"}});
    let token = ask(&client, "putStore", &renamed).await;
    let second = over_http(&server, &server.admin()).await;
    let (a, b) = tokio::join!(
        call(&client, "putStore", confirmed(&renamed, &token)),
        call(&second, "putStore", confirmed(&renamed, &token)),
    );
    assert_eq!(
        [failed(&a), failed(&b)].iter().filter(|f| !**f).count(),
        1,
        "{} / {}",
        text(&a),
        text(&b)
    );
    second.cancel().await.unwrap();
    client.cancel().await.unwrap();
    server.stop().await;
}

async fn a_confirm_tool_acts_once_over_stdio(engine: Engine) {
    let server = TestServer::start(engine).await;
    let stdio = over_stdio(&server, &server.admin()).await;
    let all_scopes = till_core::grant::GrantSet::all().to_words();
    let all: Vec<&str> = all_scopes.split(' ').collect();
    assert_eq!(tool_names(&stdio.client).await, documented_tools(&all));
    confirm_tools_act_once_when_confirmed(&server, &stdio.client).await;
    let store = call(&stdio.client, "getStore", json!({"storeId": "paris-01"})).await;
    assert_eq!(
        json_of(&store),
        server.get("/v1/stores/paris-01", &server.admin()).await.body
    );
    let refused = call(&stdio.client, "finalizeSale", json!({"body": {}})).await;
    assert!(failed(&refused) && text(&refused).contains("not a tool"));
    stdio.close().await;

    // A cashier's session token over stdio sees the cashier's tools only.
    server.provision_staff("cashier-1", "cashier", "2468").await;
    let (_, session_token) = server.open_session("paris-01", "t1", "cashier-1", "2468").await;
    let stdio = over_stdio(&server, &session_token).await;
    let cashier: Vec<String> = cashier_scopes().split(' ').map(str::to_owned).collect();
    let cashier: Vec<&str> = cashier.iter().map(String::as_str).collect();
    assert_eq!(tool_names(&stdio.client).await, documented_tools(&cashier));
    stdio.close().await;

    let (ok, output) = server.run_till(&["mcp", "--token", "not-a-token"]);
    assert!(!ok && output.contains("the token is refused"), "{output}");
    server.stop().await;
}

async fn a_token_bounds_what_its_tools_may_do(engine: Engine) {
    let server = TestServer::start(engine).await;
    server.provision_store("paris-01").await;
    let reader_token = server.token("reader", "pos.catalog.read");
    let reader = over_http(&server, &reader_token).await;

    // A tool outside the token's scopes answers the API's own refusal.
    let staff = call(&reader, "listStaffMembers", json!({})).await;
    assert!(failed(&staff));
    assert_eq!(json_of(&staff), server.get("/v1/staff", &reader_token).await.body);
    assert_eq!(json_of(&staff)["error"]["code"], "FORBIDDEN");
    // A confirm tool outside them hands out no token.
    let put = call(
        &reader,
        "putStore",
        json!({"storeId": "lyon-02", "body": {"name": "Lyon"}}),
    )
    .await;
    assert!(failed(&put));
    assert_eq!(json_of(&put)["error"]["code"], "FORBIDDEN");
    assert_eq!(server.count_rows("mcp_confirmations").await, 0);

    // A token issued to one caller does nothing for another.
    let manager = over_http(&server, &server.token("manager", "pos.stores.write")).await;
    let lyon = json!({"storeId": "lyon-02", "body": {"name": "Lyon"}});
    let token = ask(&manager, "putStore", &lyon).await;
    let intruder = over_http(&server, &server.token("intruder", "pos.stores.write")).await;
    let refused = call(&intruder, "putStore", confirmed(&lyon, &token)).await;
    assert!(
        failed(&refused) && text(&refused).contains("another caller"),
        "{}",
        text(&refused)
    );
    assert_eq!(server.get("/v1/stores/lyon-02", &server.admin()).await.status, 404);
    for client in [reader, manager, intruder] {
        client.cancel().await.unwrap();
    }
    server.stop().await;
}

/// `/v1/mcp` reads its body as every route does and refuses in the envelope.
async fn the_endpoint_is_as_strict_as_the_api(engine: Engine) {
    let server = TestServer::start(engine).await;
    let token = server.admin();
    let post = |body: Value| {
        let token = token.clone();
        server.send(move |http, base| http.post(format!("{base}/v1/mcp")).bearer_auth(token).json(&body))
    };
    let anonymous = server
        .call(reqwest::Method::POST, "/v1/mcp", None, Some(json!({})))
        .await;
    anonymous.assert_error(401, "UNAUTHORIZED");
    let scopeless = server.token("nobody", "");
    let refused = server
        .send(|http, base| {
            http.post(format!("{base}/v1/mcp"))
                .bearer_auth(scopeless)
                .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        })
        .await;
    refused.assert_error(403, "FORBIDDEN");

    let reply = post(json!({"jsonrpc": "1.0", "id": 1, "method": "tools/list"})).await;
    reply.assert_error(400, "VALIDATION_FAILED");
    assert_eq!(reply.fields(), vec!["jsonrpc"]);
    let reply = post(json!([{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}])).await;
    reply.assert_error(400, "VALIDATION_FAILED");
    let reply = post(json!({"jsonrpc": "2.0", "id": 1.5, "method": "tools/list", "params": []})).await;
    reply.assert_error(400, "VALIDATION_FAILED");
    assert_eq!(reply.fields(), vec!["id", "params"]);

    // A well-formed request: answered in JSON-RPC, whatever its method or params.
    let reply = post(json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list"})).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert!(
        reply.body["result"]["tools"]
            .as_array()
            .is_some_and(|tools| !tools.is_empty())
    );
    let reply = post(json!({"jsonrpc": "2.0", "id": "a", "method": "tools/call", "params": {}})).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.body["id"], "a");
    assert!(
        reply.body["error"]["code"].as_i64().is_some_and(|code| code < 0),
        "{}",
        reply.text
    );
    let reply = post(json!({"jsonrpc": "2.0", "id": "b", "method": "tools/list", "params": {"_meta": 5}})).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(
        (reply.body["id"].clone(), reply.body["error"]["code"].clone()),
        (json!("b"), json!(-32602))
    );
    let reply = post(json!({"jsonrpc": "2.0", "id": 8, "method": "no/such/method"})).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.body["error"]["code"], -32601);
    let reply = post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    assert_eq!(reply.status, 202, "{}", reply.text);

    // What the transport refuses comes back in the envelope too.
    let reply = server
        .send(|http, base| {
            http.post(format!("{base}/v1/mcp"))
                .bearer_auth(server.admin())
                .header("mcp-protocol-version", "1999-01-01")
                .json(&json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}))
        })
        .await;
    reply.assert_error(400, "VALIDATION_FAILED");
    let reply = server.get("/v1/mcp", &token).await;
    reply.assert_error(405, "METHOD_NOT_ALLOWED");
    server.stop().await;
}

on_both_engines!(
    the_tools_follow_the_tiers_and_the_tokens_scopes,
    avoid_and_human_operations_cannot_be_called_by_name,
    an_allow_tool_answers_what_the_api_answers,
    a_confirm_tool_acts_once_over_http,
    a_confirm_tool_acts_once_over_stdio,
    a_token_bounds_what_its_tools_may_do,
    the_endpoint_is_as_strict_as_the_api,
);
