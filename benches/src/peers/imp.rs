//! The peer implementations (see the parent module).

use std::time::Duration;

use crate::akka_pingpong::{self, BURST, Load};
use crate::async_pingpong::Await;

mod actix_pp {
    use actix::prelude::*;

    use super::{BURST, Load};

    #[derive(Message)]
    #[rtype(result = "()")]
    struct Ping;

    #[derive(Message)]
    #[rtype(result = "()")]
    struct Pong;

    #[derive(Message)]
    #[rtype(result = "()")]
    struct Run(Addr<Echo>);

    #[derive(Message)]
    #[rtype(result = "()")]
    struct SetClient(Addr<Client>);

    struct Echo {
        client: Option<Addr<Client>>,
    }
    impl Actor for Echo {
        type Context = Context<Self>;
    }
    impl Handler<SetClient> for Echo {
        type Result = ();
        fn handle(&mut self, msg: SetClient, _: &mut Context<Self>) {
            self.client = Some(msg.0);
        }
    }
    impl Handler<Ping> for Echo {
        type Result = ();
        fn handle(&mut self, _: Ping, _: &mut Context<Self>) {
            self.client.as_ref().expect("paired").do_send(Pong);
        }
    }

    struct Client {
        echo: Option<Addr<Echo>>,
        share: u64,
        sent: u64,
        received: u64,
        done: tokio::sync::mpsc::UnboundedSender<()>,
    }
    impl Actor for Client {
        type Context = Context<Self>;
    }
    impl Handler<Run> for Client {
        type Result = ();
        fn handle(&mut self, msg: Run, _: &mut Context<Self>) {
            self.sent = BURST.min(self.share);
            for _ in 0..self.sent {
                msg.0.do_send(Ping);
            }
            self.echo = Some(msg.0);
        }
    }
    impl Handler<Pong> for Client {
        type Result = ();
        fn handle(&mut self, _: Pong, _: &mut Context<Self>) {
            self.received += 1;
            if self.sent < self.share {
                self.sent += 1;
                self.echo.as_ref().expect("running").do_send(Ping);
            }
            if self.received == self.share {
                let _ = self.done.send(());
            }
        }
    }

    /// On `arbiters` arbiter threads (1: everything on the system's own).
    pub(super) fn run(load: Load, arbiters: usize) -> std::time::Duration {
        let system = actix::System::new();
        let elapsed = system.block_on(async move {
            let extra: Vec<Arbiter> = (1..arbiters).map(|_| Arbiter::new()).collect();
            let (done, mut finished) = tokio::sync::mpsc::unbounded_channel();
            let mut pairs = Vec::new();
            for i in 0..load.pairs {
                let d = done.clone();
                let share = load.share();
                let client = Client {
                    echo: None,
                    share,
                    sent: 0,
                    received: 0,
                    done: d,
                };
                let client = match extra.get(i % arbiters.max(1)).filter(|_| arbiters > 1) {
                    Some(a) => Client::start_in_arbiter(&a.handle(), move |_| client),
                    None => client.start(),
                };
                let echo = Echo {
                    client: Some(client.clone()),
                };
                let echo = match extra
                    .get((i + 1) % arbiters.max(1))
                    .filter(|_| arbiters > 1)
                {
                    Some(a) => Echo::start_in_arbiter(&a.handle(), move |_| echo),
                    None => echo.start(),
                };
                echo.do_send(SetClient(client.clone()));
                pairs.push((client, echo));
            }
            let start = std::time::Instant::now();
            for (client, echo) in &pairs {
                client.do_send(Run(echo.clone()));
            }
            for _ in 0..load.pairs {
                finished.recv().await.expect("every client finishes");
            }
            let elapsed = start.elapsed();
            for a in extra {
                a.stop();
            }
            elapsed
        });
        System::current().stop();
        let _ = system.run();
        elapsed
    }
}

mod ractor_pp {
    use ractor::{Actor, ActorProcessingErr, ActorRef};

    use super::{BURST, Load};

    pub(super) enum ClientMsg {
        Run(ActorRef<EchoMsg>),
        Pong,
    }
    pub(super) enum EchoMsg {
        SetClient(ActorRef<ClientMsg>),
        Ping,
    }

    struct Echo;
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
                EchoMsg::Ping => client.as_ref().expect("paired").cast(ClientMsg::Pong)?,
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

    struct Client;
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

    pub(super) async fn run(load: Load) -> std::time::Duration {
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
            let (client, _) = Actor::spawn(None, Client, state).await.expect("spawn");
            let (echo, _) = Actor::spawn(None, Echo, ()).await.expect("spawn");
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

mod kameo_pp {
    use kameo::error::Infallible;
    use kameo::prelude::*;

    use super::{BURST, Load};

    pub(super) struct Echo {
        client: Option<ActorRef<Client>>,
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

    pub(super) async fn run(load: Load) -> std::time::Duration {
        let (done, mut finished) = tokio::sync::mpsc::unbounded_channel();
        let mut pairs = Vec::new();
        for _ in 0..load.pairs {
            let client = Client {
                echo: None,
                share: load.share(),
                sent: 0,
                received: 0,
                done: done.clone(),
            };
            // Unbounded mailboxes: no back-pressure, like the other frameworks here.
            let client = Client::spawn_with_mailbox(client, mailbox::unbounded());
            let echo = Echo::spawn_with_mailbox(Echo { client: None }, mailbox::unbounded());
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

pub(super) fn tokio_rt(workers: usize) -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .expect("tokio runtime")
}

type Runner = Box<dyn Fn(Load) -> Duration>;

fn runners() -> Vec<(&'static str, Runner)> {
    vec![
        (
            "weir, default settings (2 threads here)",
            Box::new(|l| akka_pingpong::weir(l, None, None).elapsed),
        ),
        (
            "weir, 1 thread",
            Box::new(|l| akka_pingpong::weir(l, None, Some(1)).elapsed),
        ),
        ("actix 0.13, 1 arbiter", Box::new(|l| actix_pp::run(l, 1))),
        ("actix 0.13, 2 arbiters", Box::new(|l| actix_pp::run(l, 2))),
        (
            "ractor 0.16, tokio 1 worker",
            Box::new(|l| tokio_rt(1).block_on(ractor_pp::run(l))),
        ),
        (
            "ractor 0.16, tokio 2 workers",
            Box::new(|l| tokio_rt(2).block_on(ractor_pp::run(l))),
        ),
        (
            "kameo 0.22, tokio 1 worker",
            Box::new(|l| tokio_rt(1).block_on(kameo_pp::run(l))),
        ),
        (
            "kameo 0.22, tokio 2 workers",
            Box::new(|l| tokio_rt(2).block_on(kameo_pp::run(l))),
        ),
    ]
}

fn arg(args: &[String], flag: &str) -> Option<u64> {
    let i = args.iter().position(|a| a == flag)?;
    args.get(i + 1)?.replace('_', "").parse().ok()
}

pub(super) fn run(args: &[String]) {
    let messages = arg(args, "--messages").unwrap_or(2_000_000);
    let async_messages = arg(args, "--async-messages").unwrap_or(1_000_000);
    let runs = arg(args, "--runs").unwrap_or(5).max(1) as usize;
    let only = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1))
        .map(String::as_str);
    if only != Some("async") {
        sync_tables(messages, runs);
    }
    if only != Some("sync") {
        let text = |flag: &str| {
            let i = args.iter().position(|a| a == flag)?;
            args.get(i + 1).map(String::as_str)
        };
        let waits = match text("--await") {
            Some("ready") => vec![Await::Ready],
            Some("yield-once") => vec![Await::YieldOnce],
            _ => vec![Await::Ready, Await::YieldOnce],
        };
        super::async_imp::run(async_messages, runs, text("--rows"), &waits);
    }
}

fn sync_tables(messages: u64, runs: usize) {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let runners = runners();
    for pairs in [1, cores] {
        let load = Load { pairs, messages };
        let medians = crate::interleaved_medians(runs, runners.len(), |i| {
            load.total() as f64 / (runners[i].1)(load).as_secs_f64()
        });
        println!(
            "\nPingPong, {pairs} pair(s), {} messages, burst {BURST}, median of {runs} interleaved runs:",
            load.total()
        );
        println!("{:<42} {:>14} {:>14}", "framework", "msgs/s", "weir / this");
        for (i, (name, _)) in runners.iter().enumerate() {
            println!(
                "{name:<42} {:>14.0} {:>14.2}",
                medians[i],
                medians[0] / medians[i]
            );
        }
    }
}
