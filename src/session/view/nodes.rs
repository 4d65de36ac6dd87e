//! The nodes a session names: how each was reached (or why not) and the logs of the
//! commands started on it, folded from `node-connected`, the ssh capability rows and
//! `command-started`. The report and the session log show these rows.

use super::View;
use crate::session::event::Event;
use crate::session::journal::Record;

/// One node as the journal tells it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NodeRow {
    /// `user@host:port`; `None` while (or when) it was never reached.
    pub address: Option<String>,
    pub host_key: String,
    /// Why it could not be reached, as its ssh capability row said.
    pub unreachable: Option<String>,
    /// Log files of the commands started on it (stdout, then stderr, each once), as
    /// journaled.
    pub logs: Vec<String>,
}

impl View {
    pub(super) fn fold_nodes(&mut self, record: &Record) {
        match &record.event {
            Event::NodeConnected(n) => {
                let node = self.node_rows.entry(n.node.clone()).or_default();
                node.address = Some(format!("{}@{}:{}", n.user, n.hostname, n.port));
                node.host_key = n.fingerprints.join(", ");
                node.unreachable = None;
            }
            Event::Capability(c) if !c.present => {
                if let Some(name) = c
                    .capability
                    .strip_prefix("node:")
                    .and_then(|rest| rest.strip_suffix("/ssh"))
                {
                    self.node_rows
                        .entry(name.to_string())
                        .or_default()
                        .unreachable = Some(c.saw.clone());
                }
            }
            Event::CommandStarted(c) => {
                let Some(name) = &c.node else { return };
                let stdout = c.log.replace(".stderr.log", ".stdout.log");
                let node = self.node_rows.entry(name.clone()).or_default();
                for log in [stdout, c.log.clone()] {
                    if !node.logs.contains(&log) {
                        node.logs.push(log);
                    }
                }
            }
            _ => {}
        }
    }
}
