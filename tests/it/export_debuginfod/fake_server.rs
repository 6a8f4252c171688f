//! A hostile debuginfod server: a thread answering canned HTTP responses
//! on 127.0.0.1 (loopback only). It answers at most [`MAX_REQUESTS`]
//! requests, each within [`IO_LIMIT`] per read or write and [`ENDLESS_CAP`]
//! bytes, and is stopped and joined when dropped, a failing test included.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// The requests one server answers before it stops by itself.
const MAX_REQUESTS: usize = 64;
/// How long one read or write of a connection may wait.
const IO_LIMIT: Duration = Duration::from_secs(10);
/// The most an endless answer writes before it ends after all (a client
/// that reads without a limit then has a whole, wrong answer).
const ENDLESS_CAP: u64 = 64 << 20;

/// What the server answers to a request.
pub enum Answer {
    /// A status line (`404 Not Found`), a content type and a body, with
    /// its Content-Length.
    Canned(&'static str, &'static str, Vec<u8>),
    /// 200 with zeros without end (up to [`ENDLESS_CAP`]), declaring the
    /// given Content-Length, or none.
    Endless(Option<u64>),
}

/// The server, stopped and joined when dropped.
pub struct FakeServer {
    addr: SocketAddr,
    asked: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl FakeServer {
    /// Listening on a free port of 127.0.0.1, answering each request path
    /// with `answer(path)`.
    pub fn start(answer: impl Fn(&str) -> Answer + Send + 'static) -> FakeServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let addr = listener.local_addr().unwrap();
        let asked = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (a, s) = (asked.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            for conn in listener.incoming().take(MAX_REQUESTS) {
                if s.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                if let Some(path) = serve(conn, &answer) {
                    a.lock().unwrap().push(path);
                }
            }
        });
        FakeServer {
            addr,
            asked,
            stop,
            thread: Some(thread),
        }
    }

    /// Its URL, for DEBUGINFOD_URLS.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The paths asked for so far, in order.
    pub fn asked(&self) -> Vec<String> {
        self.asked.lock().unwrap().clone()
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accept the thread may wait in; it sees `stop` and ends.
        let _ = TcpStream::connect_timeout(&self.addr, IO_LIMIT);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Reads one request's head from `conn` and answers it; the path asked for.
fn serve(mut conn: TcpStream, answer: &impl Fn(&str) -> Answer) -> Option<String> {
    conn.set_read_timeout(Some(IO_LIMIT)).ok()?;
    conn.set_write_timeout(Some(IO_LIMIT)).ok()?;
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = conn.read(&mut buf).ok().filter(|&n| n > 0)?;
        head.extend_from_slice(&buf[..n]);
        if head.len() > 64 << 10 {
            return None;
        }
    }
    let head = String::from_utf8_lossy(&head);
    let path = head.split(' ').nth(1)?.to_string();
    let _ = match answer(&path) {
        Answer::Canned(status, kind, body) => {
            let h = format!(
                "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            conn.write_all(h.as_bytes())
                .and_then(|()| conn.write_all(&body))
        }
        Answer::Endless(declared) => endless(&mut conn, declared),
    };
    Some(path)
}

/// 200 and zeros until the client goes away or [`ENDLESS_CAP`] is written.
fn endless(conn: &mut TcpStream, declared: Option<u64>) -> std::io::Result<()> {
    let length = declared.map_or(String::new(), |n| format!("Content-Length: {n}\r\n"));
    let h = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n{length}Connection: close\r\n\r\n"
    );
    conn.write_all(h.as_bytes())?;
    let zeros = vec![0u8; 64 << 10];
    let mut written = 0;
    while written < ENDLESS_CAP {
        conn.write_all(&zeros)?;
        written += zeros.len() as u64;
    }
    Ok(())
}
