//! Which seeds a test runs: one to replay, or a sweep.

use super::{SimError, Simulation, SimulationBuilder};

/// Set to one seed (decimal, or hexadecimal after `0x`) to replay exactly
/// that run: [`seeds`] then gives only it.
pub const SEED_VAR: &str = "WEIR_SEED";

/// Set to a count to sweep that many seeds instead of a test's default.
pub const SEEDS_VAR: &str = "WEIR_SEEDS";

/// The seeds a simulated test runs: the one in `WEIR_SEED` when set (a
/// replay), otherwise `0..n` with `n` from `WEIR_SEEDS`, or
/// `default_count` when that is not set either.
///
/// # Panics
///
/// When either variable is set but is not a number: a replay that
/// silently ran other seeds would mislead.
///
/// # Examples
///
/// ```
/// // Without WEIR_SEED or WEIR_SEEDS in the environment:
/// # if std::env::var_os("WEIR_SEED").is_none() && std::env::var_os("WEIR_SEEDS").is_none() {
/// assert_eq!(weir_actor::sim::seeds(3), vec![0, 1, 2]);
/// # }
/// ```
pub fn seeds(default_count: u64) -> Vec<u64> {
    if let Some(seed) = var(SEED_VAR) {
        return vec![seed];
    }
    (0..var(SEEDS_VAR).unwrap_or(default_count)).collect()
}

fn var(name: &str) -> Option<u64> {
    let value = std::env::var(name).ok()?;
    let value = value.trim();
    let parsed = match value.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => value.parse(),
    };
    Some(parsed.unwrap_or_else(|_| panic!("{name}={value:?} is not a number")))
}

impl Simulation {
    /// Run `scenario` once per seed of [`seeds(default_count)`](seeds),
    /// each in a fresh simulation with default settings, then terminate
    /// its system and check that it terminates. A failing seed is printed
    /// with the command that replays it.
    ///
    /// # Panics
    ///
    /// When `scenario` panics, or a system does not terminate.
    ///
    /// # Examples
    ///
    /// ```
    /// use weir_actor::sim::Simulation;
    /// use weir_actor::{Actor, Context, Props};
    ///
    /// struct Echo;
    /// impl Actor for Echo {
    ///     type Msg = weir_actor::ActorRef<u32>;
    ///     fn receive(&mut self, _: &mut Context<Self>, to: Self::Msg) {
    ///         to.tell(7);
    ///     }
    /// }
    ///
    /// Simulation::sweep(20, |sim| {
    ///     let echo = sim.system().spawn(Props::new(|| Echo), "echo").unwrap();
    ///     let reply = weir_actor::ask(&echo, |to| to, std::time::Duration::from_secs(1));
    ///     assert_eq!(reply.wait(), Ok(7));
    /// });
    /// ```
    pub fn sweep(default_count: u64, scenario: impl FnMut(&Simulation)) {
        Self::sweep_with(default_count, Simulation::builder, scenario);
    }

    /// [`sweep`](Self::sweep) with simulations made by `builder` from
    /// each seed (settings, trace, faults).
    ///
    /// # Panics
    ///
    /// As [`sweep`](Self::sweep), and when a simulation cannot be built.
    pub fn sweep_with(
        default_count: u64,
        builder: impl Fn(u64) -> SimulationBuilder,
        mut scenario: impl FnMut(&Simulation),
    ) {
        for seed in seeds(default_count) {
            let sim = builder(seed)
                .build()
                .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
            scenario(&sim);
            if let Err(e) = sim.shutdown() {
                match e {
                    SimError::Quiet { .. } | SimError::StepLimit { .. } => {
                        panic!("the system did not terminate: {e} (replay with {SEED_VAR}={seed})")
                    }
                    other => panic!("{other}"),
                }
            }
        }
    }
}
