//! A database URL that names several hosts, as libpq takes it:
//! `postgres://till:…@db1:5432,db2:5432,db3:5432/till?target_session_attrs=read-write`.
//! The driver connects to one host, so the node finds the primary among them itself: at start,
//! the first host that is not in recovery; then a watch that asks the primary it uses once a
//! second whether it still is, and looks again among all the hosts when it is not (it died, or
//! a failover made it a standby). When the primary changes, the pool connects to the new one
//! and lets go of the connections it made before; requests meanwhile get a 503, and tills send
//! them again.

use crate::error::StoreError;
use sqlx::AnyPool;
use sqlx::any::AnyConnectOptions;
use sqlx::{Connection, Row};
use std::str::FromStr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a host may take to answer whether it is the primary.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// The hosts a URL names, each as a URL of its own.
#[derive(Clone, Debug)]
pub(crate) struct Hosts {
    urls: Vec<String>,
}

impl Hosts {
    /// The hosts of `url`, when it names more than one; `None` for a URL of one host, which
    /// the driver takes as it is. Several hosts need `target_session_attrs=read-write`: till
    /// writes, so only the primary will do.
    pub(crate) fn of(url: &str) -> Result<Option<Hosts>, StoreError> {
        let bad = |why: &str| StoreError::Config(format!("the database URL {why}"));
        let (scheme, rest) = url.split_once("://").ok_or_else(|| bad("has no scheme"))?;
        let (credentials, rest) = match rest.rsplit_once('@') {
            Some((credentials, rest)) => (Some(credentials), rest),
            None => (None, rest),
        };
        let (authority, path) = match rest.find(['/', '?']) {
            Some(at) => rest.split_at(at),
            None => (rest, ""),
        };
        if !authority.contains(',') {
            return Ok(None);
        }
        let (path, query) = match path.split_once('?') {
            Some((path, query)) => (path, query),
            None => (path, ""),
        };
        let mut kept = Vec::new();
        let mut read_write = false;
        for pair in query.split('&').filter(|pair| !pair.is_empty()) {
            match pair.split_once('=') {
                Some(("target_session_attrs", "read-write")) => read_write = true,
                Some(("target_session_attrs", _)) => {
                    return Err(bad("asks for a target_session_attrs other than read-write"));
                }
                _ => kept.push(pair),
            }
        }
        if !read_write {
            return Err(bad("names several hosts without target_session_attrs=read-write"));
        }
        let query = match kept.is_empty() {
            true => String::new(),
            false => format!("?{}", kept.join("&")),
        };
        let urls = authority
            .split(',')
            .map(|host| match (host.is_empty(), credentials) {
                (true, _) => Err(bad("names an empty host")),
                (false, Some(credentials)) => Ok(format!("{scheme}://{credentials}@{host}{path}{query}")),
                (false, None) => Ok(format!("{scheme}://{host}{path}{query}")),
            })
            .collect::<Result<_, _>>()?;
        Ok(Some(Hosts { urls }))
    }

    /// The URL of the primary: of the hosts that answer and are not in recovery, the one on
    /// the latest timeline (a primary that a failover left behind, not yet demoted, is on an
    /// older one).
    pub(crate) async fn primary(&self) -> Result<&str, StoreError> {
        let mut best: Option<(i64, &str)> = None;
        for url in &self.urls {
            if let Ok(Some(timeline)) = tokio::time::timeout(PROBE_TIMEOUT, primary_timeline(url))
                .await
                .unwrap_or(Ok(None))
                && best.is_none_or(|(latest, _)| timeline > latest)
            {
                best = Some((timeline, url));
            }
        }
        best.map(|(_, url)| url).ok_or_else(|| {
            crate::error::db(sqlx::Error::Io(std::io::Error::other(
                "no host of the database URL is a primary",
            )))
        })
    }
}

/// The timeline of the server at `url` when it is a primary; `None` when it is in recovery.
async fn primary_timeline(url: &str) -> Result<Option<i64>, sqlx::Error> {
    let mut conn = sqlx::AnyConnection::connect(url).await?;
    let row = sqlx::query(
        "SELECT CASE WHEN pg_is_in_recovery() THEN 0 ELSE 1 END AS primary_now, \
         (SELECT timeline_id::bigint FROM pg_control_checkpoint()) AS timeline",
    )
    .fetch_one(&mut conn)
    .await?;
    let primary: i32 = row.try_get("primary_now")?;
    let timeline: i64 = row.try_get("timeline")?;
    conn.close().await?;
    Ok((primary == 1).then_some(timeline))
}

/// How often every host is asked, even while the primary in use answers: a failover may have
/// promoted another while the one in use, cut off, still believes it leads.
const SCAN_EVERY: Duration = Duration::from_secs(5);

/// The primary a pool connects to, and when it last moved: connections made before are let go.
pub(crate) struct Follower {
    hosts: Hosts,
    state: Mutex<Followed>,
}

struct Followed {
    current: String,
    moved_at: Option<Instant>,
    scanned_at: Instant,
}

impl Follower {
    /// Finds the primary among `hosts` and follows it from there.
    pub(crate) async fn start(hosts: Hosts) -> Result<(Follower, String), StoreError> {
        let current = hosts.primary().await?.to_owned();
        let state = Followed {
            current: current.clone(),
            moved_at: None,
            scanned_at: Instant::now(),
        };
        Ok((
            Follower {
                hosts,
                state: Mutex::new(state),
            },
            current,
        ))
    }

    /// Whether a connection `age` old was made before the pool last moved.
    pub(crate) fn predates_move(&self, age: Duration) -> bool {
        self.state().moved_at.is_some_and(|at| age > at.elapsed())
    }

    fn state(&self) -> std::sync::MutexGuard<'_, Followed> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Asks the primary in use whether it still is (every host, every [`SCAN_EVERY`]), and
    /// moves `pool` to another host that is; answers 1 when it moved.
    pub(crate) async fn follow(&self, pool: &AnyPool) -> Result<u64, StoreError> {
        let (current, scan) = {
            let state = self.state();
            (state.current.clone(), state.scanned_at.elapsed() >= SCAN_EVERY)
        };
        let still = tokio::time::timeout(PROBE_TIMEOUT, primary_timeline(&current)).await;
        if matches!(still, Ok(Ok(Some(_)))) && !scan {
            return Ok(0);
        }
        self.state().scanned_at = Instant::now();
        let primary = self.hosts.primary().await?;
        if primary == current {
            return Ok(0);
        }
        let options = AnyConnectOptions::from_str(primary).map_err(crate::error::db)?;
        pool.set_connect_options(options);
        let mut state = self.state();
        state.current = primary.to_owned();
        state.moved_at = Some(Instant::now());
        tracing::warn!(host = %host_of(primary), "the database's primary moved; connecting there");
        Ok(1)
    }
}

/// `host:port` of a one-host URL, for the log (never its credentials).
fn host_of(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let rest = rest.rsplit_once('@').map_or(rest, |(_, rest)| rest);
    rest.split(['/', '?']).next().unwrap_or(rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_of_several_hosts_becomes_one_url_per_host() {
        let hosts =
            Hosts::of("postgres://till:pw@db1:5432,db2:5433/till?target_session_attrs=read-write&sslmode=disable")
                .unwrap()
                .unwrap();
        assert_eq!(
            hosts.urls,
            [
                "postgres://till:pw@db1:5432/till?sslmode=disable",
                "postgres://till:pw@db2:5433/till?sslmode=disable"
            ]
        );
        assert!(Hosts::of("postgres://till:pw@db1:5432/till").unwrap().is_none());
    }

    #[test]
    fn several_hosts_need_the_primary_asked_for() {
        for url in [
            "postgres://till:pw@db1,db2/till",
            "postgres://till:pw@db1,db2/till?target_session_attrs=any",
            "postgres://till:pw@db1,,db2/till?target_session_attrs=read-write",
        ] {
            assert!(matches!(Hosts::of(url), Err(StoreError::Config(_))), "{url}");
        }
    }

    #[test]
    fn the_log_names_the_host_never_the_password() {
        assert_eq!(host_of("postgres://till:s3cret@db2:5433/till?x=1"), "db2:5433");
    }
}
