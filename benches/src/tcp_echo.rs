//! The TCP echo benchmark (`weir-bench io`, feature `peers`): `n`
//! messages of 1 KiB, each with a 4-byte big-endian length prefix, sent
//! over loopback to an echo server that decodes and re-encodes each
//! message, and counted back. Weir: `Tcp::outgoing_connection` with
//! `Framing::simple_framing_protocol_*` against a `Tcp::bind` server whose
//! handler is the decoder then the encoder. Tokio: the same wire format
//! with tokio_util's `LengthDelimitedCodec` on both ends. Both pipeline
//! as far as back-pressure lets them (no fixed in-flight window).

use std::net::SocketAddr;

use futures_util::{SinkExt, StreamExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::codec::{Framed, LengthDelimitedCodec};
use weir_interop::{IncomingConnection, Tcp};
use weir_streams::io::{Bytes, Framing};
use weir_streams::prelude::*;

/// The message size.
pub const MESSAGE: usize = 1024;
const MAX: u32 = 64 * 1024;

/// A two-worker tokio runtime for both sides.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_io()
        .build()
        .expect("a runtime")
}

/// A Weir echo server; its address.
pub fn weir_server(rt: &tokio::runtime::Runtime, mat: &Materializer) -> SocketAddr {
    let server_mat = mat.clone();
    Tcp::bind(rt.handle(), "127.0.0.1:0".parse().expect("an address"))
        .to(Sink::for_each(move |connection: IncomingConnection| {
            let handler = Framing::simple_framing_protocol_decoder(MAX)
                .via(Framing::simple_framing_protocol_encoder(MAX));
            // The connection runs on; its completion is not needed here.
            drop(connection.handle_with(handler, &server_mat));
        }))
        .run(mat)
        .wait()
        .expect("binds")
        .local_addr
}

/// `n` messages through a Weir client to `addr`; the messages echoed.
pub fn weir_client(
    rt: &tokio::runtime::Runtime,
    addr: SocketAddr,
    n: u64,
    mat: &Materializer,
) -> u64 {
    let message = Bytes::from(vec![7u8; MESSAGE]);
    Source::repeat(message)
        .take(n)
        .via(Framing::simple_framing_protocol_encoder(MAX))
        .via(Tcp::outgoing_connection(rt.handle(), addr))
        .via(Framing::simple_framing_protocol_decoder(MAX))
        .run_with(Sink::fold(0u64, |count, _| count + 1), mat)
        .wait()
        .expect("the echo completes")
}

/// A tokio echo server with `LengthDelimitedCodec`; its address.
pub fn tokio_server(rt: &tokio::runtime::Runtime) -> SocketAddr {
    let listener = rt
        .block_on(TcpListener::bind("127.0.0.1:0"))
        .expect("binds");
    let addr = listener.local_addr().expect("an address");
    rt.spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let (sink, stream) = Framed::new(socket, LengthDelimitedCodec::new()).split();
                // `forward` flushes whenever the input has nothing ready.
                let _ = stream
                    .map(|frame| frame.map(|f| f.freeze()))
                    .forward(sink)
                    .await;
            });
        }
    });
    addr
}

/// `n` messages through a tokio client to `addr`; the messages echoed.
pub fn tokio_client(rt: &tokio::runtime::Runtime, addr: SocketAddr, n: u64) -> u64 {
    rt.block_on(async move {
        let socket = TcpStream::connect(addr).await.expect("connects");
        let (mut sink, mut stream) = Framed::new(socket, LengthDelimitedCodec::new()).split();
        let writer = tokio::spawn(async move {
            let message = Bytes::from(vec![7u8; MESSAGE]);
            for _ in 0..n {
                sink.feed(message.clone()).await.expect("writes");
            }
            sink.close().await.expect("closes");
        });
        let mut count = 0;
        while let Some(frame) = stream.next().await {
            frame.expect("a frame");
            count += 1;
        }
        writer.await.expect("the writer ends");
        count
    })
}
