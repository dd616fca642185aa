//! TCP on tokio (loopback only): echo (with a server made of Weir stages), refused connection, address in use, half-close, peer reset and back-pressure. Runs with `--features tokio`.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use weir_interop::Tcp;
use weir_streams::io::{Bytes, IoError, StreamConverters};
use weir_streams::prelude::*;

const PATIENCE: Duration = Duration::from_secs(10);
const QUIET: Duration = Duration::from_millis(300);

/// Whether `cond` holds within `timeout`, polling.
fn eventually(timeout: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if cond() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_io()
        .build()
        .expect("a runtime")
}

fn system(name: &str) -> (weir_actor::ActorSystem, Materializer) {
    let system = weir_actor::ActorSystem::new(name).expect("a valid name");
    let materializer = Materializer::new(&system);
    (system, materializer)
}

/// A std echo server for one connection; the bytes it echoed.
fn echo_server() -> (SocketAddr, std::thread::JoinHandle<usize>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("loopback");
    let addr = listener.local_addr().expect("an address");
    let server = std::thread::spawn(move || {
        let (mut socket, _) = listener.accept().expect("a connection");
        let mut buf = vec![0; 64 * 1024];
        let mut total = 0;
        loop {
            match socket.read(&mut buf) {
                Ok(0) | Err(_) => return total,
                Ok(n) => {
                    total += n;
                    if socket.write_all(&buf[..n]).is_err() {
                        return total;
                    }
                }
            }
        }
    });
    (addr, server)
}

fn concat() -> Sink<Bytes, Completion<Vec<u8>>> {
    Sink::fold(Vec::new(), |mut all: Vec<u8>, chunk: Bytes| {
        all.extend_from_slice(&chunk);
        all
    })
}

#[test]
fn a_connection_echoes_many_chunks_in_order() {
    let rt = runtime();
    let (system, m) = system("tcp-echo");
    let (addr, server) = echo_server();
    let chunks: Vec<Bytes> = (0..500u32)
        .map(|i| Bytes::from(vec![(i % 251) as u8; 1024 + (i as usize % 7)]))
        .collect();
    let expected: Vec<u8> = chunks.concat();
    let (connected, echoed) = Source::from_iter(chunks)
        .via_mat(Tcp::outgoing_connection(rt.handle(), addr), Keep::right)
        .to_mat(concat(), Keep::both)
        .run(&m);
    let connection = connected.wait_timeout(PATIENCE).expect("connects").unwrap();
    assert_eq!(connection.remote_addr, addr);
    // Upstream's end half-closes; the server sees EOF, closes, and the flow completes.
    assert_eq!(
        echoed.wait_timeout(PATIENCE).expect("completes"),
        Ok(expected.clone())
    );
    assert_eq!(server.join().unwrap(), expected.len());
    system.terminate().wait().unwrap();
}

#[test]
fn a_refused_connection_fails_the_flow_and_the_completion() {
    let rt = runtime();
    let (system, m) = system("tcp-refused");
    let addr = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap(); // closed at once
    let (connected, out) = Source::single(Bytes::from_static(b"x"))
        .via_mat(Tcp::outgoing_connection(rt.handle(), addr), Keep::right)
        .to_mat(Sink::collect(), Keep::both)
        .run(&m);
    let error = connected.wait_timeout(PATIENCE).expect("ends").unwrap_err();
    let io = IoError::of(&error).expect("an IO error");
    assert_eq!(
        (io.operation(), io.kind()),
        ("connect", std::io::ErrorKind::ConnectionRefused)
    );
    let error = out.wait_timeout(PATIENCE).expect("ends").unwrap_err();
    assert_eq!(IoError::of(&error).map(IoError::operation), Some("connect"));
    system.terminate().wait().unwrap();
}

#[test]
fn half_close_lets_the_peer_answer_after_our_end() {
    let rt = runtime();
    let (system, m) = system("tcp-half-close");
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let server = std::thread::spawn(move || {
        let (mut socket, _) = listener.accept().unwrap();
        let mut request = Vec::new();
        socket.read_to_end(&mut request).unwrap(); // until our half-close
        socket
            .write_all(format!("got {} bytes", request.len()).as_bytes())
            .unwrap();
        request
    });
    let answer = Source::from_iter(vec![Bytes::from_static(b"abc"), Bytes::from_static(b"de")])
        .via(Tcp::outgoing_connection(rt.handle(), addr))
        .run_with(concat(), &m);
    assert_eq!(
        answer.wait_timeout(PATIENCE).expect("completes"),
        Ok(b"got 5 bytes".to_vec())
    );
    assert_eq!(server.join().unwrap(), b"abcde");
    system.terminate().wait().unwrap();
}

#[test]
fn a_peer_reset_fails_the_flow_with_the_read_error() {
    let rt = runtime();
    let (system, m) = system("tcp-reset");
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let server = std::thread::spawn(move || {
        let (socket, _) = listener.accept().unwrap();
        // Closing with unread data makes the kernel send a reset.
        let mut one = [0u8; 1];
        socket.peek(&mut one).unwrap();
        drop(socket);
    });
    let (queue, out) = Source::<Bytes, _>::queue(4)
        .unwrap()
        .via(Tcp::outgoing_connection(rt.handle(), addr))
        .to_mat(Sink::ignore(), Keep::both)
        .run(&m);
    assert_eq!(
        queue.offer(Bytes::from_static(b"unread")),
        weir_streams::QueueOfferResult::Enqueued
    );
    server.join().unwrap();
    let error = out.wait_timeout(PATIENCE).expect("ends").unwrap_err();
    let io = IoError::of(&error).expect("an IO error");
    assert_eq!(io.kind(), std::io::ErrorKind::ConnectionReset, "{error}");
    system.terminate().wait().unwrap();
}

#[test]
fn a_slow_reader_stops_the_writer() {
    let rt = runtime();
    let (system, m) = system("tcp-backpressure");
    let (addr, _server) = echo_server();
    let sent = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&sent);
    let chunk = Bytes::from(vec![7u8; 64 * 1024]);
    let mut reader = Source::repeat(chunk)
        .map(move |c: Bytes| {
            counter.fetch_add(c.len(), Ordering::SeqCst);
            c
        })
        .via(Tcp::outgoing_connection(rt.handle(), addr))
        .run_with(StreamConverters::as_read_with_timeout(PATIENCE), &m);
    assert!(eventually(PATIENCE, || sent.load(Ordering::SeqCst) > 0));
    // Nobody reads: the socket buffers fill and writing stops.
    let deadline = Instant::now() + PATIENCE;
    let stalled_at = loop {
        let at = sent.load(Ordering::SeqCst);
        if !eventually(QUIET, || sent.load(Ordering::SeqCst) != at) {
            break at;
        }
        assert!(Instant::now() < deadline, "the writer never stopped");
    };
    assert!(
        stalled_at < 256 << 20,
        "{stalled_at} bytes sent with nobody reading"
    );
    // Reading lets it go on.
    let mut buf = vec![0u8; 8 << 20];
    reader.read_exact(&mut buf).unwrap();
    assert!(eventually(PATIENCE, || sent.load(Ordering::SeqCst) > stalled_at));
    drop(reader);
    system.terminate().wait().unwrap();
}

/// An echo server made of Weir stages; each connection's handler is `handler()`.
fn weir_server(
    rt: &tokio::runtime::Runtime,
    m: &Materializer,
    handler: fn() -> Flow<Bytes, Bytes>,
) -> (SocketAddr, Arc<std::sync::Mutex<Vec<Completion<u64>>>>) {
    let handled = Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = Arc::clone(&handled);
    let server_mat = m.clone();
    let bound = Tcp::bind(rt.handle(), "127.0.0.1:0".parse().unwrap())
        .to(Sink::for_each(
            move |connection: weir_interop::IncomingConnection| {
                let done = connection.handle_with(handler(), &server_mat);
                record.lock().unwrap().push(done);
            },
        ))
        .run(m);
    let addr = bound
        .wait_timeout(PATIENCE)
        .expect("binds")
        .unwrap()
        .local_addr;
    (addr, handled)
}

#[test]
fn a_weir_echo_server_serves_weir_clients() {
    let rt = runtime();
    let (system, m) = system("tcp-weir-echo");
    let (addr, handled) = weir_server(&rt, &m, Flow::new);
    let clients: Vec<_> = (0..4u8)
        .map(|c| {
            let chunks: Vec<Bytes> = (0..100).map(|i| Bytes::from(vec![c ^ i; 1000])).collect();
            let expected = chunks.concat();
            let echoed = Source::from_iter(chunks)
                .via(Tcp::outgoing_connection(rt.handle(), addr))
                .run_with(concat(), &m);
            (echoed, expected)
        })
        .collect();
    for (echoed, expected) in clients {
        assert_eq!(
            echoed.wait_timeout(PATIENCE).expect("completes"),
            Ok(expected)
        );
    }
    assert!(eventually(PATIENCE, || handled.lock().unwrap().len() == 4));
    for done in handled.lock().unwrap().drain(..) {
        assert_eq!(done.wait_timeout(PATIENCE).expect("ends"), Ok(100_000));
    }
    system.terminate().wait().unwrap();
}

#[test]
fn a_server_handler_can_frame_lines() {
    let rt = runtime();
    let (system, m) = system("tcp-lines");
    let shout = || {
        Flow::new()
            .via(weir_streams::io::Framing::delimiter(b"\n", 1024, true).unwrap())
            .map(|line: Bytes| {
                let mut up = line.to_ascii_uppercase();
                up.push(b'\n');
                Bytes::from(up)
            })
    };
    let (addr, _handled) = weir_server(&rt, &m, shout);
    let mut client = std::net::TcpStream::connect(addr).unwrap();
    client.write_all(b"one\ntw").unwrap();
    client.write_all(b"o\nthree").unwrap();
    client.shutdown(std::net::Shutdown::Write).unwrap();
    let mut answer = String::new();
    client.read_to_string(&mut answer).unwrap();
    assert_eq!(answer, "ONE\nTWO\nTHREE\n");
    system.terminate().wait().unwrap();
}

#[test]
fn binding_an_address_in_use_fails_with_the_bind_error() {
    let rt = runtime();
    let (system, m) = system("tcp-in-use");
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let bound = Tcp::bind(rt.handle(), taken.local_addr().unwrap())
        .to(Sink::ignore())
        .run(&m);
    let error = bound.wait_timeout(PATIENCE).expect("ends").unwrap_err();
    let io = IoError::of(&error).expect("an IO error");
    assert_eq!(
        (io.operation(), io.kind()),
        ("bind", std::io::ErrorKind::AddrInUse)
    );
    system.terminate().wait().unwrap();
}

#[test]
fn a_connection_not_made_in_time_fails_with_timed_out() {
    // A listener whose accept queue (backlog 0: one connection) is full
    // drops further SYNs, so a connect to it stays pending; the timeout
    // runs on the test clock, so nothing here waits for it.
    let rt = runtime();
    let clock = weir_actor::testkit::TestClock::new();
    let system = weir_actor::ActorSystem::builder()
        .name("tcp-connect-timeout")
        .clock(clock.clone())
        .build()
        .unwrap();
    let m = Materializer::new(&system);
    let listener = {
        let _enter = rt.enter();
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
        socket.listen(0).unwrap()
    };
    let addr = listener.local_addr().unwrap();
    let _filler = std::net::TcpStream::connect(addr).expect("the queue's one place");
    let timeout = Duration::from_secs(5);
    let settings = weir_interop::ConnectionSettings::new().with_connect_timeout(timeout);
    let (mut connected, done) = Source::<Bytes>::empty()
        .via_mat(
            Tcp::outgoing_connection_with(rt.handle(), addr, settings),
            Keep::right,
        )
        .to_mat(Sink::ignore(), Keep::both)
        .run(&m);
    // The stage schedules its timer when it starts: advance until it fires.
    let deadline = Instant::now() + PATIENCE;
    let error = loop {
        clock.advance(timeout);
        match connected.wait_timeout(Duration::from_millis(20)) {
            Ok(result) => break result.expect_err("no connection is made"),
            Err(pending) => connected = pending,
        }
        assert!(Instant::now() < deadline, "the connect timed out");
    };
    let io = IoError::of(&error).expect("an IO error");
    assert_eq!(
        (io.operation(), io.kind()),
        ("connect", std::io::ErrorKind::TimedOut)
    );
    let failed = done.wait_timeout(PATIENCE).expect("the flow ends");
    let io = IoError::of(&failed.unwrap_err()).map(|e| e.kind());
    assert_eq!(io, Some(std::io::ErrorKind::TimedOut));
    system.terminate().wait().unwrap();
}

#[test]
fn settings_apply_and_a_timely_connection_is_not_timed_out() {
    let rt = runtime();
    let (system, m) = system("tcp-settings");
    let (addr, server) = echo_server();
    let settings = weir_interop::ConnectionSettings::new()
        .with_connect_timeout(Duration::from_secs(60))
        .with_nodelay(true)
        .with_keep_alive(true);
    let echoed = Source::single(Bytes::from_static(b"quick"))
        .via(Tcp::outgoing_connection_with(rt.handle(), addr, settings))
        .run_with(concat(), &m);
    assert_eq!(
        echoed.wait_timeout(PATIENCE).expect("completes"),
        Ok(b"quick".to_vec())
    );
    assert_eq!(server.join().unwrap(), 5);
    system.terminate().wait().unwrap();
}

#[test]
fn unbinding_stops_accepting_while_open_connections_go_on() {
    let rt = runtime();
    let (system, m) = system("tcp-unbind");
    let handled = Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = Arc::clone(&handled);
    let server_mat = m.clone();
    let (bound, accepting) = Tcp::bind(rt.handle(), "127.0.0.1:0".parse().unwrap())
        .to_mat(
            Sink::for_each(move |connection: weir_interop::IncomingConnection| {
                let done = connection.handle_with(Flow::new(), &server_mat);
                record.lock().unwrap().push(done);
            }),
            Keep::both,
        )
        .run(&m);
    let binding = bound.wait_timeout(PATIENCE).expect("binds").unwrap();
    let mut open = std::net::TcpStream::connect(binding.local_addr).unwrap();
    open.write_all(b"before").unwrap();
    let mut answer = [0; 6];
    open.read_exact(&mut answer).unwrap();
    assert_eq!(&answer, b"before");

    assert_eq!(
        binding.unbind().wait_timeout(PATIENCE).expect("unbinds"),
        Ok(())
    );
    // The source of connections completes; no new connection is accepted.
    assert_eq!(accepting.wait_timeout(PATIENCE).expect("completes"), Ok(()));
    assert!(std::net::TcpStream::connect(binding.local_addr).is_err());
    // Unbinding again is fine.
    assert_eq!(
        binding.unbind().wait_timeout(PATIENCE).expect("unbound"),
        Ok(())
    );

    // The open connection still echoes, and ends when the client ends.
    open.write_all(b"after").unwrap();
    let mut answer = [0; 5];
    open.read_exact(&mut answer).unwrap();
    assert_eq!(&answer, b"after");
    open.shutdown(std::net::Shutdown::Write).unwrap();
    let done = handled.lock().unwrap().pop().expect("one connection");
    assert_eq!(done.wait_timeout(PATIENCE).expect("ends"), Ok(11));
    system.terminate().wait().unwrap();
}
