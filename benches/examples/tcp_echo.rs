//! A TCP echo server and its clients, both made of Weir streams on tokio's
//! network IO (`weir_interop::Tcp`, feature `tokio`).
//!
//! - The server: `Tcp::bind` is a source of incoming connections; each is
//!   handled by a flow (`IncomingConnection::handle_with`) that cuts what
//!   it reads into lines (`Framing::delimiter`) and answers each line.
//!   Mapping every connection to its handler's completion and collecting
//!   them gives, once the server is unbound, how each connection ended.
//! - The clients: `Tcp::outgoing_connection` is a flow: bytes in are
//!   written, bytes read come out. Each client sends its lines in chunks
//!   that cut lines in two (TCP has no message boundaries; the framing on
//!   both sides puts the lines back together), then completes, which
//!   half-closes its connection; the server's handler completes in turn.
//!
//! tokio only drives the sockets (its runtime needs IO enabled and must
//! outlive the streams); the stages run on Weir's threads.
//!
//! Run with `cargo run --release -p weir-benches --features tokio --example tcp_echo`.

use std::net::SocketAddr;

use weir_interop::{IncomingConnection, Tcp};
use weir_streams::io::{Bytes, Framing};
use weir_streams::prelude::*;

/// The server's handler for one connection: a line in, an answer out.
fn answer_lines() -> Flow<Bytes, Bytes> {
    Flow::new()
        .via(Framing::delimiter(b"\n", 1024, true).expect("a non-empty delimiter"))
        .map(|line: Bytes| {
            let line = String::from_utf8_lossy(&line);
            Bytes::from(format!("echo: {line}\n"))
        })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_io()
        .build()?;
    let system = weir_actor::ActorSystem::new("tcp-echo")?;
    let materializer = Materializer::new(&system);

    // The server: every accepted connection runs `answer_lines` on its own
    // stream; the completions are collected until the server is unbound.
    let server_materializer = materializer.clone();
    let (bound, handled) = Tcp::bind(runtime.handle(), "127.0.0.1:0".parse()?)
        .map(move |connection: IncomingConnection| {
            println!("server: connection from {}", connection.remote_addr);
            connection.handle_with(answer_lines(), &server_materializer)
        })
        .to_mat(Sink::collect(), Keep::both)
        .run(&materializer);
    let binding = bound.wait()?;
    let addr: SocketAddr = binding.local_addr;
    println!("server: listening on {addr}");

    // Three clients at once, each sending its lines in awkward chunks.
    let clients: Vec<_> = (1..=3)
        .map(|client| {
            let text = format!("hello from client {client}\nhow are you?\nbye {client}\n");
            let chunks: Vec<Bytes> = text
                .as_bytes()
                .chunks(7)
                .map(Bytes::copy_from_slice)
                .collect();
            Source::from_iter(chunks)
                .via(Tcp::outgoing_connection(runtime.handle(), addr))
                .via(Framing::delimiter(b"\n", 1024, true).expect("a non-empty delimiter"))
                .map(|line: Bytes| String::from_utf8_lossy(&line).into_owned())
                .run_with(Sink::collect(), &materializer)
        })
        .collect();
    for (client, answers) in (1..=3).zip(clients) {
        for line in answers.wait()? {
            println!("client {client} got: {line}");
        }
    }

    // Stop accepting; the source of connections completes and hands over
    // the handlers' completions: each says how many bytes it wrote back.
    binding.unbind().wait()?;
    for done in handled.wait()? {
        println!(
            "server: a connection ended after writing {} bytes",
            done.wait()?
        );
    }
    system.terminate().wait()?;
    Ok(())
}
