//! A real SMTP server for the e-receipts' tests: Python's aiosmtpd, keeping every mail it
//! accepts in a Maildir the tests read. scripts/test installs it and names its Python in
//! `TILL_TEST_PYTHON`; without it, the `python3` on the path must have it.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct MailSink {
    child: Child,
    dir: tempfile::TempDir,
    pub port: u16,
}

/// A port on the loopback that nothing listens on now.
pub fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
    listener.local_addr().expect("its address").port()
}

impl MailSink {
    /// Starts a sink on `port` and waits until it accepts connections.
    pub fn start(port: u16) -> MailSink {
        let dir = tempfile::tempdir().expect("a Maildir");
        let python = std::env::var("TILL_TEST_PYTHON").unwrap_or_else(|_| "python3".to_owned());
        let child = Command::new(python)
            .args(["-m", "aiosmtpd", "-n", "-l", &format!("127.0.0.1:{port}")])
            .args(["-c", "aiosmtpd.handlers.Mailbox"])
            .arg(dir.path().join("mail"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3 with aiosmtpd (scripts/test installs it) starts an SMTP server");
        let sink = MailSink { child, dir, port };
        let address = SocketAddr::from(([127, 0, 0, 1], port));
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect_timeout(&address, Duration::from_millis(200)).is_err() {
            assert!(Instant::now() < deadline, "the SMTP sink did not start on port {port}");
            std::thread::sleep(Duration::from_millis(50));
        }
        sink
    }

    /// The URL a server sends through to reach this sink.
    pub fn url(&self) -> String {
        format!("smtp://127.0.0.1:{}", self.port)
    }

    /// Every mail accepted so far, as received.
    pub fn mails(&self) -> Vec<Vec<u8>> {
        let new: PathBuf = self.dir.path().join("mail").join("new");
        let Ok(entries) = std::fs::read_dir(new) else {
            return Vec::new();
        };
        entries
            .filter_map(Result::ok)
            .filter_map(|entry| std::fs::read(entry.path()).ok())
            .collect()
    }

    /// Waits until `count` mails arrived (or a while passed), and answers them all.
    pub async fn wait_for(&self, count: usize) -> Vec<Vec<u8>> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let mails = self.mails();
            if mails.len() >= count || Instant::now() > deadline {
                return mails;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for MailSink {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
