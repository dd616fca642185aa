//! The async-handler PingPong on kameo and ractor (see
//! [`async_pingpong`](crate::async_pingpong) for Weir's side and the shape):
//! each `Ping` and `Pong` handler awaits the same [`Pause`] first, then
//! counts and answers, holding `&mut self` (kameo) or the state (ractor)
//! across the await as those frameworks allow.

use std::time::Duration;

use crate::akka_pingpong::{BURST, Load};
use crate::async_pingpong::{self, Await};

mod ractor_async {
    use ractor::{Actor, ActorProcessingErr, ActorRef};

    use super::{Await, BURST, Load};

    pub(super) enum ClientMsg {
        Run(ActorRef<EchoMsg>),
        Pong,
    }
    pub(super) enum EchoMsg {
        SetClient(ActorRef<ClientMsg>),
        Ping,
    }

    struct Echo(Await);
    impl Actor for Echo {
        type Msg = EchoMsg;
        type State = Option<ActorRef<ClientMsg>>;
        type Arguments = ();
        async fn pre_start(
            &self,
            _: ActorRef<EchoMsg>,
            _: (),
        ) -> Result<Self::State, ActorProcessingErr> {
            Ok(None)
        }
        async fn handle(
            &self,
            _: ActorRef<EchoMsg>,
            msg: EchoMsg,
            client: &mut Self::State,
        ) -> Result<(), ActorProcessingErr> {
            match msg {
                EchoMsg::SetClient(c) => *client = Some(c),
                EchoMsg::Ping => {
                    self.0.pause().await;
                    client.as_ref().expect("paired").cast(ClientMsg::Pong)?;
                }
            }
            Ok(())
        }
    }

    pub(super) struct ClientState {
        echo: Option<ActorRef<EchoMsg>>,
        share: u64,
        sent: u64,
        received: u64,
        done: tokio::sync::mpsc::UnboundedSender<()>,
    }

    struct Client(Await);
    impl Actor for Client {
        type Msg = ClientMsg;
        type State = ClientState;
        type Arguments = ClientState;
        async fn pre_start(
            &self,
            _: ActorRef<ClientMsg>,
            state: ClientState,
        ) -> Result<ClientState, ActorProcessingErr> {
            Ok(state)
        }
        async fn handle(
            &self,
            _: ActorRef<ClientMsg>,
            msg: ClientMsg,
            st: &mut ClientState,
        ) -> Result<(), ActorProcessingErr> {
            match msg {
                ClientMsg::Run(echo) => {
                    st.sent = BURST.min(st.share);
                    for _ in 0..st.sent {
                        echo.cast(EchoMsg::Ping)?;
                    }
                    st.echo = Some(echo);
                }
                ClientMsg::Pong => {
                    self.0.pause().await;
                    st.received += 1;
                    if st.sent < st.share {
                        st.sent += 1;
                        st.echo.as_ref().expect("running").cast(EchoMsg::Ping)?;
                    }
                    if st.received == st.share {
                        let _ = st.done.send(());
                    }
                }
            }
            Ok(())
        }
    }

    pub(super) async fn run(load: Load, wait: Await) -> std::time::Duration {
        let (done, mut finished) = tokio::sync::mpsc::unbounded_channel();
        let mut pairs = Vec::new();
        for _ in 0..load.pairs {
            let state = ClientState {
                echo: None,
                share: load.share(),
                sent: 0,
                received: 0,
                done: done.clone(),
            };
            let (client, _) = Actor::spawn(None, Client(wait), state)
                .await
                .expect("spawn");
            let (echo, _) = Actor::spawn(None, Echo(wait), ()).await.expect("spawn");
            echo.cast(EchoMsg::SetClient(client.clone()))
                .expect("alive");
            pairs.push((client, echo));
        }
        let start = std::time::Instant::now();
        for (client, echo) in &pairs {
            client.cast(ClientMsg::Run(echo.clone())).expect("alive");
        }
        for _ in 0..load.pairs {
            finished.recv().await.expect("every client finishes");
        }
        let elapsed = start.elapsed();
        for (client, echo) in pairs {
            client.stop(None);
            echo.stop(None);
        }
        elapsed
    }
}

mod kameo_async {
    use kameo::error::Infallible;
    use kameo::prelude::*;

    use super::{Await, BURST, Load};

    pub(super) struct Echo {
        client: Option<ActorRef<Client>>,
        wait: Await,
    }
    impl Actor for Echo {
        type Args = Self;
        type Error = Infallible;
        async fn on_start(state: Self, _: ActorRef<Self>) -> Result<Self, Infallible> {
            Ok(state)
        }
    }

    pub(super) struct Client {
        echo: Option<ActorRef<Echo>>,
        wait: Await,
        share: u64,
        sent: u64,
        received: u64,
        done: tokio::sync::mpsc::UnboundedSender<()>,
    }
    impl Actor for Client {
        type Args = Self;
        type Error = Infallible;
        async fn on_start(state: Self, _: ActorRef<Self>) -> Result<Self, Infallible> {
            Ok(state)
        }
    }

    pub(super) struct SetClient(ActorRef<Client>);
    pub(super) struct Ping;
    pub(super) struct Pong;
    pub(super) struct Run(ActorRef<Echo>);

    impl Message<SetClient> for Echo {
        type Reply = ();
        async fn handle(&mut self, msg: SetClient, _: &mut Context<Self, ()>) {
            self.client = Some(msg.0);
        }
    }
    impl Message<Ping> for Echo {
        type Reply = ();
        async fn handle(&mut self, _: Ping, _: &mut Context<Self, ()>) {
            self.wait.pause().await;
            let _ = self.client.as_ref().expect("paired").tell(Pong).try_send();
        }
    }
    impl Message<Run> for Client {
        type Reply = ();
        async fn handle(&mut self, msg: Run, _: &mut Context<Self, ()>) {
            self.sent = BURST.min(self.share);
            for _ in 0..self.sent {
                let _ = msg.0.tell(Ping).try_send();
            }
            self.echo = Some(msg.0);
        }
    }
    impl Message<Pong> for Client {
        type Reply = ();
        async fn handle(&mut self, _: Pong, _: &mut Context<Self, ()>) {
            self.wait.pause().await;
            self.received += 1;
            if self.sent < self.share {
                self.sent += 1;
                let _ = self.echo.as_ref().expect("running").tell(Ping).try_send();
            }
            if self.received == self.share {
                let _ = self.done.send(());
            }
        }
    }

    pub(super) async fn run(load: Load, wait: Await) -> std::time::Duration {
        let (done, mut finished) = tokio::sync::mpsc::unbounded_channel();
        let mut pairs = Vec::new();
        for _ in 0..load.pairs {
            let client = Client {
                echo: None,
                wait,
                share: load.share(),
                sent: 0,
                received: 0,
                done: done.clone(),
            };
            // Unbounded mailboxes: no back-pressure, as in the sync rows.
            let client = Client::spawn_with_mailbox(client, mailbox::unbounded());
            let echo = Echo::spawn_with_mailbox(Echo { client: None, wait }, mailbox::unbounded());
            let _ = echo.tell(SetClient(client.clone())).try_send();
            pairs.push((client, echo));
        }
        let start = std::time::Instant::now();
        for (client, echo) in &pairs {
            let _ = client.tell(Run(echo.clone())).try_send();
        }
        for _ in 0..load.pairs {
            finished.recv().await.expect("every client finishes");
        }
        let elapsed = start.elapsed();
        for (client, echo) in pairs {
            client.kill();
            echo.kill();
        }
        elapsed
    }
}

type Runner = Box<dyn Fn(Load, Await) -> Duration>;

/// The rows, each a framework in one configuration; the first word of a
/// name is its framework (the summary takes each framework's best row).
fn runners() -> Vec<(&'static str, Runner)> {
    let tokio = super::imp::tokio_rt;
    vec![
        (
            "weir, default settings (2 threads here)",
            Box::new(|l, w| async_pingpong::weir(l, w, None)),
        ),
        (
            "weir, 1 thread",
            Box::new(|l, w| async_pingpong::weir(l, w, Some(1))),
        ),
        (
            "ractor 0.16, tokio 1 worker",
            Box::new(move |l, w| tokio(1).block_on(ractor_async::run(l, w))),
        ),
        (
            "ractor 0.16, tokio 2 workers",
            Box::new(move |l, w| tokio(2).block_on(ractor_async::run(l, w))),
        ),
        (
            "kameo 0.22, tokio 1 worker",
            Box::new(move |l, w| tokio(1).block_on(kameo_async::run(l, w))),
        ),
        (
            "kameo 0.22, tokio 2 workers",
            Box::new(move |l, w| tokio(2).block_on(kameo_async::run(l, w))),
        ),
    ]
}

/// The async-handler tables: for 1 pair and one pair per core, for each
/// [`Await`], every row's median rate and Weir's best against each
/// framework's best, all from the same interleaved runs.
///
/// `rows` keeps the rows whose name contains it and `waits` the futures to
/// await (both to count one row's instructions under callgrind).
pub(super) fn run(messages: u64, runs: usize, rows: Option<&str>, waits: &[Await]) {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let mut runners = runners();
    if let Some(text) = rows {
        runners.retain(|(name, _)| name.contains(text));
    }
    for pairs in [1, cores] {
        for &wait in waits {
            let load = Load { pairs, messages };
            let medians = crate::interleaved_medians(runs, runners.len(), |i| {
                load.total() as f64 / (runners[i].1)(load, wait).as_secs_f64()
            });
            println!(
                "\nAsync-handler PingPong, each handler awaiting {}: {pairs} pair(s), {} messages, burst {BURST}, median of {runs} interleaved runs:",
                wait.label(),
                load.total()
            );
            println!("{:<42} {:>14}", "framework", "msgs/s");
            for (i, (name, _)) in runners.iter().enumerate() {
                println!("{name:<42} {:>14.0}", medians[i]);
            }
            let best = |framework: &str| {
                runners
                    .iter()
                    .zip(&medians)
                    .filter(|((name, _), _)| name.starts_with(framework))
                    .map(|(_, &rate)| rate)
                    .fold(0.0, f64::max)
            };
            let weir = best("weir");
            for peer in ["ractor", "kameo"].into_iter().filter(|&p| best(p) > 0.0) {
                println!(
                    "best weir / best {peer:<7} {:>8.2}x  (target >= 3x)",
                    weir / best(peer)
                );
            }
        }
    }
}
