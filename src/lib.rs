//! faultline: executes distributed-system test plans and refuses any green result
//! that nobody proved (workload ran, fault landed, oracle could tell PASS from FAIL).
//!
//! The engine never touches a terminal; front ends talk to it through the
//! [`engine::Operator`] seam and the journal's event stream.

pub mod oracle;
pub mod plan;
pub mod verdict;

#[path = "../examples/demo/sut/mod.rs"]
pub mod demo_sut;
