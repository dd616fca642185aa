//! A throwaway `nats-server -js` for tests and the `remote` benchmark
//! (feature `nats`).
//!
//! [`NatsServer::start`] runs the server on a random loopback port with a
//! fresh store directory and small JetStream limits, waits until it says it
//! is ready, and kills it (and removes the store) when dropped.
//! [`NatsServer::stop`] and [`NatsServer::restart`] kill it and start it
//! again on the same port with the same store, to test reconnects.
//!
//! The binary is `$NATS_SERVER`, else `nats-server` on the `PATH`, else
//! `/usr/sbin/nats-server` (where Debian's package puts it).

use std::io::{self, BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long the server may take to say it is ready.
const READY_TIMEOUT: Duration = Duration::from_secs(20);

/// A running `nats-server -js` on loopback, killed on drop.
#[derive(Debug)]
pub struct NatsServer {
    child: Option<Child>,
    port: u16,
    dir: PathBuf,
}

impl NatsServer {
    /// Start a server on a random loopback port with a fresh store
    /// directory, and wait until it accepts clients with JetStream on.
    ///
    /// # Errors
    ///
    /// The server binary is missing, or it exits or stays silent for 20 s
    /// before it is ready.
    pub fn start() -> io::Result<Self> {
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = std::env::temp_dir().join(format!(
            "weir-nats-{}-{}-{nanos}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(dir.join("store"))?;
        let mut server = Self {
            child: None,
            port: 0,
            dir,
        };
        // Port -1: the server picks a free one and logs it.
        server.spawn(-1)?;
        Ok(server)
    }

    /// The client URL, `nats://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// The port clients connect to (the same across restarts).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The JetStream store directory (kept across restarts).
    pub fn store_dir(&self) -> PathBuf {
        self.dir.join("store")
    }

    /// Kill the server (SIGKILL: no graceful shutdown) and wait for it.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Start the server again on the same port with the same store (after
    /// [`stop`](Self::stop), or killing it first if it runs).
    ///
    /// # Errors
    ///
    /// As [`start`](Self::start); also when the port was taken meanwhile.
    pub fn restart(&mut self) -> io::Result<()> {
        self.stop();
        self.spawn(i32::from(self.port))
    }

    fn spawn(&mut self, port: i32) -> io::Result<()> {
        let config = self.dir.join("server.conf");
        std::fs::write(
            &config,
            format!(
                "listen: \"127.0.0.1:{port}\"\n\
                 jetstream {{\n  store_dir: {:?}\n  max_memory_store: 64MB\n  max_file_store: 512MB\n}}\n\
                 max_payload: 1MB\n",
                self.store_dir().display().to_string()
            ),
        )?;
        let mut child = Command::new(binary())
            .arg("-js")
            .arg("-c")
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()?;
        let stderr = child.stderr.take().expect("piped stderr");
        let (lines_tx, lines) = mpsc::channel();
        // Keep draining the log so the server never blocks on a full pipe.
        std::thread::Builder::new()
            .name("nats-server-log".into())
            .spawn(move || {
                for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                    let _ = lines_tx.send(line);
                }
            })?;
        let deadline = Instant::now() + READY_TIMEOUT;
        let mut port_seen = None;
        let mut log = String::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match lines.recv_timeout(left) {
                Ok(line) => {
                    if let Some(at) = line.find("Listening for client connections on ") {
                        let addr = &line[at + "Listening for client connections on ".len()..];
                        port_seen = addr.rsplit(':').next().and_then(|p| p.trim().parse().ok());
                    }
                    if line.contains("Server is ready") {
                        break;
                    }
                    log.push_str(&line);
                    log.push('\n');
                }
                Err(_) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(io::Error::other(format!(
                        "nats-server did not become ready:\n{log}"
                    )));
                }
            }
        }
        self.port = port_seen
            .ok_or_else(|| io::Error::other(format!("nats-server logged no port:\n{log}")))?;
        self.child = Some(child);
        Ok(())
    }
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The server binary: `$NATS_SERVER`, `nats-server` on the `PATH`, or
/// Debian's `/usr/sbin/nats-server`.
fn binary() -> PathBuf {
    if let Some(path) = std::env::var_os("NATS_SERVER") {
        return path.into();
    }
    let debian = Path::new("/usr/sbin/nats-server");
    let on_path = std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).any(|dir| dir.join("nats-server").is_file()))
        .unwrap_or(false);
    if !on_path && debian.is_file() {
        return debian.into();
    }
    "nats-server".into()
}
