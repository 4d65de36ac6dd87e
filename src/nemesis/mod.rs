//! Fault kinds. Each fault is a resource with a lifetime: injected, observed from the
//! injector side, healed — and healed on drop if nobody healed it explicitly.

pub mod clock;
pub mod command;
pub mod disk;
pub mod docker;
pub mod landing;
pub mod net;
pub mod process;
pub mod proxy;
pub mod signal;

/// Calls `observe` every `every` until `done` holds for what it saw or `within`
/// passes; returns the last observation. Landing probes wait on a condition this way,
/// never on a fixed sleep.
pub async fn poll_until<T>(
    within: std::time::Duration,
    every: std::time::Duration,
    mut observe: impl FnMut() -> T,
    done: impl Fn(&T) -> bool,
) -> T {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let seen = observe();
        if done(&seen) || tokio::time::Instant::now() >= deadline {
            return seen;
        }
        tokio::time::sleep(every).await;
    }
}

/// The nemesis kinds a run spec can name (`references/nemesis.md` documents each).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Process,
    Command,
    Net,
    Disk,
    Clock,
    Proxy,
    Docker,
}

impl Kind {
    pub const ALL: [Kind; 7] = [
        Kind::Process,
        Kind::Command,
        Kind::Net,
        Kind::Disk,
        Kind::Clock,
        Kind::Proxy,
        Kind::Docker,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Process => "process",
            Kind::Command => "command",
            Kind::Net => "net",
            Kind::Disk => "disk",
            Kind::Clock => "clock",
            Kind::Proxy => "proxy",
            Kind::Docker => "docker",
        }
    }
}
