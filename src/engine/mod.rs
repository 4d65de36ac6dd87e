//! The session engine. It never knows a terminal exists: it asks an
//! [`crate::session::operator::Operator`] whatever needs a human decision and journals the answer.

pub mod anomalies;
pub mod artifacts;
pub mod audit;
pub mod authoring;
pub mod driver;
pub mod iteration;
pub mod nodes;
pub mod outputs;
pub mod preflight;
pub mod privileged;
pub mod reduce;
pub mod reproducer;
pub mod request;
pub mod scenario;
