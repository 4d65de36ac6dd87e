//! The session engine's seams. The engine never knows a terminal exists: it asks an
//! [`operator::Operator`] whatever needs a human decision and journals the answer.

pub mod iteration;
pub mod operator;
pub mod outcome;
