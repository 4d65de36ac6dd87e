//! Fault kinds. Each fault is a resource with a lifetime: injected, observed from the
//! injector side, healed — and healed on drop if nobody healed it explicitly.

pub mod command;
pub mod landing;
pub mod net;
pub mod process;

/// The nemesis kinds a run spec can name (`references/nemesis.md` documents each).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Process,
    Command,
    Net,
}

impl Kind {
    pub const ALL: [Kind; 3] = [Kind::Process, Kind::Command, Kind::Net];

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Process => "process",
            Kind::Command => "command",
            Kind::Net => "net",
        }
    }
}
