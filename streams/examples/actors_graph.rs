//! Actors feeding a stream and fed by it, at the pace of the slowest, with
//! a broadcast, a restarting source and a kill switch.
//!
//! - A `Sensor` actor produces readings into
//!   `Source::actor_ref_with_backpressure`: it sends the next reading only
//!   when the stream acknowledges the previous one, so it can never run
//!   ahead of the stream.
//! - Its "connection" drops every few readings (it fails its source).
//!   `RestartSource::on_failures_with_backoff` runs a fresh source after a
//!   backoff; each new source is handed to the sensor when it
//!   materializes (`map_materialized_value`), so the sensor reconnects.
//! - `also_to` broadcasts every reading to a `Dashboard` actor, through
//!   `Sink::actor_ref_with_backpressure` (the dashboard acknowledges each
//!   one before it gets the next), and to a `fold` computing statistics.
//! - A `SharedKillSwitch`, held by the dashboard, ends the stream when the
//!   dashboard has seen enough: the restarting source is cancelled, both
//!   branches complete.
//!
//! Run with `cargo run --release --example actors_graph`.

use std::time::Duration;

use weir_actor::{Actor, ActorRef, ActorSystem, Context, Props};
use weir_streams::prelude::*;
use weir_streams::{
    ActorRefSource, KillSwitches, RestartSettings, RestartSource, SharedKillSwitch,
};

/// How many readings a sensor connection carries before it drops.
const READINGS_PER_CONNECTION: u64 = 5;
/// How many readings the dashboard wants before it stops the stream.
const WANTED: u64 = 12;

#[derive(Clone, Copy, Debug)]
struct Reading {
    connection: u32,
    seq: u64,
    celsius: f64,
}

/// The sensor's messages: a fresh source to feed (after each restart),
/// and the stream's acknowledgement of the last reading.
#[derive(Clone)]
enum SensorMsg {
    Attach(ActorRefSource<Reading>),
    Ack,
}

struct Sensor {
    source: Option<ActorRefSource<Reading>>,
    connection: u32,
    sent_on_connection: u64,
    seq: u64,
}

impl Sensor {
    /// Send the next reading, or drop the connection when it has carried
    /// its share.
    fn send_next(&mut self) {
        let Some(source) = &self.source else { return };
        if self.sent_on_connection == READINGS_PER_CONNECTION {
            println!(
                "sensor: connection {} dropped after {READINGS_PER_CONNECTION} readings",
                self.connection
            );
            source.fail(StreamError::msg("sensor connection dropped"));
            self.source = None;
            return;
        }
        self.seq += 1;
        self.sent_on_connection += 1;
        source.tell(Reading {
            connection: self.connection,
            seq: self.seq,
            celsius: 20.0 + (self.seq % 7) as f64 * 0.5,
        });
    }
}

impl Actor for Sensor {
    type Msg = SensorMsg;

    fn receive(&mut self, _ctx: &mut Context<Self>, msg: SensorMsg) {
        match msg {
            SensorMsg::Attach(source) => {
                self.connection += 1;
                self.sent_on_connection = 0;
                println!("sensor: connection {} attached", self.connection);
                self.source = Some(source);
                self.send_next();
            }
            // The previous reading went downstream: the stream wants more.
            SensorMsg::Ack => self.send_next(),
        }
    }
}

/// The dashboard's messages, as `Sink::actor_ref_with_backpressure` sends
/// them: each carries where to acknowledge.
#[derive(Clone)]
enum DashboardMsg {
    Init(ActorRef<()>),
    Reading(Reading, ActorRef<()>),
    Completed,
    Failed(String),
}

struct Dashboard {
    seen: u64,
    switch: SharedKillSwitch,
    /// Told how many readings it saw, when the stream has ended.
    done: std::sync::mpsc::Sender<u64>,
}

impl Actor for Dashboard {
    type Msg = DashboardMsg;

    fn receive(&mut self, _ctx: &mut Context<Self>, msg: DashboardMsg) {
        match msg {
            DashboardMsg::Init(ack) => ack.tell(()),
            DashboardMsg::Reading(reading, ack) => {
                self.seen += 1;
                println!(
                    "dashboard: reading {:>2} (connection {}) {:.1} °C",
                    reading.seq, reading.connection, reading.celsius
                );
                if self.seen == WANTED {
                    println!("dashboard: seen {WANTED} readings, pulling the kill switch");
                    self.switch.shutdown();
                }
                ack.tell(()); // ready for the next one
            }
            DashboardMsg::Completed => {
                println!("dashboard: the stream completed");
                let _ = self.done.send(self.seen);
            }
            DashboardMsg::Failed(error) => {
                println!("dashboard: the stream failed: {error}");
                let _ = self.done.send(self.seen);
            }
        }
    }
}

/// What the statistics branch folds the readings into.
#[derive(Clone, Debug, Default)]
struct Stats {
    count: u64,
    sum: f64,
    max: f64,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let system = ActorSystem::new("actors-graph")?;
    let materializer = Materializer::new(&system);

    let switch = KillSwitches::shared("sensor-feed");
    let sensor = system.spawn(
        Props::new(|| Sensor {
            source: None,
            connection: 0,
            sent_on_connection: 0,
            seq: 0,
        }),
        "sensor",
    )?;
    let dashboard_switch = switch.clone();
    let (done, dashboard_done) = std::sync::mpsc::channel();
    let dashboard = system.spawn(
        Props::new(move || Dashboard {
            seen: 0,
            switch: dashboard_switch.clone(),
            done: done.clone(),
        }),
        "dashboard",
    )?;

    // A fresh back-pressured source for each (re)start, handed to the
    // sensor as it materializes.
    let settings =
        RestartSettings::new(Duration::from_millis(10), Duration::from_millis(100), 0.2)?;
    let readings = RestartSource::on_failures_with_backoff(settings, move || {
        let attach_to = sensor.clone();
        Source::actor_ref_with_backpressure(sensor.clone(), SensorMsg::Ack)
            .map_materialized_value(move |source| attach_to.tell(SensorMsg::Attach(source)))
    });

    let to_dashboard = Sink::actor_ref_with_backpressure(
        dashboard,
        DashboardMsg::Init,
        DashboardMsg::Reading,
        DashboardMsg::Completed,
        |error: StreamError| DashboardMsg::Failed(error.to_string()),
    );
    let stats = Sink::fold(Stats::default(), |mut stats: Stats, reading: Reading| {
        stats.count += 1;
        stats.sum += reading.celsius;
        stats.max = stats.max.max(reading.celsius);
        stats
    });

    let (restarts, stats) = readings
        .via(switch.flow())
        .also_to(to_dashboard) // the broadcast: every reading to both sinks
        .to_mat(stats, Keep::both)
        .run(&materializer);

    let stats = stats.wait()?;
    let seen = dashboard_done.recv_timeout(Duration::from_secs(10))?;
    println!("dashboard: saw {seen} readings");
    println!(
        "statistics: {} readings, mean {:.2} °C, max {:.1} °C; the source restarted {} times",
        stats.count,
        stats.sum / stats.count as f64,
        stats.max,
        restarts.count()
    );
    system.terminate().wait()?;
    Ok(())
}
